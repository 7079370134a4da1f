# SPDX-License-Identifier: GPL-2.0
#
# crdbg-part: the program a job's coordinator runs for each of its parts
# (<crdbg/job-part.h>), in the directory of crdbg's helper programs
# beside crdbg-server (build/sdm, PREFIX/libexec/crdbg). It links libjob's
# worker and codec and what they call, and the service's client (a user's
# part asks its node's crdbgd), never the console.

PART_SRCS := usr/part/crdbg-part.c
PART_OBJS := $(PART_SRCS:%.c=$(B)/%.o)
PART_PROG := $(B)/sdm/crdbg-part

# In the order CLI_LIBS (Makefile) states, the console's libraries left out.
PART_LIBS := $(LIB_CRDBGD) $(LIB_JOB) $(LIB_CRS) $(LIB_FREEZE) $(LIB_COMMON)

$(PART_PROG): $(PART_OBJS) $(PART_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -o $@ $(PART_OBJS) $(PART_LIBS) $(NL_LIBS) -lcrypto -lpthread

ALL_TARGETS += $(PART_PROG)
-include $(PART_OBJS:.o=.d)

# libjob's test of the program runs it from the build tree.
$(B)/tests/job/test_part_program: $(PART_PROG)
