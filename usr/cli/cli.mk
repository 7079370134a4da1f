# SPDX-License-Identifier: GPL-2.0
# The crdbg command-line tool.

# mkman.c is a build-time generator (usr/cli/man.mk), not part of crdbg.
CLI_SRCS    := $(filter-out usr/cli/mkman.c,$(wildcard usr/cli/*.c))
CLI_OBJS    := $(CLI_SRCS:%.c=$(B)/%.o)

$(B)/usr/%.o: usr/%.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -MMD -MP -c -o $@ $<

# In the order CLI_LIBS (Makefile) states.
$(B)/crdbg: $(CLI_OBJS) $(CLI_LIBS)
	$(CC) $(USR_CFLAGS) -o $@ $(CLI_OBJS) $(CLI_LIBS) $(CLI_LDLIBS)

ALL_TARGETS += $(B)/crdbg

# Its host test: the commands' arguments, help and errors.
$(B)/tests/cli/test_cli: tests/cli/test_cli.c tests/lib/run_cmd.h | $(B)/crdbg
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Itests/lib -o $@ $<

ALL_TARGETS += $(B)/tests/cli/test_cli
HOST_TESTS  += $(B)/tests/cli/test_cli
# Its start-up on the host (Documentation/performance.md).
BENCH_CMDS  += tests/cli/bench-startup.sh

-include $(CLI_OBJS:.o=.d)
