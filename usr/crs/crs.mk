# SPDX-License-Identifier: GPL-2.0
# The checkpoint/restart service over CRIU (libcrs.a, linked into crdbg)
# and its host tests and guest group.

CRS_SRCS := $(wildcard usr/crs/*.c)
CRS_OBJS := $(CRS_SRCS:%.c=$(B)/%.o)

# The AVX2 digest is only called on a CPU that has AVX2 (xxh128.c).
$(B)/usr/crs/xxh128-avx2.o: USR_CFLAGS += -mavx2
# sha256.c loads libcrypto through sdm/lazylib.h.
$(B)/usr/crs/sha256.o: USR_CFLAGS += -Isdm/include

# The dump gate, a CRIU plugin (usr/crs/gate/criu-gate.c): built as a
# shared object and carried inside libcrs (gate/blob.S); criu.c writes it
# out for each dump. CRIU's plugin header comes with the criu package.
CRS_GATE_SO := $(B)/usr/crs/gate/criu-gate.so
$(CRS_GATE_SO): usr/crs/gate/criu-gate.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -fPIC -shared -s -o $@ $<

$(B)/usr/crs/gate/blob.o: usr/crs/gate/blob.S $(CRS_GATE_SO)
	@mkdir -p $(dir $@)
	$(CC) -c -DGATE_SO='"$(CRS_GATE_SO)"' -o $@ $<

$(LIB_CRS): $(CRS_OBJS) $(B)/usr/crs/gate/blob.o
	$(AR) rcs $@ $^

# sdm's core after libcrs: sha256.c's lazylib_load()
CLI_LIBS += $(LIB_CRS) $(LIB_SDMCORE)
ALL_TARGETS += $(LIB_CRS)

# Host tests (kselftest harness, run from the repo root).
# Unit tests of the service's internals see its private headers.
CRS_TEST_CFLAGS := $(TEST_CFLAGS) -Iusr/crs
CRS_TESTS := $(patsubst tests/crs/%.c,$(B)/tests/crs/%,$(wildcard tests/crs/test_*.c))

$(B)/tests/crs/test_runtime: tests/crs/test_runtime.c $(LIB_CRDBG)
	@mkdir -p $(dir $@)
	$(CC) $(CRS_TEST_CFLAGS) -o $@ $< -ldl -pthread

$(B)/tests/crs/test_%: tests/crs/test_%.c $(LIB_CRS) $(LIB_SDMCORE)
	@mkdir -p $(dir $@)
	$(CC) $(CRS_TEST_CFLAGS) -o $@ $< $(LIB_CRS) $(LIB_SDMCORE)

ALL_TARGETS += $(CRS_TESTS)
HOST_TESTS += $(CRS_TESTS)
-include $(CRS_OBJS:.o=.d)

# The dump gate's stand-in criu (tests/crs/test_gate.c).
$(B)/tests/crs/prog_seize: tests/crs/prog_seize.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -O1 -g -o $@ $<

$(B)/tests/crs/test_gate: CRS_TEST_CFLAGS += -DPROG_SEIZE=\"$(B)/tests/crs/prog_seize\"
$(B)/tests/crs/test_gate: $(B)/tests/crs/prog_seize
ALL_TARGETS += $(B)/tests/crs/prog_seize

# Guest group "checkpoint" and the program it checkpoints.
$(B)/tests/crs/prog_ckpt: tests/crs/prog_ckpt.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -O1 -g -o $@ $< -pthread -ldl

ALL_TARGETS += $(B)/tests/crs/prog_ckpt

# A terminal of its own for a test program (test_terminal.sh).
$(B)/tests/crs/prog_pty: tests/crs/prog_pty.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -O1 -g -o $@ $<

ALL_TARGETS += $(B)/tests/crs/prog_pty

# srun's layout of a node's tasks, without Slurm (test_lineage.sh).
$(B)/tests/crs/prog_lineage: tests/crs/prog_lineage.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -O1 -g -o $@ $<

ALL_TARGETS += $(B)/tests/crs/prog_lineage

$(B)/tests/crs/prog_ttypair: tests/crs/prog_ttypair.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -O1 -g -o $@ $<

ALL_TARGETS += $(B)/tests/crs/prog_ttypair

# The incremental checkpoint tests' and benchmark's program.
$(B)/tests/crs/prog_incr: tests/crs/prog_incr.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -O2 -g -o $@ $< -pthread

ALL_TARGETS += $(B)/tests/crs/prog_incr
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
CRS_FUZZ_CC  ?= clang
CRS_FUZZER   := $(B)/tests/fuzz/crs_fuzz_records
CRS_FUZZ_SRC := usr/crs/meta.c usr/crs/job-manifest.c usr/crs/sealed.c usr/crs/sha256.c usr/crs/sha256-small.c usr/crs/error.c \
		usr/crs/file-chunks.c usr/crs/criu-pagemap.c usr/crs/fdio.c sdm/lazylib.c

$(CRS_FUZZER): tests/fuzz/crs_fuzz_records.c $(CRS_FUZZ_SRC)
	@mkdir -p $(dir $@)
	$(CRS_FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -std=gnu11 -D_GNU_SOURCE -Iusr/include -Iusr/crs \
		-Ikmod/uapi -Isdm/include -o $@ tests/fuzz/crs_fuzz_records.c $(CRS_FUZZ_SRC)

# ... and for the lineage keeper's request decoder.
CRS_LINEAGE_FUZZER := $(B)/tests/fuzz/crs_fuzz_lineage

$(CRS_LINEAGE_FUZZER): tests/fuzz/crs_fuzz_lineage.c usr/crs/lineage-wire.c
	@mkdir -p $(dir $@)
	$(CRS_FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -std=gnu11 -D_GNU_SOURCE -Iusr/include -Iusr/crs \
		-Ikmod/uapi -o $@ $^

ifneq ($(shell command -v $(CRS_FUZZ_CC) 2>/dev/null),)
ALL_TARGETS  += $(CRS_FUZZER) $(CRS_LINEAGE_FUZZER)
FUZZ_TARGETS += $(CRS_FUZZER) $(CRS_LINEAGE_FUZZER)
endif
