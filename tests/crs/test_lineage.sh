#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The tree's lineage at restart, in the guest, on one freeze backend
# (argument: ptrace or kmod). TAP on stdout. Documentation/checkpoint.md,
# "pid, ppid, pgid, sid"; usr/crs/lineage.h.
#
#   setsid sh -c 'prog & wait'       the root's parent leads its session
#   checkpoint --kill; sh ends; restart: pid, ppid, pgid, sid as before
#
#   prog_lineage 2 ...               srun's layout: a session whose leader
#                                    is gone, a "stepd" parent, the second
#                                    task in the first task's group
#   checkpoint --job T0,T1 --kill; the stepd ends; restart JOB: both tasks
#   back as the stepd's children, in its session, in T0's group; the
#   outputs those of an uninterrupted run
#
#   a parent still alive (the test's shell): restarted as before, criu the
#   root's parent, and -v says why
set -u
. "$(dirname "$0")/lib.sh" lineage "$@"
prog=$build/tests/crs/prog_ckpt
lin=$build/tests/crs/prog_lineage
export CKPT_GO=$work/go
STEPS=30
NAP=20

running() { local s; s=$(ps -o stat= -p "$1") && [[ $s != T* ]]; }
seq 0 $((STEPS - 1)) | sed 's/^/step /' >"$work/expected"
all_steps() { grep -E '^step ' "$1" | cmp -s "$work/expected" -; }
no_keeper() { ! pgrep -x crdbg-lineage >/dev/null; }
# in_shell NAME THEN: the program started by a shell that leads its own
# session and then runs THEN; pid and sh_pid once it is at step 5.
in_shell() {
	setsid sh -c '"$0" 1 "$1" "$2" >"$3" 2>&1 & echo $! >"$4"; '"$2" \
		"$prog" "$STEPS" "$NAP" "$work/$1.out" "$work/$1.pid" </dev/null &
	wait_for has_line "$work/$1.out" '^step 5$'
	pid=$(cat "$work/$1.pid")
	sh_pid=$(ps -o ppid= -p "$pid" | tr -d ' ')
	pids+=("$pid" "$sh_pid")
}

echo "1..10"

# --- the parent leads the session, and is gone at restart ----------------
rm -f "$CKPT_GO"
in_shell a 'wait'
before=$(ids "$pid" 1)
"$crdbg" checkpoint "$pid" --backend "$backend" --kill >"$work/ha" 2>"$work/a.ckpt"
wait_for gone "$pid"
wait_for gone "$sh_pid"
ha=$(cat "$work/ha")
timeout 120 "$crdbg" restart "$ha" --backend "$backend" -v >"$work/a.restart" \
	2>"$work/a.rlog" &
rpid=$!
pids+=("$rpid")
wait_for running "$pid"
after=$(ids "$pid" 1)
echo "# before: $before; after: $after"
check "parent leading the session: pid, ppid, pgid, sid kept" test "$after" = "$before"
[[ $after == "$before" ]] || diag "$work/a.rlog"
touch "$CKPT_GO"
wait "$rpid"
rc=$?
check "parent leading the session: the restart ends with the program's status, its output whole" \
	eval '[[ $rc == 0 ]] && all_steps "$work/a.out"'
[[ $rc == 0 ]] || diag "$work/a.rlog" "$work/a.out"
check "parent leading the session: no keeper left" wait_for no_keeper
# criu must be the keeper's child: the one started ahead was not used
check "parent leading the session: criu run by the keeper, not the one started ahead" \
	eval '! grep -q "started before the checkpoint was read" "$work/a.rlog"'

# --- srun's layout: two trees, one parent, a session led by a gone pid ------
rm -f "$CKPT_GO"
LD_PRELOAD=$build/usr/libcrdbg.so "$lin" 2 "$work/t.out" "$prog" 1 "$STEPS" "$NAP" \
	>"$work/layout" </dev/null
stepd=$(awk '/^stepd/ { print $2 }' "$work/layout")
sid=$(awk '/^stepd/ { print $4 }' "$work/layout")
t0=$(awk '$1 == "task" && $2 == 0 { print $3 }' "$work/layout")
t1=$(awk '$1 == "task" && $2 == 1 { print $3 }' "$work/layout")
pids+=("$stepd" "$t0" "$t1")
wait_for has_line "$work/t.out.0" '^step 5$'
wait_for has_line "$work/t.out.1" '^step 5$'
before="$(ids "$t0" 1) / $(ids "$t1" 1)"
echo "# layout: stepd $stepd session $sid tasks $t0 $t1; ids $before"
check "layout: the tasks' parent is the stepd, their session a gone leader's, T1 in T0's group" \
	test "$before" = "$t0 $stepd $t0 $sid / $t1 $stepd $t0 $sid"
"$crdbg" checkpoint --job "$t0,$t1" --backend "$backend" --kill >"$work/hj" 2>"$work/j.ckpt"
hj=$(cat "$work/hj")
wait_for gone "$t0"
wait_for gone "$t1"
wait_for gone "$stepd"
timeout 180 "$crdbg" restart "$hj" --backend "$backend" -v >"$work/j.restart" \
	2>"$work/j.rlog" &
rpid=$!
pids+=("$rpid")
wait_for running "$t0"
wait_for running "$t1"
after="$(ids "$t0" 1) / $(ids "$t1" 1)"
echo "# after: $after"
check "layout: both tasks back with their pid, ppid, pgid and sid" test "$after" = "$before"
[[ $after == "$before" ]] || diag "$work/j.rlog"
check "layout: their parent is one keeper, in the gone leader's session" \
	eval '[[ $(ps -o comm= -p "$stepd") == crdbg-lineage && $(ps -o sid= -p "$stepd" | tr -d " ") == "$sid" ]]'
touch "$CKPT_GO"
wait "$rpid"
rc=$?
check "layout: the job's restart ends 0, each task's output an uninterrupted run's" \
	eval '[[ $rc == 0 ]] && all_steps "$work/t.out.0" && all_steps "$work/t.out.1"'
[[ $rc == 0 ]] || diag "$work/j.rlog" "$work/t.out.0" "$work/t.out.1"
check "layout: the keeper and the session's stand-in end with the tasks" wait_for no_keeper

# --- the parent still runs (it sleeps on): criu is the root's parent, as before
rm -f "$CKPT_GO"
in_shell c 'wait; exec sleep 600'
"$crdbg" checkpoint "$pid" --backend "$backend" --kill >"$work/hc" 2>"$work/c.ckpt"
wait_for gone "$pid"
touch "$CKPT_GO"
timeout 120 "$crdbg" restart "$(cat "$work/hc")" --backend "$backend" -v >"$work/c.restart" \
	2>"$work/c.rlog"
rc=$?
check "a parent that still runs: the restart works as before and -v says why the parent is not kept" \
	eval '[[ $rc == 0 ]] && all_steps "$work/c.out" && grep -q "are not kept (pid $sh_pid cannot be had: in use)" "$work/c.rlog" && grep -q "started before the checkpoint was read" "$work/c.rlog"'
[[ $rc == 0 ]] || diag "$work/c.ckpt" "$work/c.rlog"

exit $((failed ? 1 : 0))
