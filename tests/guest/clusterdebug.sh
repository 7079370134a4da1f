# SPDX-License-Identifier: GPL-2.0
# Guest group "clusterdebug": crdbg debug sessions of six-rank MPI jobs
# over the three nodes of the namespaced cluster inside the guest
# (tests/cluster/test_debug_cluster.sh --tcg: srun, mpirun in salloc,
# attach to a running srun job, a server that cannot start, a node lost).
# One CPU like most groups: slurm.conf declares every node CPUs=2 and
# SlurmdParameters=config_overrides has slurmd take that as it is.
# vm-options: --timeout 3000
# Its scripts/vm wall time, 21 of 21 passing: 183 s alone on the nearly
# idle machine (2026-11-25 13:20); 780 s in make check's two lanes on
# 2026-11-28 (two CPUs beside another two-CPU guest); 558 s with one CPU
# beside another one-CPU guest (2026-11-29), the hint:
# vm-time: 560
ip link set lo up 2>/dev/null
CRDBG_TEST_TIMEOUT=2700 run_tap debug-cluster \
	env CRDBG_BUILD="$CRDBG_BUILD" "$CRDBG_TOP/tests/cluster/test_debug_cluster.sh" --tcg
