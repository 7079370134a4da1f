# SPDX-License-Identifier: GPL-2.0
# Guest group "cluster": the namespaced Slurm cluster of scripts/cluster
# inside the guest, where multi-node tests of crdbg.ko and CRIU run (one
# kernel, every node its own namespaces).
# One CPU like most groups: slurm.conf declares every node CPUs=2 and
# SlurmdParameters=config_overrides has slurmd take that as it is.
# tests/cluster/test_preload_cluster.sh (--preload reaching the ranks
# only) needs neither the module nor CRIU: it runs on the host alone,
# where it takes 38 s against 319 s here.
# vm-time: 60
run_tap test_cluster env CRDBG_BUILD="$CRDBG_BUILD" "$CRDBG_TOP/tests/cluster/test_cluster.sh"
