# SPDX-License-Identifier: GPL-2.0
#
# crdbg-server: the SDM server program (libsdmnet's sdm_server_main) with
# the debugger's backends. The console's front end starts one per node
# of an MPI job (one per rank for crdbg debug -n N).

DBGSERVER_SRCS := usr/server/main.c usr/server/backend-gdb.c usr/server/mpi-view.c \
		  usr/server/hook-park.c usr/server/part-run.c
DBGSERVER_OBJS := $(DBGSERVER_SRCS:%.c=$(B)/%.o)
# Next to sdm-master: the console looks for both in one directory.
DBGSERVER      := $(B)/sdm/crdbg-server

$(DBGSERVER_OBJS): USR_CFLAGS += -Isdm/include

# libjob for the part protocol's codec, libcrs for the rules it checks
# (handles, markers), then what they call; libfreeze for its symbolizer
# (frames of stripped objects).
$(DBGSERVER): $(DBGSERVER_OBJS) $(LIB_JOB) $(LIB_CRS) $(LIB_SDMNET) $(LIB_SDMCORE) \
	      $(LIB_GDBMI) $(LIB_DBGPROTO) $(LIB_FREEZE)
	$(CC) $(USR_CFLAGS) -o $@ $(DBGSERVER_OBJS) $(LIB_JOB) $(LIB_CRS) $(LIB_SDMNET) \
		$(LIB_SDMCORE) $(LIB_GDBMI) $(LIB_DBGPROTO) $(LIB_FREEZE) $(SDM_CORE_LIBS)

ALL_TARGETS += $(DBGSERVER)
-include $(DBGSERVER_OBJS:.o=.d)

# The "part" command through a real tree: it runs the crdbg next to the server.
DBGSERVER_TESTS := $(B)/tests/server/test_part_run

$(DBGSERVER_TESTS): $(B)/tests/server/%: tests/server/%.c $(LIB_SDMNET) $(LIB_SDMCORE) \
		    $(DBGSERVER) $(B)/sdm/sdm-master $(B)/sdm/crdbg-part
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Isdm/include -Isdm -MMD -MP -DSDM_BINDIR=\"$(B)/sdm\" \
		-o $@ $< $(LIB_SDMNET) $(LIB_SDMCORE) $(SDM_CORE_LIBS)

ALL_TARGETS += $(DBGSERVER_TESTS)

HOST_TESTS  += $(DBGSERVER_TESTS)
-include $(DBGSERVER_TESTS:=.d)
