# SPDX-License-Identifier: GPL-2.0
#
# SDM networked half: transport (TCP on one epoll engine), startup, tree
# nodes, I/O forwarding, the server program over a backend table
# (sdm/server.h) with the echo backend, the front-end library, the
# sdm-master and sdm-server (echo) executables, the tree test and
# benchmark. Links against the core library built by sdm/core.mk; nothing
# here depends on usr/ (the debugger's server is built in usr/server/).

SDM_NET_CFLAGS = $(USR_CFLAGS) -Isdm/include -Isdm
SDM_NET_LIBS   := $(SDM_CORE_LIBS)
SDM_NET_SRCS   := sdm/transport.c sdm/transport-tcp.c sdm/startup.c \
		  sdm/node.c sdm/iof.c sdm/server.c sdm/backend-echo.c \
		  sdm/frontend.c
SDM_NET_OBJS   := $(SDM_NET_SRCS:%.c=$(B)/%.o)
SDM_NET_BINS   := $(B)/sdm/sdm-master $(B)/sdm/sdm-server
SDM_NET_TESTS  := $(addprefix $(B)/tests/sdm/test_,sdm_tree liveness mitm pending)
SDM_NET_BENCH  := $(B)/sdm/bench_sdm_tree

$(SDM_NET_OBJS) $(B)/sdm/master.o $(B)/sdm/sdm-server.o: $(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(SDM_NET_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB_SDMNET): $(SDM_NET_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	rm -f $@ && $(AR) rcs $@ $^

$(B)/sdm/sdm-master: $(B)/sdm/master.o
$(B)/sdm/sdm-server: $(B)/sdm/sdm-server.o
$(SDM_NET_BINS): $(LIB_SDMNET) $(LIB_SDMCORE)
	$(CC) $(SDM_NET_CFLAGS) -o $@ $(filter %.o,$^) $(LIB_SDMNET) $(LIB_SDMCORE) $(SDM_NET_LIBS)

# The test and the benchmark run the executables from $(B)/sdm.
$(SDM_NET_TESTS): $(B)/tests/sdm/%: tests/sdm/%.c $(LIB_SDMNET) $(LIB_SDMCORE) $(SDM_NET_BINS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Isdm/include -Isdm -MMD -MP \
		-DSDM_BINDIR=\"$(B)/sdm\" -o $@ $< $(LIB_SDMNET) $(LIB_SDMCORE) $(SDM_NET_LIBS)

$(SDM_NET_BENCH): sdm/bench_sdm_tree.c $(LIB_SDMNET) $(LIB_SDMCORE) $(SDM_NET_BINS)
	@mkdir -p $(dir $@)
	$(CC) $(SDM_NET_CFLAGS) -MMD -MP -DSDM_BINDIR=\"$(B)/sdm\" -o $@ $< \
		$(LIB_SDMNET) $(LIB_SDMCORE) $(SDM_NET_LIBS)

ALL_TARGETS += $(LIB_SDMNET) $(SDM_NET_BINS)
ifneq ($(wildcard tests/sdm/test_sdm_tree.c),)
ALL_TARGETS += $(SDM_NET_TESTS)
HOST_TESTS  += $(SDM_NET_TESTS)
endif
ifneq ($(wildcard sdm/bench_sdm_tree.c),)
ALL_TARGETS += $(SDM_NET_BENCH)
BENCH_CMDS  += $(SDM_NET_BENCH)
endif

# The cost of a frame's tag (sdm/link.h), framing and a loopback link.
SDM_LINK_BENCH := $(B)/sdm/bench_link

$(SDM_LINK_BENCH): sdm/bench_link.c $(LIB_SDMNET) $(LIB_SDMCORE)
	@mkdir -p $(dir $@)
	$(CC) $(SDM_NET_CFLAGS) -MMD -MP -o $@ $< $(LIB_SDMNET) $(LIB_SDMCORE) $(SDM_NET_LIBS)

ALL_TARGETS += $(SDM_LINK_BENCH)
BENCH_CMDS  += $(SDM_LINK_BENCH)
-include $(SDM_LINK_BENCH).d

-include $(SDM_NET_OBJS:.o=.d) $(B)/sdm/master.d $(B)/sdm/sdm-server.d \
	 $(SDM_NET_TESTS:=.d) $(SDM_NET_BENCH:=.d)
