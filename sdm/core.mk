# SPDX-License-Identifier: GPL-2.0
#
# SDM core: id sets, messages and their wire format, binomial routing,
# aggregation, authentication and authenticated frames, built into
# $(B)/sdm/libsdmcore.a.
# No I/O lives here (the transport and executables are in sdm/net.mk).
#
# Users link with:  $(LIB_SDMCORE) $(SDM_CORE_LIBS)  and compile with
# $(SDM_CFLAGS) (USR_CFLAGS plus -Isdm/include).

SDM_CFLAGS    := $(USR_CFLAGS) -Isdm/include
SDM_CORE_LIBS := -lcrypto	# HMAC, HKDF (auth.c, link.c)
SDM_CORE_SRCS := sdm/idset.c sdm/message.c sdm/route.c sdm/aggregate.c sdm/auth.c \
		 sdm/link.c
SDM_CORE_OBJS := $(SDM_CORE_SRCS:%.c=$(B)/%.o)

$(SDM_CORE_OBJS): $(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(SDM_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB_SDMCORE): $(SDM_CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	rm -f $@ && $(AR) rcs $@ $^

# Host tests (kselftest harness).
SDM_CORE_TESTS := $(addprefix $(B)/tests/sdm/test_,\
		  idset message route aggregate auth link fuzz_smoke)

$(SDM_CORE_TESTS): $(B)/tests/sdm/%: tests/sdm/%.c $(LIB_SDMCORE)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Isdm/include -MMD -MP -DSDM_FUZZ_DIR=\"$(B)/tests/fuzz\" -o $@ $< \
		$(LIB_SDMCORE) $(SDM_CORE_LIBS)

# Id-set benchmark: prints a Markdown section for Documentation/performance.md.
SDM_CORE_BENCH := $(B)/sdm/bench_idset

$(SDM_CORE_BENCH): $(B)/%: %.c $(LIB_SDMCORE)
	@mkdir -p $(dir $@)
	$(CC) $(SDM_CFLAGS) -MMD -MP -o $@ $< $(LIB_SDMCORE) $(SDM_CORE_LIBS)

# libFuzzer targets for the three decoders, built with clang from the
# sources directly so the library is instrumented too. `make fuzz` runs
# them for FUZZ_SECONDS; test_fuzz_smoke runs each for a fixed number of
# inputs in `make check` (and skips, saying so, when clang is missing).
SDM_CORE_FUZZERS := $(addprefix $(B)/tests/fuzz/sdm_fuzz_,frame message idset)

SDM_CORE_HDRS := $(addprefix sdm/include/sdm/,common.h idset.h message.h route.h aggregate.h auth.h link.h)

$(SDM_CORE_FUZZERS): $(B)/tests/fuzz/%: tests/fuzz/%.c $(SDM_CORE_SRCS) $(SDM_CORE_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Isdm/include -o $@ $< $(SDM_CORE_SRCS) $(SDM_CORE_LIBS)

# crdbg links the SDM's front end (usr/cli/cli.mk reads CLI_LDLIBS when it links).
CLI_LDLIBS   += $(SDM_CORE_LIBS)

ALL_TARGETS  += $(LIB_SDMCORE) $(SDM_CORE_TESTS) $(SDM_CORE_BENCH)
ifneq ($(FUZZ_CC_FOUND),)
ALL_TARGETS  += $(SDM_CORE_FUZZERS)
endif
HOST_TESTS   += $(SDM_CORE_TESTS)
BENCH_CMDS   += $(SDM_CORE_BENCH)
FUZZ_TARGETS += $(SDM_CORE_FUZZERS)

-include $(SDM_CORE_OBJS:.o=.d) $(SDM_CORE_TESTS:=.d) $(SDM_CORE_BENCH:=.d)
