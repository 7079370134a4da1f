# SPDX-License-Identifier: GPL-2.0
# Guest group "clusterdebug": crdbg debug sessions of six-rank MPI jobs
# over the three nodes of the namespaced cluster inside the guest
# (tests/cluster/test_debug_cluster.sh --tcg: srun, mpirun in salloc,
# attach to a running srun job, a server that cannot start, a node lost).
# Two CPUs: six gdbs attach to ranks inside MPI_Init on three nodes at
# once (the mpirun session), and on one CPU beside make check's other
# lane they needed more than the console's 180 s (ranks 2-5 "lost:
# timeout" in the CI of 2026-11-29; 240 s for the session when it
# passed on one CPU earlier that day, 558 s for the group).
# vm-options: --cpus 2 --timeout 3000
# Its scripts/vm wall time, 21 of 21 passing: 183 s alone on the nearly
# idle machine (2026-11-25 13:20); 780 s in make check's two lanes on
# 2026-11-28 (two CPUs beside another two-CPU guest); 486 s with two CPUs
# beside a one-CPU guest (2026-11-29), the hint:
# vm-time: 680
ip link set lo up 2>/dev/null
CRDBG_TEST_TIMEOUT=2700 run_tap debug-cluster \
	env CRDBG_BUILD="$CRDBG_BUILD" "$CRDBG_TOP/tests/cluster/test_debug_cluster.sh" --tcg
