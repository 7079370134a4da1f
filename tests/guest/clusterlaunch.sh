# SPDX-License-Identifier: GPL-2.0
# Guest group "clusterlaunch": job checkpoints of MPI jobs whose launcher
# starts daemons on the nodes, on the namespaced cluster inside the guest
# (tests/cluster/test_job_cluster.sh, steps m, h, p and l): Open MPI's
# mpirun and MPICH's mpiexec.hydra inside salloc over three nodes, and
# Debian's LAMMPS under mpirun, checkpointed by the launcher's pid and
# restarted in new allocations; srun --mpi=pmix refused before the freeze.
# vm-options: --timeout 2400
# vm-time: 700

ip link set lo up 2>/dev/null
if insmod_crdbg 2>/dev/null; then
	JOBCLUSTER_STEPS="m h p l" CRDBG_TEST_TIMEOUT=2000 run_tap job-launchers-kmod \
		"$CRDBG_TOP/tests/cluster/test_job_cluster.sh" kmod
else
	tap_result job-launchers-kmod 1 "crdbg.ko loads for the launchers' job checkpoint test"
fi
