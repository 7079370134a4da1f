# SPDX-License-Identifier: GPL-2.0
# libcommon.a: crdbg.ko's generic netlink client over libnl-genl-3
# (crdbg/nl.h), linked by the CLI, the freeze backend's users and the
# module's tests; its host test and fuzz target.

COMMON_SRCS := $(wildcard usr/common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(B)/%.o)

$(LIB_COMMON): $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

CLI_LDLIBS  += $(NL_LIBS)
ALL_TARGETS += $(LIB_COMMON)

# Host test, built from the source with ASan, so that a read past a
# datagram fails.
$(B)/tests/common/test_nl: tests/common/test_nl.c $(COMMON_SRCS) usr/include/crdbg/nl.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		-o $@ $< $(COMMON_SRCS) $(NL_LIBS)

ALL_TARGETS += $(B)/tests/common/test_nl
HOST_TESTS  += $(B)/tests/common/test_nl

# libFuzzer target for what is ours in reading the module's answers: the
# reply and extack checks (nl.c) and the QUERY decoder (freeze-kmod.c),
# over libnl's attribute parsing (clang only).
COMMON_FUZZER := $(B)/tests/fuzz/common_fuzz_genl
COMMON_FUZZ_SRC := usr/common/nl.c usr/freeze/freeze-kmod.c

$(COMMON_FUZZER): tests/fuzz/common_fuzz_genl.c $(COMMON_FUZZ_SRC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iusr/include -Iusr/freeze -Ikmod/uapi $(NL_CFLAGS) \
		-o $@ $< $(COMMON_FUZZ_SRC) $(NL_LIBS)

ifneq ($(FUZZ_CC_FOUND),)
ALL_TARGETS  += $(COMMON_FUZZER)
FUZZ_TARGETS += $(COMMON_FUZZER)
endif
-include $(COMMON_OBJS:.o=.d)
