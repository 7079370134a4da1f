# SPDX-License-Identifier: GPL-2.0
# Guest group "clusterdebug": crdbg debug sessions of six-rank MPI jobs
# over the three nodes of the namespaced cluster inside the guest
# (tests/cluster/test_debug_cluster.sh --tcg: srun, mpirun in salloc,
# attach to a running srun job, a server that cannot start, a node lost).
# vm-options: --timeout 3000
# Its scripts/vm wall time, 21 of 21 passing: 750 s on 2026-11-25 12:18
# (load average 4-10: other agents' guests, and host runs of the test
# beside it), 590 s at 12:55 (load 5-13), 183 s alone on the nearly
# idle machine at 13:20 (load 7 falling to 0.2). Not measured in make
# check's two lanes, where a group beside another took about 4x its
# time alone (debugckpt: Documentation/testing.md); the hint is the
# loaded run's:
# vm-time: 465
ip link set lo up 2>/dev/null
CRDBG_TEST_TIMEOUT=2700 run_tap debug-cluster \
	env CRDBG_BUILD="$CRDBG_BUILD" "$CRDBG_TOP/tests/cluster/test_debug_cluster.sh" --tcg
