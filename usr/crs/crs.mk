# SPDX-License-Identifier: GPL-2.0
# The checkpoint/restart service over CRIU (libcrs.a, linked into crdbg)
# and its host tests and guest group.

CRS_SRCS := $(wildcard usr/crs/*.c)
CRS_OBJS := $(CRS_SRCS:%.c=$(B)/%.o)

$(B)/usr/libcrs.a: $(CRS_OBJS)
	$(AR) rcs $@ $^

CLI_LIBS += $(B)/usr/libcrs.a
CLI_LDLIBS += -lcrypto
ALL_TARGETS += $(B)/usr/libcrs.a

# Host tests (kselftest harness, run from the repo root).
# Unit tests of the service's internals see its private headers.
CRS_TEST_CFLAGS := $(USR_CFLAGS) -Iusr/crs -Wno-unused-parameter -Wno-sign-compare -Wno-format-overflow -Wno-format-truncation
CRS_TESTS := $(patsubst tests/host/crs/%.c,$(B)/tests/host/crs/%,$(wildcard tests/host/crs/*-test.c))

$(B)/tests/host/crs/runtime-test: tests/host/crs/runtime-test.c $(B)/usr/libcrdbg.so
	@mkdir -p $(dir $@)
	$(CC) $(CRS_TEST_CFLAGS) -o $@ $< -ldl -pthread

$(B)/tests/host/crs/%-test: tests/host/crs/%-test.c $(B)/usr/libcrs.a
	@mkdir -p $(dir $@)
	$(CC) $(CRS_TEST_CFLAGS) -o $@ $< $(B)/usr/libcrs.a -lcrypto

ALL_TARGETS += $(CRS_TESTS)
HOST_TESTS += $(CRS_TESTS)
-include $(CRS_OBJS:.o=.d)

# Guest group "checkpoint" and the program it checkpoints.
$(B)/tests/guest/crs/ckpt-prog: tests/guest/crs/ckpt-prog.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -O1 -g -o $@ $< -pthread -ldl

ALL_TARGETS += $(B)/tests/guest/crs/ckpt-prog
GUEST_GROUPS += checkpoint
BENCH_CMDS += tests/guest/crs/bench.sh

# The MPI program of tests/guest/crs/mpi-test.sh, when Open MPI's mpicc is there.
ifneq ($(shell command -v mpicc 2>/dev/null),)
$(B)/tests/guest/crs/mpi-prog: tests/guest/crs/mpi-prog.c
	@mkdir -p $(dir $@)
	mpicc -g -O1 -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS += $(B)/tests/guest/crs/mpi-prog
endif
GUEST_GROUPS += checkpointmpi
