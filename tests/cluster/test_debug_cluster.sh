#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# crdbg debug sessions of MPI jobs spread over a three-node Slurm cluster
# (scripts/cluster --kind ns): six ranks, two per node, acquired through
# MPIR from srun and from Open MPI's mpirun inside an allocation, an
# attach to a running srun job, and a node lost mid-session. One
# crdbg-server per node (started inside the job with srun --overlap)
# drives a gdb per rank of its node by node-local pid, and the tree's
# links cross the nodes' network namespaces. One cluster for all
# scenarios.
#   test_debug_cluster.sh          every session: srun, mpirun, a server
#                                  that cannot start and an attach (one
#                                  running job), a node lost
#   test_debug_cluster.sh --tcg    the same sized for the TCG guest (guest
#                                  group clusterdebug): node2 is cut off
#                                  (its link down: no FIN, no RST) in the
#                                  srun session once its checks are done,
#                                  not killed in a session of its own
#   test_debug_cluster.sh --srun   the srun session alone, to its clean
#                                  end: what --tcg cannot check (the host
#                                  test of make check)
# In the guest a session costs two to four minutes, most of it six gdbs
# reading the symbols of every library MPI_Init loads
# (Documentation/testing.md).
set -uo pipefail

mode=full
case ${1:-} in
--tcg) mode=tcg ;;
--srun) mode=srun ;;
"") ;;
*) echo "test_debug_cluster.sh: unknown argument '$1' (--tcg, --srun or nothing)" >&2; exit 2 ;;
esac
tcg=false
[[ $mode == tcg ]] && tcg=true

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CRDBG_BUILD:-$top/build}
crdbg=$build/crdbg
prog=$build/tests/debug/mpi_debug
work=$(mktemp -d /tmp/test_debug_cluster.XXXXXX)
chmod 755 "$work"
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
backend=cluster
plan=22
limit=300	# seconds for one session
whole=1500	# ...and for the cluster with all of them
if $tcg; then
	plan=23
	limit=600
	whole=2400
elif [[ $mode == srun ]]; then
	plan=6
fi

. "$top/tests/guest/tap.sh"

echo "TAP version 13"
echo "1..$plan"

if ! command -v slurmctld >/dev/null || ! command -v mpirun >/dev/null ||
   [[ ! -x $prog ]]; then
	for i in $(seq $plan); do skip "debug on a cluster" "needs slurm-wlm, Open MPI and $prog (make deps; make)"; done
	exit 0
fi

# What every scenario runs on the cluster's login node; its output
# files land in $work for the checks below.
cat >"$work/scenarios.sh" <<'EOF'
set -u
w=$1 crdbg=$2 prog=$3 mode=$4 limit=$5
tcg=false
[ "$mode" = tcg ] && tcg=true
export OMPI_MCA_btl_tcp_if_include=10.20.0.0/24 OMPI_MCA_oob_tcp_if_include=10.20.0.0/24
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$w"
# Left on any node: a server or a rank of ours (the build's own paths,
# so that other sessions on the machine do not count), or a gdb whose
# parent is one of ours.
leftovers() {
	local b
	b=$(dirname "$crdbg")
	pgrep -a -f "^$b/|^[^ ]*gdb .*$b/|^srun .*$b/|^\./mpi_debug " |
		grep -v -e pgrep -e scenarios.sh -e "${1:-^$}"
}
# What is still left after a while: a step's tasks end some time after
# its srun is told to end them.
settled_leftovers() {
	for i in $(seq 150); do [ -z "$(leftovers "$@")" ] && return; sleep 0.1; done
	leftovers "$@"
}
session() {
	local name=$1 t0=$SECONDS; shift
	timeout "$limit" "$@" </dev/null >"$w/$name.out" 2>&1
	echo "rc=$?" >"$w/$name.rc"
	echo "$name $((SECONDS - t0))" >>"$w/seconds"
	settled_leftovers >"$w/$name.left"
}
# A run command waits 120 s in batch mode (console.md): the first
# continue through MPI_Init can take longer in the TCG guest. The group
# stop is off and wait lets every rank reach the breakpoint: a node's
# ranks may come seconds after another's, and with it on they would be
# interrupted on their way.
ex=(-ex "stopall off" -ex "break mpi_debug.c:51" -ex "timeout $((limit - 60))" -ex continue -ex wait
    -ex "print value" -ex "input hello mpi"
    -ex "timeout 10" -ex continue -ex interrupt -ex stacks -ex "status -p")

# until SECONDS CMD...: poll CMD for at most SECONDS.
until_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.2; done
}
# Each node's PID namespace: one server of ours and a gdb per rank (two).
count_per_node() {
	local b n ns servers gdbs p
	b=$(dirname "$crdbg")
	for n in 0 1 2; do
		ns=$(readlink "/proc/$(pgrep -P "$(cat "$CRDBG_CLUSTER_DIR/run/node$n.pid")")/ns/pid")
		servers=0 gdbs=0
		for p in $(pgrep -f "^$b/sdm/crdbg-server "); do
			[ "$(readlink /proc/$p/ns/pid)" = "$ns" ] && servers=$((servers + 1))
		done
		for p in $(pgrep -f "^[^ ]*gdb .*mpi_debug"); do
			[ "$(readlink /proc/$p/ns/pid)" = "$ns" ] && gdbs=$((gdbs + 1))
		done
		echo "node$n servers=$servers gdbs=$gdbs" >>"$w/pernode.count"
	done
}
# node2_ours: our server and gdbs still running in node2's PID namespace.
node2_ours() {
	local b ns p
	b=$(dirname "$crdbg")
	ns=$(readlink "/proc/$(pgrep -P "$(cat "$CRDBG_CLUSTER_DIR/run/node2.pid")")/ns/pid")
	for p in $(pgrep -f "^$b/sdm/crdbg-server |^[^ ]*gdb .*mpi_debug"); do
		[ "$(readlink /proc/$p/ns/pid)" = "$ns" ] && ps -o pid=,args= -p "$p"
	done
}
# kill_node2: node2's namespaces and everything in them; back once its
# PID 1 is gone (the kernel then kills the rest).
kill_node2() {
	local node2 node2_init
	node2=$(cat "$CRDBG_CLUSTER_DIR/run/node2.pid")
	node2_init=$(pgrep -P "$node2")
	kill -KILL "$node2"
	for i in $(seq 300); do kill -0 "$node2_init" 2>/dev/null || break; sleep 0.1; done
	sleep 1
}

# srun's table names the executable as given: a relative name here.
cp "$prog" "$w/mpi_debug"
if [ "$mode" = srun ]; then
	session srun "$crdbg" debug "${ex[@]}" -- srun -N3 -n6 ./mpi_debug deadlock
	exit 0
fi
$tcg || session srun "$crdbg" debug "${ex[@]}" -- srun -N3 -n6 ./mpi_debug deadlock
session mpirun salloc -N3 -n6 "$crdbg" debug "${ex[@]}" -- mpirun "$prog" deadlock

# One running srun job, its ranks spinning until released, for two
# sessions: one whose server cannot start on a node, which must leave
# the job as it found it, then an attach that debugs and releases it.
t0=$SECONDS
srun -N3 -n6 "$prog" spin >"$w/job.out" 2>&1 &
job=$!
# Up to a session's limit: srun's six ranks start slowly in a loaded
# TCG guest.
ranks_up() { [ "$(grep -c '^mpi rank' "$w/$1.out")" = "$2" ]; }
until_for "$limit" ranks_up job 6
echo "job-up $((SECONDS - t0))" >>"$w/seconds"

# A server that cannot start: on node1 (its own mount namespace) the
# server's binary is broken, as on a node with a bad install: a tmpfs
# over its directory holds /bin/false in its place. nsenter --root:
# entering a mount namespace makes its root mount the root, and in the
# guest every process runs chrooted (scripts/vm), so without it the
# command would run in the guest's initramfs, where that path is not.
node1=$(pgrep -P "$(cat "$CRDBG_CLUSTER_DIR/run/node1.pid")")
sdm=$(dirname "$crdbg")/sdm
in_node1() { nsenter -t "$node1" -m -p --root --wd "$@"; }
in_node1 sh -c "mount -t tmpfs none '$sdm' && cp /bin/false '$sdm/crdbg-server'" 2>"$w/nostart.mount"
t0=$SECONDS
timeout "$limit" "$crdbg" attach -ex "print spinning" $job </dev/null >"$w/nostart.out" 2>&1
echo "rc=$?" >"$w/nostart.rc"
echo "nostart $((SECONDS - t0))" >>"$w/seconds"
in_node1 umount "$sdm" 2>>"$w/nostart.mount"
settled_leftovers "$prog spin" >"$w/nostart.left"
# Left running and untraced: srun and its six ranks, none stopped.
ranks=$(pgrep -d, -f "^$prog spin")
[ "$(echo "$ranks" | tr , '\n' | grep -c .)" = 6 ] && kill -0 $job &&
	! ps -o stat= -p "$ranks" | grep -q '[tT]' && echo running >"$w/job.state"

session attach "$crdbg" attach -ex "print spinning" -ex "set var spinning = 0" -ex continue $job
wait $job
echo "rc=$?" >"$w/job.rc"

# A node lost mid-session: node2 (ranks 4 and 5) and everything on it
# killed while the session is stopped at a breakpoint (--tcg: cut off
# first, then killed once its server is gone).
if $tcg; then
	# The srun session, then node2 lost in it: the console is fed
	# through a FIFO so that the node goes between two commands. The
	# session's links are closed after 20 s of silence (the default is
	# 60), which the tree's servers inherit through srun.
	mkfifo "$w/srun.in"
	SDM_PEER_TIMEOUT=20 timeout "$limit" "$crdbg" debug -- srun -N3 -n6 ./mpi_debug deadlock \
		<"$w/srun.in" >"$w/srun.out" 2>&1 &
	dbg=$!
	exec 3>"$w/srun.in"
	t0=$SECONDS
	# As in the batch sessions (ex above): every rank reaches the
	# breakpoint before print, the group stop off.
	printf '%s\n' "stopall off" "break mpi_debug.c:51" "timeout $((limit - 60))" continue \
		wait >&3
	until_for "$limit" grep -q 'stopped: breakpoint' "$w/srun.out"
	count_per_node
	printf '%s\n' "print value" "input hello mpi" "timeout 10" continue \
		interrupt stacks "status -p" >&3
	until_for "$limit" grep -qE '^5 +stopped +node2' "$w/srun.out"
	# node2 cut off, as by a pulled cable: its port on the bridge down,
	# no FIN, no RST, its kernel and processes still running.
	ip link set p2 down
	t_cut=$SECONDS
	printf '%s\n' "print value" "status -p" >&3
	# Its server hears nothing from its parent: it must end by itself,
	# and its gdbs with it, within the session's SDM_PEER_TIMEOUT.
	until_for 120 eval '[ -z "$(node2_ours)" ]'
	echo "cut-server-gone $((SECONDS - t_cut))" >>"$w/seconds"
	node2_ours >"$w/cut.node2"
	until_for "$limit" grep -qE '^5 +lost' "$w/srun.out"
	echo "cut-status $((SECONDS - t_cut))" >>"$w/seconds"
	kill_node2
	printf '%s\n' quit >&3
	exec 3>&-
	wait $dbg
	echo "rc=$?" >"$w/srun.rc"
	echo "srun+lost $((SECONDS - t0))" >>"$w/seconds"
	settled_leftovers >"$w/srun.left"
	for f in out rc left; do cp "$w/srun.$f" "$w/lost.$f"; done
	exit 0
fi
mkfifo "$w/lost.in"
timeout "$limit" "$crdbg" debug -- srun -N3 -n6 "$prog" <"$w/lost.in" >"$w/lost.out" 2>&1 &
dbg=$!
exec 3>"$w/lost.in"
echo "break mpi_debug.c:51" >&3
echo "continue" >&3
until_for "$limit" grep -q 'stopped: breakpoint' "$w/lost.out"
count_per_node
kill_node2
echo "print value" >&3
echo "status -p" >&3
echo "quit" >&3
exec 3>&-
wait $dbg
echo "rc=$?" >"$w/lost.rc"
settled_leftovers >"$w/lost.left"

EOF

start=$(date +%s)
"$top/scripts/cluster" --nodes 3 --timeout $whole --dir "$work/c" -- \
	bash "$work/scenarios.sh" "$work" "$crdbg" "$prog" $mode $limit >"$work/cluster.out" 2>&1
rc=$?
echo "# cluster and scenarios: $(($(date +%s) - start)) s, exit $rc"
sed -n 's/^cluster: \(.* idle after .*\)/# cluster: \1/p' "$work/cluster.out"
[[ -s $work/seconds ]] && echo "# seconds per session: $(tr '\n' ' ' <"$work/seconds")"
# In a guest group the sessions' files are kept with its results.
if [[ -n ${CRDBG_RESULTS:-} ]]; then
	mkdir -p "$CRDBG_RESULTS/debug-cluster.files"
	cp "$work"/*.out "$work"/*.rc "$work"/*.left "$work"/*.count "$work"/*.state \
		"$work"/*.mount "$work"/*.node2 "$work"/seconds "$CRDBG_RESULTS/debug-cluster.files/" 2>/dev/null
fi
[[ $rc == 0 ]] || diag "$work/cluster.out"

# has NAME LINE...: every LINE stands in NAME's output.
has() {
	local f=$work/$1.out p
	shift
	for p; do grep -qF -- "$p" "$f" || return 1; done
}
has_line() { grep -qxE -- "$2" "$work/$1.out"; }
show() { diag "$work/$1.out"; }

# stopped_at NAME: the ranks its stop lines at mpi_debug.c:51 name, one a
# line, sorted. One line [0-5] where the six stops come within the
# console's grace; under a loaded TCG some come later, and the group stop
# reports them on a line of their own.
stopped_at() {
	sed -nE 's/^\[([0-9,-]+)\]: stopped: breakpoint [0-9]+, main at .*mpi_debug\.c:51$/\1/p' \
		"$work/$1.out" | tr ',' '\n' |
		awk -F- '{ for (r = $1; r <= ($2 == "" ? $1 : $2); r++) print r }' | sort -n | uniq
}
for l in srun mpirun; do
	check "$l: the breakpoint stops all six ranks of three nodes" \
		eval '[[ $(stopped_at $l | tr "\n" " ") == "0 1 2 3 4 5 " ]]' || show $l
	check "$l: print groups the ranks by value" \
		has $l '[0,2,4]: value = 4' '[1,3,5]: value = 9' || show $l
	check "$l: output carries the rank that wrote it, input reaches rank 0" \
		has $l '[3] mpi rank 3 of 6 value 9' '[0] mpi rank 0 got: hello mpi' || show $l
	check "$l: stacks shows the deadlock between ranks of different nodes" \
		has $l '  [0,2,4] recv_forever' '  [1,3,5] barrier_forever' || show $l
	check "$l: status names each rank's node" \
		eval "has_line $l '1 +stopped +node0 .*' && has_line $l '3 +stopped +node1 .*' &&
		      has_line $l '5 +stopped +node2 .*'" || show $l
	# In --tcg the srun session ends with a node lost: checked below.
	[[ $l == srun ]] && $tcg && continue
	check "$l: the session ends cleanly, nothing left on any node" \
		eval "grep -qx 'rc=0' $work/$l.rc && [[ ! -s $work/$l.left ]]" ||
		diag "$work/$l.rc" "$work/$l.left" "$work/$l.out"
	[[ $mode == srun ]] && exit 0
done

check "attach to a running srun job: its six ranks, released, end well" \
	eval "has attach '[0-5]: spinning = 1' '[0-5]: exited: code 0' &&
	      grep -qx 'rc=0' $work/attach.rc && grep -qx 'rc=0' $work/job.rc" ||
	diag "$work/attach.out" "$work/job.out"
check "attach: nothing of the debugger is left" eval "[[ ! -s $work/attach.left ]]" ||
	diag "$work/attach.left"

check "one crdbg-server per node, driving a gdb for each of its two ranks" \
	eval "[[ \$(cat $work/pernode.count) == \$'node0 servers=1 gdbs=2\nnode1 servers=1 gdbs=2\nnode2 servers=1 gdbs=2' ]]" ||
	diag "$work/pernode.count"
check "node lost: its ranks are marked lost, naming the node" \
	has_line lost '\[4-5\]: lost: .*\(node node2\)' || show lost
check "node lost: the session goes on with the other ranks" \
	has lost '[0,2]: value = 4' '[1,3]: value = 9' || show lost
check "node lost: status shows the lost ranks" \
	has_line lost '5 +lost .*' || show lost
# Exit 1: print failed on the lost ranks; 124 would be a hang.
check "node lost: quit ends the session and the job" \
	eval "grep -qxE 'rc=[01]' $work/lost.rc" || diag "$work/lost.rc" "$work/lost.out"
check "node lost: nothing is left on the other nodes" \
	eval "[[ ! -s $work/lost.left ]]" || diag "$work/lost.left"
if $tcg; then
	check "node cut off: its link closes after SDM_PEER_TIMEOUT (20 s), its ranks lost, saying why" \
		has_line lost '\[4-5\]: lost: server 2: its node answered nothing for 20 s \(lost or cut off\) \(node node2\)' ||
		show lost
	check "node cut off: its server and its gdbs end by themselves" \
		eval "[[ -f $work/cut.node2 && ! -s $work/cut.node2 ]]" || diag "$work/cut.node2" "$work/seconds"
fi
check "a server that cannot start: one line naming the node, exit 1" \
	eval "grep -qx 'rc=1' $work/nostart.rc &&
	      grep -qE '^crdbg: .*missing: 2-3 on node1; .*node1.*' $work/nostart.out" ||
	diag "$work/nostart.rc" "$work/nostart.out" "$work/nostart.mount"
check "a server that cannot start: nothing of the debugger is left, the job runs on" \
	eval "[[ ! -s $work/nostart.left ]] && grep -qx running $work/job.state" ||
	diag "$work/nostart.left" "$work/job.out"
exit 0
