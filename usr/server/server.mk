# SPDX-License-Identifier: GPL-2.0
#
# crdbg-server: the SDM server program (libsdmnet's sdm_server_main) with
# the debugger's backends. The console's front end starts one per rank.

DBGSERVER_SRCS := usr/server/main.c usr/server/backend-gdb.c
DBGSERVER_OBJS := $(DBGSERVER_SRCS:%.c=$(B)/%.o)
# Next to sdm-master: the console looks for both in one directory.
DBGSERVER      := $(B)/sdm/crdbg-server

$(DBGSERVER_OBJS): USR_CFLAGS += -Isdm/include

$(DBGSERVER): $(DBGSERVER_OBJS) $(B)/sdm/libsdmnet.a $(B)/sdm/libsdmcore.a $(B)/usr/libgdbmi.a \
	      $(B)/usr/libdbgproto.a
	$(CC) $(USR_CFLAGS) -o $@ $(DBGSERVER_OBJS) $(B)/sdm/libsdmnet.a \
		$(B)/sdm/libsdmcore.a $(B)/usr/libgdbmi.a $(B)/usr/libdbgproto.a -lcrypto

ALL_TARGETS += $(DBGSERVER)
-include $(DBGSERVER_OBJS:.o=.d)
