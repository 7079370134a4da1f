# SPDX-License-Identifier: GPL-2.0
# Guest group "clusterjob": job checkpoints of a job across the nodes of
# the namespaced cluster inside the guest (tests/cluster/test_job_cluster.sh:
# six ranks in a TCP ring over three nodes; the cut, restarts through the
# barrier, refusals, the console's checkpoint and restart, a node lost
# mid-checkpoint; the launchers' jobs are group clusterlaunch's).
# One CPU like most groups: slurm.conf declares every node CPUs=2 and
# SlurmdParameters=config_overrides has slurmd take that as it is.
# vm-options: --timeout 2400
# vm-time: 640

ip link set lo up 2>/dev/null
if insmod_crdbg 2>/dev/null; then
	CRDBG_TEST_TIMEOUT=2000 run_tap job-cluster-kmod \
		"$CRDBG_TOP/tests/cluster/test_job_cluster.sh" kmod
else
	tap_result job-cluster-kmod 1 "crdbg.ko loads for the cluster job checkpoint test"
fi
