#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The cluster of separate kernels (scripts/cluster --kind vm): three QEMU
# guests, each its own kernel with crdbg.ko loaded, Slurm across them, and
# one crdbg debug session end to end over the three (launch through srun,
# a breakpoint, print grouped by value, status naming the nodes, continue
# to the end). One cluster boot for all of it. A host test: it boots its
# own guests.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CRDBG_BUILD:-$top/build}
prog=$build/tests/debug/mpi_debug
work=$(mktemp -d /tmp/test_vm_cluster.XXXXXX)
chmod 755 "$work"
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
backend=vm-cluster
plan=9

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
w=$1 crdbg=$2 prog=$3
export OMPI_MCA_btl_tcp_if_include=eth0 OMPI_MCA_oob_tcp_if_include=eth0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
srun -N3 -l sh -c 'echo "$(hostname) $(cat /proc/sys/kernel/random/boot_id) $(test -d /sys/module/crdbg && echo crdbg.ko)"' \
	>"$w/nodes.out" 2>&1
timeout 400 "$crdbg" debug -ex 'break compute' -ex continue -ex finish \
	-ex 'print value' -ex 'status -p' -ex continue -- srun -N3 -n3 "$prog" \
	>"$w/session.out" 2>&1
echo "rc=$?" >"$w/session.rc"
# Left on a node: a server or gdb of ours, or a rank.
for n in node0 node1 node2; do
	srun -N1 -w $n pgrep -a -f "crdbg-server|gdb --interpreter|$prog" 2>/dev/null
done | grep -v -e pgrep -e on-node0.sh >"$w/left.out"
exit 0
EOF

start=$(date +%s)
CRDBG_BUILD=$build "$top/scripts/cluster" --kind vm --nodes 3 --timeout 700 --dir "$c" -- \
	bash "$c/on-node0.sh" "$c" "$build/crdbg" "$prog" >"$work/cluster.out" 2>&1
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
check "the breakpoint on three nodes is one line" \
	has session.out '[0-2]: stopped: breakpoint 1, compute at ' || show session.out
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
# The guests, their network namespace and QEMU are gone.
check "the cluster is torn down: no QEMU, no network namespace" \
	eval "[[ \$rc == 0 ]] && ! ip netns list | grep -q '^crdbgvm' &&
	      ! pgrep -f 'qemu-system.*$c' >/dev/null" || diag "$work/cluster.out"
exit 0
