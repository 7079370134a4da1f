# SPDX-License-Identifier: GPL-2.0
# The debugger protocol (crdbg/dbgproto.h): the console's commands to a
# GDB backend and its replies, encoded and parsed, in $(B)/usr/libdbgproto.a
# for both ends; and its unit tests.

DBGPROTO_SRCS := usr/dbgproto/dbgproto.c usr/dbgproto/subcmd.c
DBGPROTO_OBJS := $(DBGPROTO_SRCS:%.c=$(B)/%.o)
DBGPROTO_TEST := $(B)/tests/dbgproto/test_dbgproto

$(LIB_DBGPROTO): $(DBGPROTO_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(DBGPROTO_TEST): tests/dbgproto/test_dbgproto.c $(LIB_DBGPROTO)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -MMD -MP -o $@ $< $(LIB_DBGPROTO)

ALL_TARGETS += $(LIB_DBGPROTO) $(DBGPROTO_TEST)
HOST_TESTS  += $(DBGPROTO_TEST)

-include $(DBGPROTO_OBJS:.o=.d) $(DBGPROTO_TEST:=.d)

# libFuzzer target for the command parser and the reply readers (clang only).
DBGPROTO_FUZZER  := $(B)/tests/fuzz/dbgproto_fuzz_parse

$(DBGPROTO_FUZZER): tests/fuzz/dbgproto_fuzz_parse.c $(DBGPROTO_SRCS) usr/include/crdbg/dbgproto.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iusr/include \
		-o $@ tests/fuzz/dbgproto_fuzz_parse.c $(DBGPROTO_SRCS)

ifneq ($(FUZZ_CC_FOUND),)
ALL_TARGETS  += $(DBGPROTO_FUZZER)
FUZZ_TARGETS += $(DBGPROTO_FUZZER)
endif
