# SPDX-License-Identifier: GPL-2.0
# Guest group "cluster": the namespaced Slurm cluster of scripts/cluster
# inside the guest, where multi-node tests of crdbg.ko and CRIU run (one
# kernel, every node its own namespaces).
# One CPU like most groups: slurm.conf declares every node CPUs=2 and
# SlurmdParameters=config_overrides has slurmd take that as it is.
# vm-time: 82
run_tap test_cluster env CRDBG_BUILD="$CRDBG_BUILD" "$CRDBG_TOP/tests/cluster/test_cluster.sh"
# --preload reaches the ranks only, mpirun in salloc and srun
# (tests/cluster/test_preload_cluster.sh; two sessions on two nodes).
CRDBG_TEST_TIMEOUT=1500 run_tap preload-cluster \
	env CRDBG_BUILD="$CRDBG_BUILD" "$CRDBG_TOP/tests/cluster/test_preload_cluster.sh"
