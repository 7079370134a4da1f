# SPDX-License-Identifier: GPL-2.0
# Console output helpers (rank-set reply merging, merged stacks) in
# $(B)/usr/libconsole.a, on top of the SDM id sets: link it before
# $(B)/sdm/libsdmcore.a.

CONSOLE_SRCS := usr/console/merge.c usr/console/stacks.c usr/console/json.c
CONSOLE_OBJS := $(CONSOLE_SRCS:%.c=$(B)/%.o)
CONSOLE_LIB  := $(B)/usr/libconsole.a
# sdm/core.mk is read after this file: name its library by path.
CONSOLE_SDM  := $(B)/sdm/libsdmcore.a

$(CONSOLE_OBJS): USR_CFLAGS += -Isdm/include

$(CONSOLE_LIB): $(CONSOLE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(B)/tests/host/gdbmi/test_console: tests/host/gdbmi/test_console.c $(CONSOLE_LIB) $(CONSOLE_SDM)
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -Isdm/include -Wno-unused-parameter -Wno-sign-compare -MMD -MP \
		-o $@ $< $(CONSOLE_LIB) $(CONSOLE_SDM)

# The same over real gdbs (usr/gdbmi/gdbmi.mk builds the library and
# prog_ranks; it is read after this file, so they are named by path).
$(B)/tests/host/gdbmi/test_console_gdb: tests/host/gdbmi/test_console_gdb.c $(CONSOLE_LIB) \
		$(B)/usr/libgdbmi.a $(CONSOLE_SDM) | $(B)/tests/host/gdbmi/prog_ranks
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -Isdm/include -Wno-unused-parameter -Wno-sign-compare -MMD -MP \
		-DGDBMI_PROG_DIR=\"$(B)/tests/host/gdbmi\" \
		-o $@ $< $(CONSOLE_LIB) $(B)/usr/libgdbmi.a $(CONSOLE_SDM)

CONSOLE_TESTS := $(B)/tests/host/gdbmi/test_console $(B)/tests/host/gdbmi/test_console_gdb

ALL_TARGETS += $(CONSOLE_LIB) $(CONSOLE_TESTS)
HOST_TESTS  += $(CONSOLE_TESTS)

-include $(CONSOLE_OBJS:.o=.d) $(CONSOLE_TESTS:=.d)
