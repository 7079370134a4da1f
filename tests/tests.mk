# SPDX-License-Identifier: GPL-2.0
# The test bed's own tests: the module's loading and `crdbg kmod status`
# in the guest (group foundation), the virtual cluster, and the fidelity
# programs.

$(B)/tests/foundation/test_module: tests/foundation/test_module.c tests/lib/run_cmd.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Itests/lib -o $@ $<

ALL_TARGETS  += $(B)/tests/foundation/test_module
GUEST_GROUPS += foundation

# The virtual Slurm cluster (scripts/cluster): the test bed's own test on
# the host, and in the guest (group "cluster") where multi-node module and
# CRIU tests will run.
ifneq ($(shell command -v mpicc 2>/dev/null),)
$(B)/tests/cluster/prog_mpi_where: tests/cluster/prog_mpi_where.c
	@mkdir -p $(dir $@)
	mpicc -g -O1 -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS  += $(B)/tests/cluster/prog_mpi_where

# Where --preload's library lands: the ranks, not their launcher
# (tests/cluster/test_preload_cluster.sh, on the host).
$(B)/tests/cluster/prog_mpi_preload: tests/cluster/prog_mpi_preload.c
	@mkdir -p $(dir $@)
	mpicc -g -O1 -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS  += $(B)/tests/cluster/prog_mpi_preload
endif
ifneq ($(shell command -v mpicc.mpich 2>/dev/null),)
$(B)/tests/cluster/prog_mpi_preload_mpich: tests/cluster/prog_mpi_preload.c
	@mkdir -p $(dir $@)
	mpicc.mpich -g -O1 -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS  += $(B)/tests/cluster/prog_mpi_preload_mpich
endif
HOST_TESTS   += tests/cluster/test_preload_cluster.sh
HOST_TESTS   += tests/cluster/test_cluster.sh
# The ring of TCP tasks across nodes that job checkpoints are tested on.
$(B)/tests/cluster/prog_ring: tests/cluster/prog_ring.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -o $@ $<

ALL_TARGETS  += $(B)/tests/cluster/prog_ring
# crdbg debug sessions of six-rank jobs over the cluster's three nodes
# (srun, mpirun in salloc, attach, a node lost, a server that cannot
# start): all of them in the guest (group clusterdebug below), and on the
# host the one check the guest's sessions leave out, the srun session to
# its clean end (test_debug_srun.sh runs test_debug_cluster.sh --srun;
# test_debug_cluster.sh alone runs every session on the host).
HOST_TESTS   += tests/cluster/test_debug_srun.sh
BENCH_CMDS   += tests/cluster/bench_debug_cluster.sh
# A session end to end over three QEMU guests, each its own kernel with
# crdbg.ko (scripts/cluster --kind vm): boots its own guests.
HOST_TESTS   += tests/cluster/test_vm_cluster.sh
GUEST_GROUPS += cluster
# Guest group "clusterdebug": test_debug_cluster.sh --tcg inside the guest.
GUEST_GROUPS += clusterdebug
# Guest group "clusterjob": job checkpoints of the ring over the namespaced
# cluster inside the guest, from the command line and from the console
# (tests/cluster/test_job_cluster.sh).
GUEST_GROUPS += clusterjob
# Guest group "clusterlaunch": job checkpoints of jobs whose launcher runs
# daemons on the nodes (mpirun, mpiexec.hydra, LAMMPS under mpirun), the
# same test's steps m, h, p and l.
GUEST_GROUPS += clusterlaunch

# Guest group "fidelity": one small program per kind of kernel state,
# checkpointed and restored under raw CRIU and crdbg (tests/fidelity/).
FIDELITY_PROGS := $(patsubst tests/fidelity/%.c,$(B)/tests/fidelity/%,$(wildcard tests/fidelity/prog_*.c))

$(B)/tests/fidelity/prog_%: tests/fidelity/prog_%.c tests/fidelity/fidelity.h tests/fidelity/prog_stopped.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -o $@ $< -pthread

ALL_TARGETS  += $(FIDELITY_PROGS)
GUEST_GROUPS += fidelity
