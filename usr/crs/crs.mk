# SPDX-License-Identifier: GPL-2.0
# The checkpoint/restart service over CRIU (libcrs.a, linked into crdbg)
# and its host tests and guest group.

CRS_SRCS := $(wildcard usr/crs/*.c)
CRS_OBJS := $(CRS_SRCS:%.c=$(B)/%.o)

# The AVX2 digest is only called on a CPU that has AVX2 (xxh128.c).
$(B)/usr/crs/xxh128-avx2.o: USR_CFLAGS += -mavx2

# The dump gate, a CRIU plugin (usr/crs/gate/criu-gate.c): built as a
# shared object and carried inside libcrs (gate/blob.S); criu.c writes it
# out for each dump. CRIU's plugin header comes with the criu package.
CRS_GATE_SO := $(B)/usr/crs/gate/criu-gate.so
$(CRS_GATE_SO): usr/crs/gate/criu-gate.c usr/include/crdbg/criu-gate.h
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -fPIC -shared -s -o $@ $<

$(B)/usr/crs/gate/blob.o: usr/crs/gate/blob.S $(CRS_GATE_SO)
	@mkdir -p $(dir $@)
	$(CC) -c -DGATE_SO='"$(CRS_GATE_SO)"' -o $@ $<

$(LIB_CRS): $(CRS_OBJS) $(B)/usr/crs/gate/blob.o
	rm -f $@ && $(AR) rcs $@ $^

CLI_LDLIBS += -lcrypto
ALL_TARGETS += $(LIB_CRS)

# Host tests (kselftest harness, run from the repo root).
# Unit tests of the service's internals see its private headers.
CRS_TEST_CFLAGS := $(TEST_CFLAGS) -Iusr/crs
CRS_TESTS := $(patsubst tests/crs/%.c,$(B)/tests/crs/%,$(wildcard tests/crs/test_*.c))

$(B)/tests/crs/test_runtime: tests/crs/test_runtime.c $(LIB_CRDBG)
	@mkdir -p $(dir $@)
	$(CC) $(CRS_TEST_CFLAGS) -o $@ $< -ldl -pthread

# resume.c pushes the hook through the freeze backends.
$(B)/tests/crs/test_resume_orders: tests/crs/test_resume_orders.c $(LIB_CRS) $(LIB_FREEZE) \
				   $(LIB_COMMON)
	@mkdir -p $(dir $@)
	$(CC) $(CRS_TEST_CFLAGS) -o $@ $< $(LIB_CRS) $(LIB_FREEZE) $(LIB_COMMON) $(NL_LIBS) \
		-lcrypto -lpthread

# The agent's test runs a process of three threads.
$(B)/tests/crs/test_agent: tests/crs/test_agent.c $(LIB_CRS)
	@mkdir -p $(dir $@)
	$(CC) $(CRS_TEST_CFLAGS) -o $@ $< $(LIB_CRS) -pthread

$(B)/tests/crs/test_%: tests/crs/test_%.c $(LIB_CRS)
	@mkdir -p $(dir $@)
	$(CC) $(CRS_TEST_CFLAGS) -o $@ $< $(LIB_CRS) -lcrypto

ALL_TARGETS += $(CRS_TESTS)
HOST_TESTS += $(CRS_TESTS)
-include $(CRS_OBJS:.o=.d)

# The programs the tests and benchmarks run: the dump gate's stand-in
# criu (test_gate.c), the checkpoint group's program (prog_ckpt), a
# terminal of its own (test_terminal.sh), srun's layout of a node's tasks
# without Slurm (test_lineage.sh), a pair of terminals, and the
# incremental checkpoint tests' and benchmark's program (prog_incr).
CRS_PROGS := $(addprefix $(B)/tests/crs/,prog_seize prog_ckpt prog_pty prog_lineage \
	     prog_ttypair prog_incr)
CRS_PROG_OPT := -O1

$(CRS_PROGS): $(B)/tests/crs/%: tests/crs/%.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) $(CRS_PROG_OPT) -g -o $@ $< $(CRS_PROG_LIBS)

$(B)/tests/crs/prog_ckpt: CRS_PROG_LIBS := -pthread -ldl
$(B)/tests/crs/prog_incr: CRS_PROG_LIBS := -pthread
$(B)/tests/crs/prog_incr: CRS_PROG_OPT := -O2

$(B)/tests/crs/test_gate: CRS_TEST_CFLAGS += -DPROG_SEIZE=\"$(B)/tests/crs/prog_seize\"
$(B)/tests/crs/test_gate: $(B)/tests/crs/prog_seize
ALL_TARGETS += $(CRS_PROGS)
GUEST_GROUPS += checkpoint cheapckpt
BENCH_CMDS += tests/crs/bench.sh tests/crs/bench-job.sh

# The MPI program of tests/crs/test_checkpoint_mpi.sh, when Open MPI's mpicc is there.
ifneq ($(shell command -v mpicc 2>/dev/null),)
$(B)/tests/crs/prog_mpi: tests/crs/prog_mpi.c
	@mkdir -p $(dir $@)
	mpicc -g -O1 -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS += $(B)/tests/crs/prog_mpi
endif
GUEST_GROUPS += checkpointmpi

# ... and built with MPICH's for tests/crs/test_checkpoint_mpich.sh.
ifneq ($(shell command -v mpicc.mpich 2>/dev/null),)
$(B)/tests/crs/prog_mpi_mpich: tests/crs/prog_mpi.c
	@mkdir -p $(dir $@)
	mpicc.mpich -g -O1 -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS += $(B)/tests/crs/prog_mpi_mpich
endif

# libFuzzer target for the metadata and job manifest decoders (clang only).
CRS_FUZZER   := $(B)/tests/fuzz/crs_fuzz_records
CRS_FUZZ_SRC := usr/crs/meta.c usr/job/manifest.c usr/crs/sealed.c usr/crs/sha256.c usr/crs/error.c \
		usr/crs/file-chunks.c usr/crs/criu-pagemap.c usr/crs/fdio.c usr/crs/seal-key.c \
		usr/crs/criu-opts.c

$(CRS_FUZZER): tests/fuzz/crs_fuzz_records.c $(CRS_FUZZ_SRC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iusr/include -Iusr/crs -Ikmod/uapi \
		-o $@ tests/fuzz/crs_fuzz_records.c $(CRS_FUZZ_SRC) -lcrypto

# ... and for the lineage keeper's request decoder.
CRS_LINEAGE_FUZZER := $(B)/tests/fuzz/crs_fuzz_lineage

$(CRS_LINEAGE_FUZZER): tests/fuzz/crs_fuzz_lineage.c usr/crs/lineage-wire.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iusr/include -Iusr/crs -Ikmod/uapi -o $@ $^

# ... and for the record of the files a tree writes.
CRS_WFILES_FUZZER := $(B)/tests/fuzz/crs_fuzz_wfiles

$(CRS_WFILES_FUZZER): tests/fuzz/crs_fuzz_wfiles.c usr/crs/wfiles-record.c usr/crs/error.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iusr/include -Iusr/crs -Ikmod/uapi -o $@ $^

# ... and for the record of the ports it listens on.
CRS_PORTS_FUZZER := $(B)/tests/fuzz/crs_fuzz_listen_ports

$(CRS_PORTS_FUZZER): tests/fuzz/crs_fuzz_listen_ports.c usr/crs/listen-ports-record.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iusr/include -Iusr/crs -Ikmod/uapi -o $@ $^

# ... and for the core images' credentials, which the service checks at restart.
CRS_CREDS_FUZZER := $(B)/tests/fuzz/crs_fuzz_creds

$(CRS_CREDS_FUZZER): tests/fuzz/crs_fuzz_creds.c usr/crs/criu-creds.c usr/crs/error.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iusr/include -Iusr/crs -Ikmod/uapi -o $@ $^

ifneq ($(FUZZ_CC_FOUND),)
ALL_TARGETS  += $(CRS_FUZZER) $(CRS_LINEAGE_FUZZER) $(CRS_CREDS_FUZZER) $(CRS_WFILES_FUZZER) $(CRS_PORTS_FUZZER)
FUZZ_TARGETS += $(CRS_FUZZER) $(CRS_LINEAGE_FUZZER) $(CRS_CREDS_FUZZER) $(CRS_WFILES_FUZZER) $(CRS_PORTS_FUZZER)
endif
