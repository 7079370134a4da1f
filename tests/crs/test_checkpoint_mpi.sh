#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# crdbg checkpoint / restart of Open MPI jobs in the guest, on one freeze
# backend (argument: ptrace or kmod). TAP on stdout.
#
#   setsid unshare -n sh -c 'ip link set lo up; exec mpirun -n 2 ... prog_mpi'
#      |  (a job: mpirun and its ranks, the ranks preloading libcrdbg)
#      |  or the same with prog_mpi run alone (a singleton and its orted)
#      |  crdbg checkpoint MPIRUN_PID [--kill]
#      v
#   $STORE/<handle>  --crdbg restart HANDLE-->  the job completes
#
# Every rank waits after iteration $WAIT_AT until $work/go exists, so a
# checkpoint sees a known output; the "rank R iter I sum S" and "rank R
# done total T" lines of each run, sorted, must equal an uninterrupted run's.
set -u
. "$(dirname "$0")/lib.sh" mpi "$@"
prog=$build/tests/crs/prog_mpi
lib=$build/usr/libcrdbg.so
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MPIR_DO_NOT_WARN=1
ITERS=16
NAP=100
WAIT_AT=3
GO=$work/go

cleanup() {
	pkill -9 -f "$prog" 2>/dev/null
	rm -rf "$work"
}

secs() { awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'; }
# No process of any job is left (the ranks die after mpirun).
none_left() { ! pgrep -f "$prog" >/dev/null; }
# Every rank has printed its iteration WAIT_AT (and now waits for $GO).
waiting() { [[ $(grep -c "^rank [0-9]* iter $WAIT_AT sum " "$1" 2>/dev/null) == "$2" ]]; }

# start NAME KIND: start a job (KIND job: mpirun -n 2; singleton: the
# program alone) in its own session and network namespace, output appended
# to $work/NAME.out; wait until every rank waits.
start() {
	local name=$1 kind=$2 ranks=2 wait=${3:-yes}
	: >"$work/$name.out"
	: >"$work/$name.err"
	if [[ $kind == job ]]; then
		setsid unshare -n sh -c 'ip link set lo up; exec "$@"' sh \
			mpirun -n 2 --oversubscribe --mca btl self,vader \
			--mca btl_vader_single_copy_mechanism none -x LD_PRELOAD="$lib" \
			"$prog" "$ITERS" "$NAP" "$WAIT_AT" "$GO" \
			>>"$work/$name.out" 2>>"$work/$name.err" </dev/null &
	else
		ranks=1
		setsid unshare -n sh -c 'ip link set lo up; exec "$@"' sh \
			env LD_PRELOAD="$lib" "$prog" "$ITERS" "$NAP" "$WAIT_AT" "$GO" \
			>>"$work/$name.out" 2>>"$work/$name.err" </dev/null &
	fi
	pid=$!
	disown
	[[ $wait == yes ]] || return 0
	wait_for waiting "$work/$name.out" "$ranks"
}

# ckpt NAME [ARGS...]: crdbg checkpoint of the job $pid; its status in
# $rc, its handle in $h, its messages in $work/NAME.log.
ckpt() {
	"$crdbg" checkpoint "$pid" --backend "$backend" "${@:2}" >"$work/$1.h" 2>"$work/$1.log"
	rc=$?
	h=$(cat "$work/$1.h")
}
# rstart NAME HANDLE: crdbg restart, its output in $work/NAME.r.
rstart() { timeout 300 "$crdbg" restart "$2" --backend "$backend" >"$work/$1.r" 2>&1; }

# lines FILE: the rank lines of FILE, sorted.
lines() { grep -E '^rank [0-9]+ (iter|done) ' "$1" | sort; }
same_as() { lines "$1" >"$1.lines" && test -s "$1.lines" && cmp -s "$work/$2.expected" "$1.lines"; }
# save NAME: keep the output files as they are at checkpoint time (CRIU
# checks their size at restore).
save() { cp "$work/$1.out" "$work/$1.out.ckpt"; cp "$work/$1.err" "$work/$1.err.ckpt"; }
back() { cp "$work/$1.out.ckpt" "$work/$1.out"; cp "$work/$1.err.ckpt" "$work/$1.err"; }

echo "1..16"

for kind in job singleton; do
	ranks=2
	[[ $kind == singleton ]] && ranks=1
	# --- an uninterrupted run ------------------------------------------
	touch "$GO"
	t0=$(date +%s.%N)
	start "$kind-ref" "$kind" no
	wait_for gone "$pid"
	wait_for none_left
	t1=$(date +%s.%N)
	lines "$work/$kind-ref.out" >"$work/$kind.expected"
	check "$kind: an uninterrupted run prints every iteration and done line of $ranks rank(s)" \
		test "$(wc -l <"$work/$kind.expected")" = $(((ITERS + 1) * ranks))
	echo "# $kind: uninterrupted run $(secs) s"
	[[ -s $work/$kind.expected ]] || diag "$work/$kind-ref.err"
	rm -f "$GO"

	# --- checkpoint --kill, restart without a debugger -------------------
	start "$kind-k" "$kind"
	t0=$(date +%s.%N)
	ckpt "$kind-k" --kill
	t1=$(date +%s.%N)
	hk=$h
	wait_for gone "$pid"
	wait_for none_left
	save "$kind-k"
	check "$kind: checkpoint --kill stores the job and kills it ($(secs) s)" \
		test "$rc" = 0 -a -n "$hk" -a -d "$CRDBG_STORE/$hk"
	[[ $rc == 0 ]] || diag "$work/$kind-k.log"
	nprocs=$(grep -c '^process ' "$CRDBG_STORE/$hk/metadata" 2>/dev/null)
	echo "# $kind: $nprocs processes checkpointed"
	touch "$GO"
	t0=$(date +%s.%N)
	rstart "$kind-k" "$hk"
	rc=$?
	t1=$(date +%s.%N)
	check "$kind: restart exits 0 ($(secs) s)" test "$rc" = 0
	[[ $rc == 0 ]] || diag "$work/$kind-k.r"
	check "$kind: after restart the job's output equals an uninterrupted run's" \
		same_as "$work/$kind-k.out" "$kind"
	same_as "$work/$kind-k.out" "$kind" || diag "$work/$kind-k.out" "$work/$kind-k.err"
	wait_for none_left
	rm -f "$GO"

	# --- checkpoint, continue ------------------------------------------
	start "$kind-c" "$kind"
	ckpt "$kind-c"
	hc=$h
	save "$kind-c"
	alive=no
	kill -0 "$pid" 2>/dev/null && alive=yes
	touch "$GO"
	wait_for gone "$pid"
	wait_for none_left
	check "$kind: checkpoint (continue) exits 0 and the job goes on to the uninterrupted output" \
		test "$rc" = 0 -a -n "$hc" -a "$alive" = yes -a -d "$CRDBG_STORE/$hc"
	[[ $rc == 0 ]] || diag "$work/$kind-c.log"
	same_as "$work/$kind-c.out" "$kind" || diag "$work/$kind-c.out" "$work/$kind-c.err"
	check "$kind: continued job's output equals an uninterrupted run's" \
		same_as "$work/$kind-c.out" "$kind"

	# --- the continue checkpoint, restarted once the job is gone ---------
	# (Open MPI removed its session directory and shared-memory segments
	# when the job ended: crdbg puts back the tmpfs files the job mapped.)
	back "$kind-c"
	rstart "$kind-c" "$hc"
	rc=$?
	check "$kind: the continue checkpoint of a finished job restarts to the uninterrupted output" \
		eval 'test "$rc" = 0 && same_as "$work/$kind-c.out" "$kind"'
	[[ $rc == 0 ]] || diag "$work/$kind-c.r"
	wait_for none_left
	rm -f "$GO"

	# --- checkpoint, continue, kill the job, restart ---------------------
	start "$kind-ck" "$kind"
	ckpt "$kind-ck"
	hck=$h
	save "$kind-ck"
	running() { local s; s=$(ps -o stat= -p "$1") && [[ $s != T* ]]; }
	alive=no
	running "$pid" && alive=yes
	procs=$(awk '$1 == "process" { print $2 }' "$CRDBG_STORE/$hck/metadata" 2>/dev/null)
	kill -9 $procs 2>/dev/null
	for p in $procs; do wait_for gone "$p"; done
	touch "$GO"
	back "$kind-ck"
	rstart "$kind-ck" "$hck"
	rrc=$?
	check "$kind: checkpoint (continue), kill of the running job, restart: completes with the uninterrupted output" \
		eval 'test "$rc" = 0 -a "$alive" = yes -a "$rrc" = 0 && same_as "$work/$kind-ck.out" "$kind"'
	[[ $rc == 0 ]] || diag "$work/$kind-ck.log"
	[[ $rrc == 0 ]] || diag "$work/$kind-ck.r"
	wait_for none_left
	rm -f "$GO"
done
[[ $n == 16 ]] || echo "# planned 16 tests, ran $n"
exit $((failed != 0))
