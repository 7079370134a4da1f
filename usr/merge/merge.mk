# SPDX-License-Identifier: GPL-2.0
# Merging of what many ranks reply (crdbg/merge.h: rank-set reply
# merging, merged stacks, JSON strings) in $(B)/usr/libmerge.a, on top of
# the SDM id sets: link it before $(B)/sdm/libsdmcore.a.

MERGE_SRCS := usr/merge/merge.c usr/merge/stacks.c usr/merge/json.c
MERGE_OBJS := $(MERGE_SRCS:%.c=$(B)/%.o)

$(MERGE_OBJS): USR_CFLAGS += -Isdm/include

$(LIB_MERGE): $(MERGE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	rm -f $@ && $(AR) rcs $@ $^

$(B)/tests/merge/test_merge: tests/merge/test_merge.c $(LIB_MERGE) $(LIB_SDMCORE)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Isdm/include -MMD -MP \
		-o $@ $< $(LIB_MERGE) $(LIB_SDMCORE)

# The same over real gdbs (usr/gdbmi/gdbmi.mk builds the library and
# prog_ranks; it is read after this file, so they are named by path).
$(B)/tests/merge/test_merge_gdb: tests/merge/test_merge_gdb.c $(LIB_MERGE) \
		$(LIB_GDBMI) $(LIB_SDMCORE) | $(B)/tests/gdbmi/prog_ranks
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Isdm/include -MMD -MP \
		-DGDBMI_PROG_DIR=\"$(B)/tests/gdbmi\" \
		-o $@ $< $(LIB_MERGE) $(LIB_GDBMI) $(LIB_SDMCORE)

MERGE_TESTS := $(B)/tests/merge/test_merge $(B)/tests/merge/test_merge_gdb

ALL_TARGETS += $(LIB_MERGE) $(MERGE_TESTS)
HOST_TESTS  += $(MERGE_TESTS)

-include $(MERGE_OBJS:.o=.d) $(MERGE_TESTS:=.d)
