# SPDX-License-Identifier: GPL-2.0
#
# crdbg-server: the SDM server program (libsdmnet's sdm_server_main) with
# the debugger's backends. The console's front end starts one per node
# of an MPI job (one per rank for crdbg debug -n N).

DBGSERVER_SRCS := usr/server/main.c usr/server/backend-gdb.c usr/server/mpi-view.c \
		  usr/server/hook-park.c
DBGSERVER_OBJS := $(DBGSERVER_SRCS:%.c=$(B)/%.o)
# Next to sdm-master: the console looks for both in one directory.
DBGSERVER      := $(B)/sdm/crdbg-server

$(DBGSERVER_OBJS): USR_CFLAGS += -Isdm/include

$(DBGSERVER): $(DBGSERVER_OBJS) $(LIB_SDMNET) $(LIB_SDMCORE) $(LIB_GDBMI) \
	      $(LIB_DBGPROTO)
	$(CC) $(USR_CFLAGS) -o $@ $(DBGSERVER_OBJS) $(LIB_SDMNET) \
		$(LIB_SDMCORE) $(LIB_GDBMI) $(LIB_DBGPROTO) -lcrypto

ALL_TARGETS += $(DBGSERVER)
-include $(DBGSERVER_OBJS:.o=.d)
