# SPDX-License-Identifier: GPL-2.0
# The crdbg command-line tool and the small shared userspace library.

COMMON_SRCS := $(wildcard usr/common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(B)/%.o)
# mkman.c is a build-time generator (usr/cli/man.mk), not part of crdbg.
CLI_SRCS    := $(filter-out usr/cli/mkman.c,$(wildcard usr/cli/*.c))
CLI_OBJS    := $(CLI_SRCS:%.c=$(B)/%.o)

# Libraries other fragments add for the CLI to link (e.g. libfreeze.a).
CLI_LIBS    ?=

$(B)/usr/%.o: usr/%.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) $(NL_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB_COMMON): $(COMMON_OBJS)
	$(AR) rcs $@ $^

$(B)/crdbg: $(CLI_OBJS) $(LIB_COMMON) $$(CLI_LIBS)
	$(CC) $(USR_CFLAGS) -o $@ $(CLI_OBJS) $(CLI_LIBS) $(LIB_COMMON) $(NL_LIBS) $(CLI_LDLIBS)

ALL_TARGETS += $(B)/crdbg
-include $(CLI_OBJS:.o=.d) $(COMMON_OBJS:.o=.d)
