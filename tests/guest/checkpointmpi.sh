# SPDX-License-Identifier: GPL-2.0
# Guest group "checkpointmpi": crdbg checkpoint / restart of whole Open MPI
# jobs (rooted at mpirun) and of singletons (tests/crs/test_checkpoint_mpi.sh),
# and of MPICH jobs (rooted at mpiexec.hydra, test_checkpoint_mpich.sh), on
# both freeze backends. Its own boot: the group "checkpoint"
# already takes most of a guest's time budget.
# vm-time: 350

ip link set lo up 2>/dev/null
run_tap checkpoint-mpi-ptrace "$CRDBG_TOP/tests/crs/test_checkpoint_mpi.sh" ptrace
run_tap checkpoint-mpich-ptrace "$CRDBG_TOP/tests/crs/test_checkpoint_mpich.sh" ptrace
if insmod_crdbg 2>/dev/null; then
	run_tap checkpoint-mpi-kmod "$CRDBG_TOP/tests/crs/test_checkpoint_mpi.sh" kmod
	run_tap checkpoint-mpich-kmod "$CRDBG_TOP/tests/crs/test_checkpoint_mpich.sh" kmod
else
	tap_result checkpoint-mpi-kmod 1 "crdbg.ko loads for the kmod-backend MPI checkpoint tests"
fi
