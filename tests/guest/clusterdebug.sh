# SPDX-License-Identifier: GPL-2.0
# Guest group "clusterdebug": crdbg debug sessions of six-rank MPI jobs
# over the three nodes of the namespaced cluster inside the guest
# (tests/cluster/test_debug_cluster.sh --tcg: srun, mpirun in salloc,
# attach to a running srun job, a server that cannot start, a node lost).
# vm-options: --timeout 3000
# Its wall time in the guest (2026-11-25 09:45, load average 8-15, 15
# of 21 checks passing; not yet green, see Documentation/testing.md):
# vm-time: 1412
ip link set lo up 2>/dev/null
CRDBG_TEST_TIMEOUT=2700 run_tap debug-cluster \
	env CRDBG_BUILD="$CRDBG_BUILD" "$CRDBG_TOP/tests/cluster/test_debug_cluster.sh" --tcg
