# SPDX-License-Identifier: GPL-2.0
# The debugger protocol (crdbg/dbgproto.h): the console's commands to a
# GDB backend and its replies, encoded and parsed, in $(B)/usr/libdbgproto.a
# for both ends; and its unit tests.

DBGPROTO_SRCS := usr/dbgproto/dbgproto.c
DBGPROTO_OBJS := $(DBGPROTO_SRCS:%.c=$(B)/%.o)
DBGPROTO_LIB  := $(B)/usr/libdbgproto.a
DBGPROTO_TEST := $(B)/tests/dbgproto/test_dbgproto

$(DBGPROTO_LIB): $(DBGPROTO_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(DBGPROTO_TEST): tests/dbgproto/test_dbgproto.c $(DBGPROTO_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -MMD -MP -o $@ $< $(DBGPROTO_LIB)

ALL_TARGETS += $(DBGPROTO_LIB) $(DBGPROTO_TEST)
HOST_TESTS  += $(DBGPROTO_TEST)

-include $(DBGPROTO_OBJS:.o=.d) $(DBGPROTO_TEST:=.d)
