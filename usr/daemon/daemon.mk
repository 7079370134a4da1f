# SPDX-License-Identifier: GPL-2.0
# crdbgd, the node's root service (Documentation/security.md), and its
# wire codec and client call (libcrdbgd.a: the service and its clients
# share it).

# The codec and the client's call: what clients link (libcrdbgd.a).
DAEMON_WIRE_OBJ := $(B)/usr/daemon/wire.o $(B)/usr/daemon/client.o
DAEMON_SRCS     := $(filter-out usr/daemon/wire.c usr/daemon/client.c,$(wildcard usr/daemon/*.c))
DAEMON_OBJS     := $(DAEMON_SRCS:%.c=$(B)/%.o)

$(DAEMON_OBJS): USR_CFLAGS += -Iusr/crs

$(LIB_CRDBGD): $(DAEMON_WIRE_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

# In the order CLI_LIBS (Makefile) states: what the service runs for its callers.
DAEMON_LIBS := $(LIB_CRDBGD) $(LIB_JOB) $(LIB_CRS) $(LIB_FREEZE) $(LIB_COMMON)

$(B)/crdbgd: $(DAEMON_OBJS) $(DAEMON_LIBS)
	$(CC) $(USR_CFLAGS) -o $@ $(DAEMON_OBJS) $(DAEMON_LIBS) $(NL_LIBS) -lcrypto -lpthread

ALL_TARGETS += $(LIB_CRDBGD) $(B)/crdbgd

# The codec's host test, and its fuzz target.
$(B)/tests/daemon/test_wire: tests/daemon/test_wire.c $(LIB_CRDBGD)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $^

ALL_TARGETS += $(B)/tests/daemon/test_wire
HOST_TESTS  += $(B)/tests/daemon/test_wire

# The authorization of a tree, on processes of other uids (as root).
$(B)/tests/daemon/test_auth: tests/daemon/test_auth.c $(B)/usr/daemon/auth.o $(LIB_CRS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Iusr/daemon -o $@ $^ -lcrypto

ALL_TARGETS += $(B)/tests/daemon/test_auth
HOST_TESTS  += $(B)/tests/daemon/test_auth

DAEMON_FUZZER := $(B)/tests/fuzz/daemon_fuzz_wire
$(DAEMON_FUZZER): tests/fuzz/daemon_fuzz_wire.c usr/daemon/wire.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iusr/include -Ikmod/uapi -o $@ $^

ifneq ($(FUZZ_CC_FOUND),)
ALL_TARGETS  += $(DAEMON_FUZZER)
FUZZ_TARGETS += $(DAEMON_FUZZER)
endif

-include $(DAEMON_OBJS:.o=.d) $(DAEMON_WIRE_OBJ:.o=.d)

# Guest group "service": two users and the service in a writable guest
# (tests/guest/service.sh, tests/crs/test_service.sh).
GUEST_GROUPS += service

# The service's guest test's lying client.
$(B)/tests/daemon/prog_forge: tests/daemon/prog_forge.c $(LIB_CRDBGD)
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -o $@ $^

ALL_TARGETS += $(B)/tests/daemon/prog_forge
