#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The cluster of separate kernels (scripts/cluster --kind vm): three QEMU
# guests, each its own kernel with crdbg.ko loaded, Slurm across them, and
# one crdbg debug session end to end over the three (launch through srun,
# a breakpoint, print grouped by value, status naming the nodes, continue
# to the end), then a job checkpoint across the three kernels (one process
# per node, run by srun and found by the job's id, each part stored in
# its node's own store, the job killed and restarted through the barrier,
# each process ending as an uninterrupted run). One cluster boot for all
# of it. A host test: it boots its own guests, so make check deals it to a
# guest lane (scripts/check.sh) by its wall time alone: 156-178 s in
# make check's host part, 2026-11-29:
# vm-time: 180
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CRDBG_BUILD:-$top/build}
prog=$build/tests/debug/mpi_debug
incr=$build/tests/crs/prog_incr
work=$(mktemp -d /tmp/test_vm_cluster.XXXXXX)
chmod 755 "$work"
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
backend=vm-cluster
plan=13

. "$top/tests/guest/tap.sh"

echo "TAP version 13"
echo "1..$plan"

if ! command -v slurmctld >/dev/null || ! command -v qemu-system-x86_64 >/dev/null ||
   [[ ! -x $prog || ! -f $build/kmod/crdbg.ko ]]; then
	for i in $(seq $plan); do skip "cluster of guests" "needs slurm-wlm, QEMU, Open MPI's $prog and crdbg.ko (make deps; make)"; done
	exit 0
fi

# The cluster directory is what the guests share with this side: the
# script and its results live there.
c=$work/c
mkdir -p "$c"
cat >"$c/on-node0.sh" <<'EOF'
w=$1 crdbg=$2 prog=$3 incr=$4 lib=$5
export OMPI_MCA_btl_tcp_if_include=eth0 OMPI_MCA_oob_tcp_if_include=eth0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
srun -N3 -l sh -c 'echo "$(hostname) $(cat /proc/sys/kernel/random/boot_id) $(test -d /sys/module/crdbg && echo crdbg.ko)"' \
	>"$w/nodes.out" 2>&1
# stopall off, then wait: a rank on a slower guest reaches the breakpoint
# later, and the group stop (on by default) would interrupt it on its way.
timeout 400 "$crdbg" debug -ex 'stopall off' -ex 'break compute' -ex continue -ex wait \
	-ex finish -ex 'print value' -ex 'status -p' -ex continue -- srun -N3 -n3 "$prog" \
	>"$w/session.out" 2>&1
echo "rc=$?" >"$w/session.rc"
# Left on a node: a server or gdb of ours, or a rank.
for n in node0 node1 node2; do
	srun -N1 -w $n pgrep -a -f "crdbg-server|gdb --interpreter|$prog" 2>/dev/null
done | grep -v -e pgrep -e on-node0.sh >"$w/left.out"

# A job checkpoint across the kernels, of a Slurm job by its id: one
# prog_incr task per node (its files in the node's own /tmp), waiting for
# phase 1. Each node keeps its part in its own store (/tmp/jstore).
d=/tmp/crdbg-job
srun -N1 -w node0 sh -c "mkdir -p /tmp/plain && touch /tmp/plain/go.1 /tmp/plain/go.2 &&
	INCR_GO=/tmp/plain/go $incr 4 2 20" >"$w/job.plain" 2>&1
srun -N3 sh -c "mkdir -p $d; rm -f $d/go.*"
srun -N3 -J crdbgjob sh -c "cd $d && exec env INCR_GO=$d/go LD_PRELOAD=$lib $incr 4 2 20 \
	>$d/out 2>$d/err </dev/null" >"$w/job.srun" 2>&1 &
for i in $(seq 100); do
	jobid=$(squeue -h -n crdbgjob -o %i | head -n 1)
	[[ -n $jobid ]] && break
	sleep 0.2
done
in_job() { srun --overlap --jobid="$jobid" -N3 "$@"; }	# the job holds the nodes
for i in $(seq 300); do
	[[ $(in_job sh -c "grep -c '^wait 1\$' $d/out" 2>/dev/null | grep -c '^1$') == 3 ]] && break
	sleep 0.5
done
in_job sh -c "cp $d/out $d/out.at1"
timeout 300 "$crdbg" checkpoint --job "slurm:$jobid" --kill --store /tmp/jstore \
	>"$w/job.handle" 2>"$w/job.ckpt.err"
echo "rc=$?" >>"$w/job.ckpt.err"
wait
srun -N3 -l sh -c "echo parts \$(ls /tmp/jstore | grep -vc '^\.') procs \$(pgrep -x prog_incr | wc -l)" \
	>"$w/job.parts" 2>&1
job=$(cat "$w/job.handle")
cp /tmp/jstore/.jobs/"$job" "$w/job.manifest" 2>/dev/null
# Restart through the barrier, the go files there: each runs to its end.
srun -N3 sh -c "cp $d/out.at1 $d/out; touch $d/go.1 $d/go.2"
timeout 300 salloc -N3 --quiet "$crdbg" restart "$job" --store /tmp/jstore -v \
	>"$w/job.restart.out" 2>"$w/job.restart.err"
echo "rc=$?" >>"$w/job.restart.err"
srun -N3 -l sh -c "cat $d/out" >"$w/job.final" 2>&1
exit 0
EOF

start=$(date +%s)
# Network namespaces of other clusters (another run's) are not ours to judge.
vm_netns() { ip netns list | awk '/^crdbgvm/ { print $1 }' | sort; }
vm_netns >"$work/netns.before"
CRDBG_BUILD=$build "$top/scripts/cluster" --kind vm --nodes 3 --timeout 700 --dir "$c" -- \
	bash "$c/on-node0.sh" "$c" "$build/crdbg" "$prog" "$incr" "$build/usr/libcrdbg.so" \
	>"$work/cluster.out" 2>&1
rc=$?
echo "# cluster and session: $(($(date +%s) - start)) s, exit $rc"
[[ $rc == 0 ]] || diag "$work/cluster.out"

has() {
	local p

	for p in "${@:2}"; do grep -qF -- "$p" "$c/$1" || return 1; done
}
show() { diag "$c/$1"; }

check "three guests with kernels of their own" \
	eval "[[ \$(awk '{print \$3}' $c/nodes.out | sort -u | grep -c .) == 3 ]] &&
	      has nodes.out '0: node0 ' '1: node1 ' '2: node2 '" || show nodes.out
check "crdbg.ko loaded on every node" \
	eval "[[ \$(grep -c 'crdbg.ko\$' $c/nodes.out) == 3 ]]" || show nodes.out
# The ranks named by the lines that report a stop at the breakpoint.
bp_ranks() {
	sed -n 's/^\[\([0-9,-]*\)\]: stopped: breakpoint 1, compute at .*/\1/p' "$c/session.out" |
		tr ',' '\n' | awk -F- '{ for (i = $1; i <= ($2 == "" ? $1 : $2); i++) print i }' |
		sort -u | tr '\n' ' '
}
check "the breakpoint is hit on all three nodes" \
	eval '[[ "$(bp_ranks)" == "0 1 2 " ]]' || show session.out
check "print groups the ranks by value across kernels" \
	has session.out '[0,2]: value = 4' '[1]: value = 9' || show session.out
check "status names each rank's node" \
	eval "grep -qE '^1 +stopped +node1 ' $c/session.out &&
	      grep -qE '^2 +stopped +node2 ' $c/session.out" || show session.out
check "the job runs to its end, output labelled by rank" \
	has session.out '[1] mpi rank 1 of 3 value 9' '[0-2]: exited: code 0' || show session.out
check "the session ends cleanly" grep -qx 'rc=0' "$c/session.rc" || show session.rc
check "nothing of the session is left on any node" \
	eval "[[ -f $c/left.out && ! -s $c/left.out ]]" || show left.out
check "checkpoint --job slurm:ID across three kernels: one handle, --kill ended every task" \
	eval "grep -qx 'rc=0' $c/job.ckpt.err && grep -q '^job-' $c/job.handle &&
	      [[ \$(grep -c 'procs 0\$' $c/job.parts) == 3 ]]" || { show job.ckpt.err; show job.parts; }
check "... each node holds its own part in its own store, the manifest names all three" \
	eval "[[ \$(grep -c ': parts 1 ' $c/job.parts) == 3 ]] &&
	      grep -q '^job slurm:' $c/job.manifest && grep -q '^part 0 node0 0 ' $c/job.manifest &&
	      grep -q '^part 1 node1 1 ' $c/job.manifest && grep -q '^part 2 node2 2 ' $c/job.manifest" ||
	{ show job.parts; show job.manifest; }
check "restart of the job: every part back on its node, released together" \
	eval "grep -qx 'rc=0' $c/job.restart.err &&
	      grep -q 'every part of .* is back (computation .*, 3 parts): releasing' $c/job.restart.err" ||
	show job.restart.err
same_as_plain() {
	local r

	grep -q 'done sum ' "$c/job.plain" || return 1
	for r in 0 1 2; do
		cmp -s "$c/job.plain" <(sed -n "s/^$r: //p" "$c/job.final") || return 1
	done
}
check "... each process ends with the output of an uninterrupted run" same_as_plain ||
	{ show job.plain; show job.final; }
# The guests, their network namespace and QEMU are gone.
check "the cluster is torn down: no QEMU, no network namespace" \
	eval "[[ \$rc == 0 ]] && [[ -z \$(vm_netns | comm -13 $work/netns.before -) ]] &&
	      ! pgrep -f 'qemu-system.*$c' >/dev/null" || diag "$work/cluster.out"
exit 0
