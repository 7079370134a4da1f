#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The virtual Slurm cluster of scripts/cluster (--kind ns), as a test bed
# must behave: nodes with their own hostname, address and PID namespace,
# real Slurm (srun across every node), an Open MPI job whose ranks on
# different nodes talk to each other, the command's exit status given
# back, a timeout that kills the command, and nothing left behind.
# Runs on the host and, through the guest group "cluster", in the guest.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CRDBG_BUILD:-$top/build}
cluster=$top/scripts/cluster
prog=$build/tests/cluster/prog_mpi_where
work=$(mktemp -d /tmp/test_cluster.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
n=0

. "$top/tests/guest/tap.sh"

echo "TAP version 13"
echo "1..9"

# ok/not ok with a reason on failure.
check() {
	local name=$1 cond=$2 why=${3:-}

	n=$((n + 1))
	if [[ $cond == 0 ]]; then
		echo "ok $n $name"
	else
		echo "not ok $n $name${why:+ # $why}"
	fi
}

# Nothing of a cluster is left: no netns, no slurm daemon, no munged of ours.
leftovers() {
	{ ip netns list | grep -E '^crdbg[0-9]+-'; pgrep -a -x 'slurmctld|slurmd|slurmstepd';
	  pgrep -a -f 'munged.*crdbg-cluster'; } 2>/dev/null
}

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
	for i in $(seq 1 9); do echo "ok $i cluster # SKIP slurm-wlm or munge not installed (make deps)"; done
	exit 0
fi

# One cluster for the node checks, the MPI job and the exit status (each
# start costs most of a minute in a TCG guest): every node reports its
# view, an Open MPI job over srun (PMIx) reduces across three nodes, and
# the command then exits 3. srun -K1 ends the job as soon as a rank dies
# (its peers would wait for it until the cluster's timeout).
mpi=true
[[ -x $prog ]] && cp "$prog" "$work/" || mpi=false
out=$work/nodes.out
"$cluster" --nodes 3 --timeout 300 --dir "$work/c3" -- bash -c '
	srun -N3 -l sh -c "echo \$(hostname) \$(readlink /proc/self/ns/pid) \$(readlink /proc/self/ns/net) \$(ip -4 -o addr show eth0 | awk \"{print \\\$4}\")"
	echo "head $(hostname) $(readlink /proc/self/ns/pid) $(readlink /proc/self/ns/net)"
	echo "nodes=$CRDBG_CLUSTER_NODES"
	if '"$mpi"'; then
		OMPI_MCA_btl_tcp_if_include=10.20.0.0/24 OMPI_MCA_oob_tcp_if_include=10.20.0.0/24 \
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
			srun -K1 -N3 -n3 '"$work"'/prog_mpi_where >'"$work"'/mpi.out 2>'"$work"'/mpi.err
		echo "mpi rc=$?"
	fi
	exit 3' >"$out" 2>"$work/nodes.err"
rc=$?
hosts=$(grep -E '^[0-9]+: ' "$out" | awk '{print $2}' | sort | tr '\n' ' ')
check "srun -N3 reaches node0 node1 node2" $([[ $hosts == "node0 node1 node2 " ]]; echo $?) \
	"rc=$rc hosts='$hosts' $(tail -n 3 "$work/nodes.err" | tr '\n' ' ')"
pidns=$(grep -E '^[0-9]+: ' "$out" | awk '{print $3}' | sort -u | wc -l)
head_pidns=$(awk '/^head /{print $3}' "$out")
check "every node has a PID namespace of its own" \
	$([[ $pidns == 3 ]] && ! grep -E '^[0-9]+: ' "$out" | grep -qF "$head_pidns"; echo $?) "pid namespaces: $pidns"
netns=$(grep -E '^[0-9]+: ' "$out" | awk '{print $4}' | sort -u | wc -l)
addrs=$(grep -E '^[0-9]+: ' "$out" | awk '{print $5}' | sort | tr '\n' ' ')
check "every node has its own network namespace and address" \
	$([[ $netns == 3 && $addrs == "10.20.0.10/24 10.20.0.11/24 10.20.0.12/24 " ]]; echo $?) \
	"netns: $netns addrs: $addrs"
check "the command learns the node list" $(grep -qx 'nodes=node0,node1,node2' "$out"; echo $?)
if $mpi; then
	mhosts=$(awk '/^rank /{print $4}' "$work/mpi.out" | sort | tr '\n' ' ')
	check "an Open MPI job spans three nodes and its ranks talk" \
		$(grep -qx 'mpi rc=0' "$out" && [[ $mhosts == "node0 node1 node2 " ]] &&
		  grep -qx 'sum 3' "$work/mpi.out"; echo $?) \
		"$(grep 'mpi rc' "$out") hosts='$mhosts' $(tail -n 3 "$work/mpi.err" | tr '\n' ' ')"
else
	n=$((n + 1)); echo "ok $n mpi job # SKIP $prog not built (no mpicc)"
fi
check "the command's exit status is the script's" $([[ $rc == 3 ]]; echo $?) "rc=$rc"

"$cluster" --nodes 2 --timeout 3 --dir "$work/c2" -- sleep 300 >/dev/null 2>"$work/timeout.err"
rc=$?
check "a command past --timeout is killed: exit 124" $([[ $rc == 124 ]]; echo $?) "rc=$rc"

left=$(leftovers)
check "nothing is left behind: namespaces, daemons" $([[ -z $left ]]; echo $?) "$(echo $left)"

"$cluster" --nodes 0 -- true >/dev/null 2>"$work/bad.err"
rc=$?
check "a bad --nodes is one line and exit 2" \
	$([[ $rc == 2 && $(wc -l <"$work/bad.err") == 1 ]] && grep -q -- '--nodes' "$work/bad.err"; echo $?) \
	"rc=$rc: $(cat "$work/bad.err")"
