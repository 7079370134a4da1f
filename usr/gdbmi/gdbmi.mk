# SPDX-License-Identifier: GPL-2.0
# GDB/MI parser and driver ($(B)/usr/libgdbmi.a), their host tests and
# the parser's libFuzzer target.

GDBMI_SRCS := usr/gdbmi/mi-parse.c usr/gdbmi/mi-driver.c usr/gdbmi/mi-pump.c \
	      usr/gdbmi/mi-spawn.c usr/gdbmi/mi-commands.c usr/gdbmi/mi-index-cache.c
GDBMI_OBJS := $(GDBMI_SRCS:%.c=$(B)/%.o)
GDBMI_TDIR := $(B)/tests/gdbmi
# kselftest_harness.h trips -Wextra's unused-parameter and sign-compare.
GDBMI_TEST_CFLAGS := $(TEST_CFLAGS) -Itests/gdbmi

$(LIB_GDBMI): $(GDBMI_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	rm -f $@ && $(AR) rcs $@ $^

# Parser unit tests.
$(GDBMI_TDIR)/test_mi_parse: tests/gdbmi/test_mi_parse.c $(LIB_GDBMI)
	@mkdir -p $(dir $@)
	$(CC) $(GDBMI_TEST_CFLAGS) -MMD -MP -o $@ $< $(LIB_GDBMI)

# Random and mutated inputs through the parser, built with ASan/UBSan
# from the source so the parser itself is instrumented.
$(GDBMI_TDIR)/test_mi_fuzz_smoke: tests/gdbmi/test_mi_fuzz_smoke.c usr/gdbmi/mi-parse.c tests/gdbmi/mi_seeds.h
	@mkdir -p $(dir $@)
	$(CC) $(GDBMI_TEST_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		-MMD -MP -o $@ $< usr/gdbmi/mi-parse.c

# Programs the driver tests debug: -O0 -g so lines and locals are exact.
GDBMI_PROGS := $(addprefix $(GDBMI_TDIR)/,prog_simple prog_threads prog_ranks)

$(GDBMI_TDIR)/prog_%: tests/gdbmi/prog_%.c
	@mkdir -p $(dir $@)
	$(CC) -g -O0 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -pthread -o $@ $<

$(GDBMI_TDIR)/test_mi_driver: tests/gdbmi/test_mi_driver.c $(LIB_GDBMI) | $(GDBMI_PROGS)
	@mkdir -p $(dir $@)
	$(CC) $(GDBMI_TEST_CFLAGS) -MMD -MP -DGDBMI_PROG_DIR=\"$(GDBMI_TDIR)\" -o $@ $< $(LIB_GDBMI)

GDBMI_TESTS := $(GDBMI_TDIR)/test_mi_parse $(GDBMI_TDIR)/test_mi_fuzz_smoke \
	       $(GDBMI_TDIR)/test_mi_driver

# libFuzzer target (clang only).
GDBMI_FUZZER      := $(B)/tests/fuzz/mi_fuzz_parse

$(GDBMI_FUZZER): tests/fuzz/mi_fuzz_parse.c usr/gdbmi/mi-parse.c usr/include/crdbg/gdbmi.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iusr/include -o $@ tests/fuzz/mi_fuzz_parse.c usr/gdbmi/mi-parse.c

ALL_TARGETS += $(LIB_GDBMI) $(GDBMI_TESTS) $(GDBMI_PROGS)
ifneq ($(FUZZ_CC_FOUND),)
ALL_TARGETS  += $(GDBMI_FUZZER)
FUZZ_TARGETS += $(GDBMI_FUZZER)
endif
HOST_TESTS  += $(GDBMI_TESTS)

-include $(GDBMI_OBJS:.o=.d) $(GDBMI_TESTS:=.d)
