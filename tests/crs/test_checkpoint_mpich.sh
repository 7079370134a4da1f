#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# crdbg checkpoint / restart of MPICH jobs (Debian's MPICH: ch4 over UCX,
# launched by mpiexec.hydra) in the guest, on one freeze backend
# (argument: ptrace or kmod). TAP on stdout.
#
# UCX maps its shared memory as POSIX segments it unlinks at once (ghost
# files of 4 MiB, over CRIU's default limit: crdbg finds them in the
# ranks' mappings) and, with its sysv transport, as SysV segments, which
# CRIU dumps only with an IPC namespace of the tree's own. So: a job with
# UCX_TLS=^sysv and a job under `unshare --ipc` checkpoint and restart to
# an uninterrupted run's output; a job with SysV segments in the
# machine's IPC namespace is refused in one line that says what to do,
# keeps nothing and goes on.
set -u
. "$(dirname "$0")/lib.sh" mpich "$@"
prog=$build/tests/crs/prog_mpi_mpich
lib=$build/usr/libcrdbg.so
ITERS=12
NAP=100
WAIT_AT=3
GO=$work/go

echo "1..6"
if [[ ! -x $prog ]] || ! command -v mpiexec.hydra >/dev/null; then
	for i in 1 2 3 4 5 6; do skip "MPICH job checkpoint $i" "no MPICH here (mpicc.mpich, mpiexec.hydra: make deps)"; done
	exit 0
fi

none_left() { ! pgrep -f "$prog" >/dev/null; }
waiting() { [[ $(grep -c "^rank [0-9]* iter $WAIT_AT sum " "$1" 2>/dev/null) == 2 ]]; }
lines() { grep -E '^rank [0-9]+ (iter|done) ' "$1" | sort; }
same_as_ref() { lines "$1" >"$1.lines" && test -s "$1.lines" && cmp -s "$work/expected" "$1.lines"; }
handles() { ls "$CRDBG_STORE" 2>/dev/null | grep -v '^\.' | sort; }

# start NAME [WRAPPER...]: mpiexec.hydra -n 2 of the program, in a session
# of its own, under WRAPPER (env UCX_TLS=..., unshare --ipc); $pid is
# mpiexec.hydra's. Waits until both ranks wait, unless $GO exists.
start() {
	local name=$1
	shift
	: >"$work/$name.out"
	: >"$work/$name.err"
	setsid "$@" mpiexec.hydra -n 2 -genv LD_PRELOAD "$lib" \
		"$prog" "$ITERS" "$NAP" "$WAIT_AT" "$GO" \
		>>"$work/$name.out" 2>>"$work/$name.err" </dev/null &
	pid=$!
	disown
	pids+=("$pid")
	[[ -e $GO ]] || wait_for waiting "$work/$name.out"
}

# --- an uninterrupted run ----------------------------------------------
touch "$GO"
start ref env UCX_TLS=^sysv
wait_for gone "$pid"
wait_for none_left
lines "$work/ref.out" >"$work/expected"
check "an uninterrupted MPICH run prints every iteration and done line of 2 ranks" \
	test "$(wc -l <"$work/expected")" = $(((ITERS + 1) * 2))
[[ -s $work/expected ]] || diag "$work/ref.err"
rm -f "$GO"

# ckpt_kill_restart NAME WRAPPER...: checkpoint --kill, restart; sets $rc,
# $rrc and $h.
ckpt_kill_restart() {
	local name=$1
	shift
	start "$name" "$@"
	h=$("$crdbg" checkpoint "$pid" --kill --backend "$backend" 2>"$work/$name.log")
	rc=$?
	wait_for gone "$pid"
	wait_for none_left
	touch "$GO"
	timeout 300 "$crdbg" restart "$h" --backend "$backend" >"$work/$name.r" 2>&1
	rrc=$?
	[[ $rc == 0 ]] || diag "$work/$name.log"
	[[ $rrc == 0 ]] || diag "$work/$name.r"
	wait_for none_left
	rm -f "$GO"
}

# --- UCX without SysV: its unlinked POSIX segments are ghost files ------
ckpt_kill_restart posix env UCX_TLS=^sysv
# the launcher and its proxy take no MPIR protocol: said with -v only
check "UCX_TLS=^sysv: checkpoint --kill stores the job, the ghost limit raised for UCX's segments, no word of the launcher without -v" \
	eval 'test "$rc" = 0 -a -n "$h" && grep -q -- "--ghost-limit=" "$CRDBG_STORE/$h/metadata" &&
	      ! grep -q "does not use libcrdbg" "$work/posix.log"'
check "UCX_TLS=^sysv: the restart completes with the uninterrupted output" \
	eval 'test "$rrc" = 0 && same_as_ref "$work/posix.out"'
same_as_ref "$work/posix.out" || diag "$work/posix.out" "$work/posix.err"

# --- SysV segments in an IPC namespace of the job's own ------------------
ckpt_kill_restart ipcns unshare --ipc
check "unshare --ipc: checkpoint --kill, restart: completes with the uninterrupted output" \
	eval 'test "$rc" = 0 -a "$rrc" = 0 && same_as_ref "$work/ipcns.out"'
same_as_ref "$work/ipcns.out" || diag "$work/ipcns.out" "$work/ipcns.err"

# --- SysV segments in the machine's IPC namespace: refused, nothing kept --
before=$(handles)
start sysv env
"$crdbg" checkpoint "$pid" --backend "$backend" >"$work/sysv.h" 2>"$work/sysv.log"
rc=$?
touch "$GO"
wait_for gone "$pid"
wait_for none_left
check "SysV memory outside an own IPC namespace: refused in one line saying what to do, nothing kept" \
	eval 'test "$rc" != 0 -a ! -s "$work/sysv.h" &&
	      test "$(grep -c "^crdbg: checkpoint: " "$work/sysv.log")" = 1 &&
	      grep "^crdbg: checkpoint: " "$work/sysv.log" | grep -q "unshare --ipc" &&
	      test "$(handles)" = "$before"'
diag "$work/sysv.log"
check "SysV memory outside an own IPC namespace: the refused job goes on to the uninterrupted output" \
	same_as_ref "$work/sysv.out"
[[ $n == 6 ]] || echo "# planned 6 tests, ran $n"
exit $((failed != 0))
