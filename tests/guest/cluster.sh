# SPDX-License-Identifier: GPL-2.0
# Guest group "cluster": the namespaced Slurm cluster of scripts/cluster
# inside the guest, where multi-node tests of crdbg.ko and CRIU run (one
# kernel, every node its own namespaces).
# Two CPUs: scripts/cluster's slurm.conf gives every node CPUs=2 and
# slurmd, finding fewer, has the node drained (srun -N3 -n6 never starts).
# vm-options: --cpus 2
# vm-time: 138
run_tap test_cluster env CRDBG_BUILD="$CRDBG_BUILD" "$CRDBG_TOP/tests/cluster/test_cluster.sh"
