# SPDX-License-Identifier: GPL-2.0
# Guest group "checkpointmpi": crdbg checkpoint / restart of whole Open MPI
# jobs (rooted at mpirun) and of singletons, on both freeze backends
# (tests/crs/test_checkpoint_mpi.sh). Its own boot: the group "checkpoint"
# already takes most of a guest's time budget.
# vm-time: 348

ip link set lo up 2>/dev/null
run_tap checkpoint-mpi-ptrace "$CRDBG_TOP/tests/crs/test_checkpoint_mpi.sh" ptrace
if insmod_crdbg 2>/dev/null; then
	run_tap checkpoint-mpi-kmod "$CRDBG_TOP/tests/crs/test_checkpoint_mpi.sh" kmod
else
	tap_result checkpoint-mpi-kmod 1 "crdbg.ko loads for the kmod-backend MPI checkpoint tests"
fi
