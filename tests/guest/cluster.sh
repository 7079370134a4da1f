# SPDX-License-Identifier: GPL-2.0
# Guest group "cluster": the namespaced Slurm cluster of scripts/cluster
# inside the guest, where multi-node tests of crdbg.ko and CRIU run (one
# kernel, every node its own namespaces).
# vm-time: 82
run_tap test_cluster env CRDBG_BUILD="$CRDBG_BUILD" "$CRDBG_TOP/tests/cluster/test_cluster.sh"
