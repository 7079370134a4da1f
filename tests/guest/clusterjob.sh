# SPDX-License-Identifier: GPL-2.0
# Guest group "clusterjob": job checkpoints of a job across the nodes of
# the namespaced cluster inside the guest (tests/cluster/test_job_cluster.sh:
# six ranks in a TCP ring over three nodes; the cut, restarts through the
# barrier, refusals, the console's checkpoint and restart, a node lost
# mid-checkpoint).
# Two CPUs: scripts/cluster's slurm.conf gives every node CPUs=2 and
# slurmd, finding fewer, has the node drained (srun -N3 -n6 never starts).
# vm-options: --cpus 2 --timeout 2400
# vm-time: 906

ip link set lo up 2>/dev/null
if insmod_crdbg 2>/dev/null; then
	CRDBG_TEST_TIMEOUT=2000 run_tap job-cluster-kmod \
		"$CRDBG_TOP/tests/cluster/test_job_cluster.sh" kmod
else
	tap_result job-cluster-kmod 1 "crdbg.ko loads for the cluster job checkpoint test"
fi
