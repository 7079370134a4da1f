# SPDX-License-Identifier: GPL-2.0
#
# crdbg-server: the SDM server program (libsdmnet's sdm_server_main) with
# the debugger's backends. The console's front end starts one per node
# of an MPI job (one per rank for crdbg debug -n N).

DBGSERVER_SRCS := usr/server/main.c usr/server/backend-gdb.c usr/server/mpi-view.c \
		  usr/server/hook-park.c usr/server/part-cmd.c usr/server/part-run.c
DBGSERVER_OBJS := $(DBGSERVER_SRCS:%.c=$(B)/%.o)
# Next to sdm-master: the console looks for both in one directory.
DBGSERVER      := $(B)/sdm/crdbg-server

$(DBGSERVER_OBJS): USR_CFLAGS += -Isdm/include

$(DBGSERVER): $(DBGSERVER_OBJS) $(LIB_SDMNET) $(LIB_SDMCORE) $(LIB_GDBMI) \
	      $(LIB_DBGPROTO)
	$(CC) $(USR_CFLAGS) -o $@ $(DBGSERVER_OBJS) $(LIB_SDMNET) \
		$(LIB_SDMCORE) $(LIB_GDBMI) $(LIB_DBGPROTO)

ALL_TARGETS += $(DBGSERVER)
-include $(DBGSERVER_OBJS:.o=.d)

# The "part" command through a real tree: it runs the crdbg next to the server.
DBGSERVER_TESTS := $(B)/tests/server/test_part_run

$(DBGSERVER_TESTS): $(B)/tests/server/%: tests/server/%.c $(LIB_SDMNET) $(LIB_SDMCORE) \
		    $(DBGSERVER) $(B)/sdm/sdm-master $(B)/crdbg
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Isdm/include -Isdm -MMD -MP -DSDM_BINDIR=\"$(B)/sdm\" \
		-o $@ $< $(LIB_SDMNET) $(LIB_SDMCORE)

ALL_TARGETS += $(DBGSERVER_TESTS)

# libFuzzer target for the "part" command parser (clang only).
DBGSERVER_FUZZ_CC ?= clang
DBGSERVER_FUZZER  := $(B)/tests/fuzz/server_fuzz_part

$(DBGSERVER_FUZZER): tests/fuzz/server_fuzz_part.c usr/server/part-cmd.c usr/server/part-cmd.h
	@mkdir -p $(dir $@)
	$(DBGSERVER_FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -std=gnu11 -D_GNU_SOURCE -Iusr/include -Iusr/server \
		-o $@ tests/fuzz/server_fuzz_part.c usr/server/part-cmd.c

ifneq ($(shell command -v $(DBGSERVER_FUZZ_CC) 2>/dev/null),)
ALL_TARGETS  += $(DBGSERVER_FUZZER)
FUZZ_TARGETS += $(DBGSERVER_FUZZER)
endif
HOST_TESTS  += $(DBGSERVER_TESTS)
-include $(DBGSERVER_TESTS:=.d)
