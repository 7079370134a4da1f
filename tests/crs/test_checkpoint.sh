#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# crdbg checkpoint / restart / list / rm in the guest, on one freeze
# backend (argument: ptrace or kmod). TAP on stdout.
#
#   prog_ckpt (LD_PRELOAD=libcrdbg.so, a session leader via setsid)
#      |  crdbg checkpoint PID [-v] [--kill|--debug|--no-debug]
#      v
#   $STORE/<handle>/{*.img, metadata}  --crdbg restart HANDLE [-v] [--debug]-->  same pids
#
# The program writes "step I" lines to a file; the tests compare that file
# with an uninterrupted run, compare every thread's PC at checkpoint with
# its PC at resume (crdbg -v prints both), and read the MPIR variables the
# program reports at its end (or with gdb while it waits).
set -u
. "$(dirname "$0")/lib.sh" ckpt "$@"
prog=$build/tests/crs/prog_ckpt
lib=$build/usr/libcrdbg.so
STEPS=50
NAP=20
# The program waits after "step 5" until this file exists (prog_ckpt.c).
export CKPT_GO=$work/go

cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	umount "$work/small" 2>/dev/null
	rm -rf "$work"
}

# start NAME THREADS [tree] [nolib]: start the program, wait for its 5th step.
start() {
	local name=$1 threads=$2 mode=${3:-} pre=$lib
	[[ ${4:-} == nolib || $mode == nolib ]] && pre=
	[[ $mode == nolib ]] && mode=
	: >"$work/$name.out"
	rm -f "$CKPT_GO"
	LD_PRELOAD=$pre setsid "$prog" "$threads" "$STEPS" "$NAP" $mode \
		>"$work/$name.out" 2>"$work/$name.err" </dev/null &
	pid=$!
	pids+=("$pid")
	wait_for has_line "$work/$name.out" '^step 5$'
}

# same_steps FILE: FILE has the step lines of an uninterrupted run (the
# "done" line aside).
seq 0 $((STEPS - 1)) | sed 's/^/step /' >"$work/expected"
same_steps() { grep -E '^step ' "$1" >"$1.steps"; cmp -s "$work/expected" "$1.steps"; }

# pcs_ok FILE: every "restart"/"resume" line of crdbg -v says the PC is the
# checkpointed one, and there is one per checkpointed thread.
pcs_ok() {
	local file=$1 want=$2 got
	grep -q DIFFERENT "$file" && return 1
	got=$(grep -cE ' (restart|resume) pid .* (same|same-syscall-restart)$' "$file")
	[[ $got == "$want" ]]
}

meta_threads() { grep -c '^thread ' "$CRDBG_STORE/$1/metadata"; }

echo "1..46"

# --- Table 5.2 scenario 1, continue: no debugger before or after --------
start s1c 1
"$crdbg" checkpoint "$pid" --backend "$backend" -v --no-debug >"$work/h" 2>"$work/s1c.log"
rc=$?
h=$(cat "$work/h")
check "checkpoint exits 0 and prints the bare handle on stdout" \
	test "$rc" = 0 -a -n "$h" -a -d "$CRDBG_STORE/$h"
[[ $rc == 0 ]] || diag "$work/s1c.log"
check "stderr has 'MPIR checkpoint handle) <handle>'" \
	grep -qx "MPIR checkpoint handle) $h" "$work/s1c.log"
check "continue: every thread resumes at its checkpointed PC" \
	pcs_ok "$work/s1c.log" "$(meta_threads "$h")"
pcs_ok "$work/s1c.log" "$(meta_threads "$h")" || diag "$work/s1c.log"
touch "$CKPT_GO"
wait_for gone "$pid"
check "continue: the program finishes with the uninterrupted output" \
	same_steps "$work/s1c.out"
check "scenario 1 post: debug_with_checkpoint=0, gate=1" \
	grep -q 'done checkpointable=1 debug_with_checkpoint=0 gate=1' "$work/s1c.out"
listed_valid() { "$crdbg" list | grep -q "^$1 " && ! "$crdbg" list | grep -q INVALID; }
check "list shows the checkpoint as valid" listed_valid "$h"
"$crdbg" list --json >"$work/list.json"
check "list --json shows it valid" grep -q "\"handle\": \"$h\", \"valid\": true" "$work/list.json"

# --- scenario 1, restart: 8 threads, killed at checkpoint ----------------
start s1r 8
"$crdbg" checkpoint "$pid" --backend "$backend" --kill >"$work/h8" 2>"$work/s1r.log"
h8=$(cat "$work/h8")
touch "$CKPT_GO"
wait_for gone "$pid"
check "checkpoint --kill of an 8-thread program stores it and kills it" \
	test -n "$h8" -a "$(meta_threads "$h8")" = 10
[[ -n $h8 ]] || diag "$work/s1r.log"
cp "$work/s1r.out" "$work/s1r.at-checkpoint"
for i in 1 2 3; do
	cp "$work/s1r.at-checkpoint" "$work/s1r.out"
	timeout 120 "$crdbg" restart "$h8" --backend "$backend" -v >"$work/r$i.log" 2>&1
	echo "rc=$?" >>"$work/r$i.log"
	cp "$work/s1r.out" "$work/s1r.out.$i"
	grep -E ' restart pid ' "$work/r$i.log" | sort >"$work/r$i.pcs"
done
restart_ok() { grep -q '^rc=0' "$1" && pcs_ok "$1" 10; }
check "restart: exit 0 and every thread at its checkpointed PC" restart_ok "$work/r1.log"
restart_ok "$work/r1.log" || diag "$work/r1.log" "$CRDBG_STORE/$h8/metadata"
check "restart: output equals an uninterrupted run's" \
	same_steps "$work/s1r.out.1"
# a lone restart starts criu before it reads the checkpoint (-v says so)
check "restart -v: criu started before the checkpoint was read, its options given after" \
	grep -q 'started before the checkpoint was read, its options given once known' "$work/r1.log"
# and hands criu its release orders once the pages passed, before criu holds the tree
check "restart -v: crdbg's orders handed to criu before it held the tree" \
	grep -q "crdbg's orders handed to criu [0-9]* ms after the start, before it held the tree" "$work/r1.log"
same3() { test -s "$1" && cmp -s "$1" "$2" && cmp -s "$1" "$3"; }
check "three restarts from one checkpoint: identical PCs" \
	same3 "$work/r1.pcs" "$work/r2.pcs" "$work/r3.pcs"
check "three restarts from one checkpoint: identical output" \
	same3 "$work/s1r.out.1" "$work/s1r.out.2" "$work/s1r.out.3"
check "scenario 1 post after restart: debug_with_checkpoint=0, gate=1" \
	grep -q 'debug_with_checkpoint=0 gate=1' "$work/s1r.out.1"

# The restart's criu starts before the verify, held at crdbg's CRIU plugin
# until it passed (a failed verify ends it there, nothing restored: the
# refusals below); its RESUME_DEVICES_LATE hook says when CRIU lets the
# tree go and, with crdbg.ko, holds it there for the freeze, where an
# action script (a new process) did before. criu's debug log of a
# restart left waiting at CKPT_GO.
rm -f "$CKPT_GO"
cp "$work/s1r.at-checkpoint" "$work/s1r.out"
mkdir -p "$work/tmp-gate"
TMPDIR=$work/tmp-gate CRDBG_CRIU_VERBOSITY=4 timeout 300 \
	"$crdbg" restart "$h8" --backend "$backend" >"$work/gate.log" 2>&1 &
rpid=$!
pids+=("$rpid")
gate_log() { ls "$work"/tmp-gate/crdbg-restore-*/restore.log 2>/dev/null | head -n 1; }
gate_restored() { [[ -n $(gate_log) ]] && grep -q 'Restore finished successfully' "$(gate_log)"; }
wait_for gate_restored
cp "$(gate_log)" "$work/gate.restore.log" 2>/dev/null
touch "$CKPT_GO"
wait "$rpid"
grc=$?
restore_gated() {
	local log=$work/gate.restore.log
	[[ $grc == 0 ]] && grep -q 'Plugin "crdbg_gate"' "$log" &&
		grep -q 'Running pre-resume scripts' "$log" && ! grep -qP '\t\[/' "$log" &&
		grep -q "plugin: \`crdbg_gate' hook 9 " "$log" &&
		same_steps "$work/s1r.out" && [[ -z $(ls -A "$work/tmp-gate") ]]
}
check "restart: criu runs crdbg's plugin, its init and its hook before the detach, no action script; nothing left behind" \
	restore_gated
restore_gated || diag "$work/gate.log" "$work/gate.restore.log"

# --- scenario 4: debugger before (MPIR_debug_with_checkpoint=1), none after
CKPT_DEBUG_WITH_CHECKPOINT=1 start s4 8
"$crdbg" checkpoint "$pid" --backend "$backend" --kill >"$work/h4" 2>"$work/s4.ckpt"
check "checkpoint with MPIR_debug_with_checkpoint=1 records it" \
	grep -q '^debug-with-checkpoint 1$' "$CRDBG_STORE/$(cat "$work/h4")/metadata"
h4=$(cat "$work/h4")
touch "$CKPT_GO"
wait_for gone "$pid"
timeout 120 "$crdbg" restart "$h4" --backend "$backend" >"$work/s4.log" 2>&1
check "scenario 4 (restart without debugger): gate opens, debug_with_checkpoint=0" \
	grep -q 'done checkpointable=1 debug_with_checkpoint=0 gate=1' "$work/s4.out"
grep -q 'done' "$work/s4.out" || diag "$work/s4.ckpt" "$work/s4.log"

# --- scenario 2: no debugger before, debugger after (restart --debug) ----
start s2 8
"$crdbg" checkpoint "$pid" --backend "$backend" --kill >"$work/h2" 2>/dev/null
h2=$(cat "$work/h2")
touch "$CKPT_GO"
wait_for gone "$pid"
: >"$work/s2.err"
timeout 300 "$crdbg" restart "$h2" --backend "$backend" --debug >"$work/s2.log" 2>&1 &
rpid=$!
pids+=("$rpid")
wait_for has_line "$work/s2.err" '^MPIR debug info) '
line=$(grep '^MPIR debug info) ' "$work/s2.err")
check "restart --debug: one 'MPIR debug info) <host>:<pid>' line" \
	test "$line" = "MPIR debug info) $(hostname):$pid"
# crdbg restart says it too, on its own stderr (the program's is a file).
wait_for has_line "$work/s2.log" '^MPIR debug info) '
check "restart --debug: crdbg restart prints the same line on its own stderr, once" \
	test "$(grep -c "^MPIR debug info) $(hostname):$pid\$" "$work/s2.log")" = 1
# One gdb session: look, then open the gate and detach.
gdb -batch -p "$pid" -ex 'p MPIR_debug_with_checkpoint' -ex 'p MPIR_checkpoint_debug_gate' \
	-ex 'thread apply all bt 8' -ex 'set var MPIR_checkpoint_debug_gate = 1' \
	>"$work/s2.gdb" 2>&1
nthreads=$(grep -c '^Thread ' "$work/s2.gdb")
nparked=$(grep -cE '^#[0-9]+ .*MPIR_checkpoint_debugger_breakpoint \(' "$work/s2.gdb")
check "scenario 2 post: debug_with_checkpoint=1, gate=0, every thread waits" \
	test "$(grep -c '^\$1 = 1$' "$work/s2.gdb")" = 1 -a \
	     "$(grep -c '^\$2 = 0$' "$work/s2.gdb")" = 1 -a \
	     "$nthreads" = 10 -a "$nparked" -ge 10
[[ $nparked -ge 10 ]] || DIAG_LINES=200 diag "$work/s2.gdb"
touch "$CKPT_GO"
wait_for gone "$pid"
check "after the debugger opens the gate the program completes its output" \
	same_steps "$work/s2.out"

# --- scenario 3, continue: debugger before and after -------------------
CKPT_DEBUG_WITH_CHECKPOINT=1 start s3 8
"$crdbg" checkpoint "$pid" --backend "$backend" >/dev/null 2>"$work/s3.ckpt"
wait_for has_line "$work/s3.err" '^MPIR debug info) '
touch "$CKPT_GO"
gdb -batch -p "$pid" -ex 'p MPIR_debug_with_checkpoint' -ex 'p MPIR_checkpoint_debug_gate' \
	-ex 'thread apply all bt 8' -ex 'set var MPIR_checkpoint_debug_gate = 1' \
	>"$work/s3.gdb" 2>&1
nparked=$(grep -cE '^#[0-9]+ .*MPIR_checkpoint_debugger_breakpoint \(' "$work/s3.gdb")
check "scenario 3 continue: 'MPIR debug info)' printed, debug_with_checkpoint=1, gate=0, every thread waits" \
	test "$(grep -c '^MPIR debug info) ' "$work/s3.err")" = 1 -a \
	     "$(grep -c '^\$1 = 1$' "$work/s3.gdb")" = 1 -a \
	     "$(grep -c '^\$2 = 0$' "$work/s3.gdb")" = 1 -a "$nparked" -ge 10
[[ $nparked -ge 10 ]] || diag "$work/s3.ckpt" "$work/s3.gdb"
wait_for gone "$pid"
check "scenario 3 continue: once the gate opens the output is the uninterrupted one" \
	same_steps "$work/s3.out"

# --- scenario 3 through a restart, with a real gdb re-attach (kmod) ----
# The program is checkpointed with MPIR_debug_with_checkpoint = 1 (as a
# debugger before the checkpoint leaves it; a real gdb attached at
# checkpoint time breaks in the detach marker and detaches). The checkpoint is
# restarted without a debugger (it must run to completion) and with
# --debug, where gdb finds every thread waiting, opens the gate and
# finishes each thread out of the hook to its checkpointed PC
# (Documentation/checkpoint.md, re-attaching).
cat >"$work/reattach.py" <<'PY'
import gdb
gdb.execute("set scheduler-locking on")
for t in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
    t.switch()
    lwp = t.ptid[1]
    f, parked, sig = gdb.newest_frame(), False, None
    while f is not None:
        if f.name() == "MPIR_checkpoint_debugger_breakpoint":
            parked = True
        if f.type() == gdb.SIGTRAMP_FRAME:
            sig = f
            break
        f = f.older()
    if not parked or sig is None or sig.older() is None:
        print("REATTACH %d not-parked" % lwp)
        continue
    want = sig.older().pc()
    # Finish out of the hook: run this thread alone to the pc of the frame
    # the hook returns to (its checkpointed PC). Not stepi: stepping over
    # the ptrace return path's popfq can leave TF set after the detach.
    gdb.execute("tbreak *0x%x thread %d" % (want, t.num), to_string=True)
    gdb.execute("continue", to_string=True)
    pc = int(gdb.parse_and_eval("$pc")) & 0xffffffffffffffff
    print("REATTACH %d 0x%x 0x%x" % (lwp, pc, want))
gdb.execute("set scheduler-locking off")
PY
# reattach_ok GDBLOG HANDLE NTHREADS: one REATTACH line per thread, each at
# the thread's checkpointed PC (2 bytes earlier after a syscall restart).
reattach_ok() {
	local log=$1 meta=$CRDBG_STORE/$2/metadata want=$3 got=0 tid pc mpc
	grep '^REATTACH ' "$log" >"$log.pcs"
	while read -r _ tid pc _; do
		mpc=$(awk -v t="$tid" '$1 == "thread" && $3 == t { print $4 }' "$meta")
		[[ -n $mpc && $pc == 0x* ]] || return 1
		(( pc == mpc || pc == mpc - 2 )) || return 1
		got=$((got + 1))
	done <"$log.pcs"
	[[ $got == "$want" ]]
}
s3r_names=("gdb attached at checkpoint time breaks in MPIR_checkpoint_debugger_detach, detaches, and the checkpoint completes" \
	"image taken with gdb attached, restarted without a debugger: no tracer, no int3 left at the breakpoint" \
	"a checkpoint with MPIR_debug_with_checkpoint=1 restarted without a debugger runs to completion: uninterrupted output, debug_with_checkpoint=0, gate=1" \
	"scenario 3 restart --debug: 'MPIR debug info)' printed, debug_with_checkpoint=1, gate=0, every thread waits" \
	"re-attach: gdb finishes every thread out of the hook to its checkpointed PC" \
	"re-attach: after gdb detaches the program completes with the uninterrupted output")
CKPT_DEBUG_WITH_CHECKPOINT=1 start s3r 8
# A gdb attached at checkpoint time, as the MPIR checkpoint protocol has it: it breaks in
# MPIR_checkpoint_debugger_detach() and detaches. crdbg's request comes as
# a real-time signal (CRDBG_RT_SIGNAL, 61 here), which gdb must pass on.
gdb -nx -batch -p "$pid" -ex 'handle SIG61 nostop noprint pass' \
	-ex 'break MPIR_checkpoint_debugger_detach' -ex continue -ex 'bt 3' -ex detach \
	</dev/null >"$work/s3r.gdb0" 2>&1 &
gpid=$!
pids+=("$gpid")
wait_for has_line "$work/s3r.gdb0" '^Breakpoint 1 at '
"$crdbg" checkpoint "$pid" --backend "$backend" --kill >"$work/h3" 2>"$work/s3r.ckpt"
rc=$?
wait "$gpid"
h3=$(cat "$work/h3")
bp=$(sed -n 's/^Breakpoint 1 at \(0x[0-9a-f]*\).*/\1/p' "$work/s3r.gdb0")
gdb_at_checkpoint_ok() {
	[[ $rc == 0 && -n $h3 && -n $bp ]] && listed_valid "$h3" &&
		grep -q 'hit Breakpoint 1, MPIR_checkpoint_debugger_detach ()' "$work/s3r.gdb0" &&
		grep -q '^\[Inferior 1 (process [0-9]*) detached\]' "$work/s3r.gdb0"
}
check "${s3r_names[0]}" gdb_at_checkpoint_ok
gdb_at_checkpoint_ok || diag "$work/s3r.gdb0" "$work/s3r.ckpt"
touch "$CKPT_GO"
wait_for gone "$pid"
rm -f "$CKPT_GO"
cp "$work/s3r.out" "$work/s3r.at-checkpoint"
# Without a debugger (scenario 4): nothing of gdb came back with the image.
timeout 120 "$crdbg" restart "$h3" --backend "$backend" -v >"$work/s3r.r1" 2>&1 &
rpid=$!
pids+=("$rpid")
wait_for has_line "$work/s3r.r1" ' restart pid '
sleep 1
untraced_no_int3() {
	local t byte
	for t in /proc/"$pid"/task/*; do
		grep -q '^TracerPid:[[:space:]]*0$' "$t/status" || return 1
	done
	byte=$(python3 -c 'import sys
f = open("/proc/%s/mem" % sys.argv[1], "rb"); f.seek(int(sys.argv[2], 16))
print(f.read(1).hex())' "$pid" "$bp") || return 1
	[[ -n $byte && $byte != cc ]]
}
check "${s3r_names[1]}" untraced_no_int3
touch "$CKPT_GO"
wait "$rpid"
s3r_done_ok() { same_steps "$work/s3r.out" &&
	grep -q 'done checkpointable=1 debug_with_checkpoint=0 gate=1' "$work/s3r.out"; }
check "${s3r_names[2]}" s3r_done_ok
s3r_done_ok || diag "$work/s3r.r1" "$work/s3r.out"
# With --debug (scenario 3 through a restart) and a re-attached gdb.
cp "$work/s3r.at-checkpoint" "$work/s3r.out"
: >"$work/s3r.err"
timeout 300 "$crdbg" restart "$h3" --backend "$backend" --debug >"$work/s3r.r2" 2>&1 &
rpid=$!
pids+=("$rpid")
wait_for has_line "$work/s3r.err" '^MPIR debug info) '
timeout 180 gdb -nx -batch -p "$pid" -ex 'p MPIR_debug_with_checkpoint' -ex 'p MPIR_checkpoint_debug_gate' \
	-ex 'thread apply all bt 8' -ex 'set var MPIR_checkpoint_debug_gate = 1' \
	-x "$work/reattach.py" -ex detach >"$work/s3r.gdb" 2>&1
nthreads=$(grep -cE '^Thread [0-9]+ \(Thread 0x' "$work/s3r.gdb")
nparked=$(grep -cE '^#[0-9]+ .*MPIR_checkpoint_debugger_breakpoint \(' "$work/s3r.gdb")
check "${s3r_names[3]}" \
	test "$(grep -c "^MPIR debug info) $(hostname):$pid\$" "$work/s3r.err")" = 1 -a \
	     "$(grep -c '^\$1 = 1$' "$work/s3r.gdb")" = 1 -a \
	     "$(grep -c '^\$2 = 0$' "$work/s3r.gdb")" = 1 -a \
	     "$nthreads" = 10 -a "$nparked" -ge 10
check "${s3r_names[4]}" reattach_ok "$work/s3r.gdb" "$h3" 10
grep '^REATTACH ' "$work/s3r.gdb" | diag
reattach_ok "$work/s3r.gdb" "$h3" 10 ||
	DIAG_LINES=300 diag "$work/s3r.gdb" "$CRDBG_STORE/$h3/metadata"
touch "$CKPT_GO"
wait "$rpid"
check "${s3r_names[5]}" same_steps "$work/s3r.out"
same_steps "$work/s3r.out" || diag "$work/s3r.r2" "$work/s3r.out"

# --- checkpoint --stop: left stopped, checkpoint valid -----------------
start stop 1
"$crdbg" checkpoint "$pid" --backend "$backend" --stop >"$work/hs" 2>"$work/stop.log"
hs=$(cat "$work/hs")
pstate() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }
is_stopped() { [[ $(pstate "$1") == T ]]; }
wait_for is_stopped "$pid"
stop_state=$(pstate "$pid")
touch "$CKPT_GO"	# a running program would now go on: it must not
check "checkpoint --stop leaves the process stopped (state T)" \
	test -n "$hs" -a "$stop_state" = T -a "$(pstate "$pid")" = T
[[ -n $hs ]] || diag "$work/stop.log"
kill -9 "$pid"
wait_for gone "$pid"
stop_restart_ok() {
	listed_valid "$hs" && timeout 120 "$crdbg" restart "$hs" --backend "$backend" >"$work/stop.r" 2>&1 &&
		same_steps "$work/stop.out"
}
check "checkpoint --stop: list shows it valid, and it restarts after the original is killed" stop_restart_ok
same_steps "$work/stop.out" || diag "$work/stop.r" "$work/stop.out"

# --- a program that never loaded libcrdbg ------------------------------
start nolib 1 nolib
"$crdbg" checkpoint "$pid" --backend "$backend" --kill >"$work/hn" 2>"$work/nolib.log"
nolib_ok() { test -s "$work/hn" && grep -q 'does not use libcrdbg' "$work/nolib.log"; }
check "a program without libcrdbg is checkpointed, and crdbg says so" nolib_ok
nolib_ok || diag "$work/nolib.log"
touch "$CKPT_GO"
wait_for gone "$pid"
timeout 120 "$crdbg" restart "$(cat "$work/hn")" --backend "$backend" >/dev/null 2>&1
check "it restarts and completes with the uninterrupted output" \
	same_steps "$work/nolib.out"

# --- process tree: session leader, child in its own process group ------
start tree 1 tree
child=$(sed -n 's/^child //p' "$work/tree.out")
pids+=("$child")
before="$(ids "$pid" 0) / $(ids "$child" 1)"
"$crdbg" checkpoint "$pid" --backend "$backend" --kill >"$work/ht" 2>"$work/tree.log"
wait_for gone "$pid"
wait_for gone "$child"
timeout 120 "$crdbg" restart "$(cat "$work/ht")" --backend "$backend" >/dev/null 2>&1 &
pids+=("$!")
running() { local s; s=$(ps -o stat= -p "$1") && [[ $s != T* ]]; }
wait_for running "$pid"
after="$(ids "$pid" 0) / $(ids "$child" 1)"
echo "# before: $before; after: $after"
check "tree: pid, pgid, sid of the leader and pid, ppid, pgid, sid of its child kept" \
	test "$after" = "$before"
touch "$CKPT_GO"
wait_for has_line "$work/tree.out" '^done'
kill -9 "$child" 2>/dev/null

# --- errors: one line, nothing valid-looking left behind ---------------
one_line_error() { # CMD... : fails with exactly one line on stderr
	local err rc
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	[[ $rc != 0 && $(printf '%s\n' "$err" | wc -l) == 1 && $err == crdbg:* ]]
}
check "nonexistent pid: one-line error" one_line_error "$crdbg" checkpoint 4000000 --backend "$backend"
mkdir -p "$work/tmp-unknown"
unknown_handle() { TMPDIR=$work/tmp-unknown one_line_error "$crdbg" restart 20000101T000000-1; }
check "unknown handle: one-line error" unknown_handle
# the criu started ahead of the metadata is killed and reaped, its directory gone
no_criu_left() { [[ -z $(ls -A "$work/tmp-unknown") ]] && ! pgrep -f "$work/tmp-unknown" >/dev/null; }
check "unknown handle: no criu and no work directory left behind" no_criu_left
if id nobody >/dev/null 2>&1; then
	sleep 600 &
	victim=$!
	pids+=("$victim")
	check "another user's pid as an unprivileged user: one-line error" \
		one_line_error setpriv --reuid=65534 --regid=65534 --clear-groups \
			env CRDBG_STORE=/tmp/nobody-store "$crdbg" checkpoint "$victim" --backend ptrace
	kill -9 "$victim"
else
	skip "another user's pid as an unprivileged user: one-line error" "no user nobody"
fi
cp -a "$CRDBG_STORE/$h8" "$CRDBG_STORE/corrupt"
sed -i 's/^handle .*/handle corrupt/' "$CRDBG_STORE/corrupt/metadata"
# copy_as H NEW: a copy of checkpoint H under the handle NEW, its metadata
# checksum ("end" line, SHA-256 of every byte before it) made right again,
# so that only the damage done to it afterwards is wrong
copy_as() {
	local m=$CRDBG_STORE/$2/metadata
	cp -a "$CRDBG_STORE/$1" "$CRDBG_STORE/$2"
	sed -i -e "s/^handle .*/handle $2/" -e '/^end /d' "$m"
	echo "end $(sha256sum <"$m" | cut -d' ' -f1)" >>"$m"
}
img=$(ls -S "$CRDBG_STORE/$h8"/pages-*.img | head -n 1)
copy_as "$h8" "$h8.bad"
printf 'X' | dd of="$CRDBG_STORE/$h8.bad/$(basename "$img")" bs=1 seek=100 conv=notrunc 2>/dev/null
# The pages' digests are checked while criu restores (restart.c): a
# corrupt page is found then, the restored tree is killed before it runs
# (its output file gets no new line) and the one line names the file.
# Everything else, and the sizes, are checked while criu starts up, held
# at crdbg's plugin before it reads an image: a refused restart ends it
# there, restores nothing and leaves nothing in $TMPDIR (its work
# directory and the plugin's go).
refused_file() { # OUT TMPDIR CMD...: one "crdbg:" line (kept in OUT), non-zero
	local out=$1 tmp=$2 rc
	shift 2
	mkdir -p "$tmp"
	TMPDIR=$tmp "$@" 2>"$out" >/dev/null
	rc=$?
	[[ $rc != 0 && $(wc -l <"$out") == 1 ]] && grep -q '^crdbg:' "$out"
}
cp "$work/s1r.at-checkpoint" "$work/s1r.out"
corrupt_refused() {
	refused_file "$work/bad.err" "$work/tmp-bad" "$crdbg" restart "$h8.bad" --backend "$backend" &&
		grep -q "checksum of $(basename "$img") does not match.*killed before running" "$work/bad.err" &&
		! pgrep -f "prog_ckpt 8 $STEPS" >/dev/null &&
		cmp -s "$work/s1r.at-checkpoint" "$work/s1r.out"
}
check "corrupt pages image: found while criu restores, the tree killed before it ran, one line naming it" corrupt_refused
diag "$work/bad.err"
before_criu() { # OUT TMPDIR PATTERN CMD...: refused naming PATTERN, nothing restored
	local out=$1 tmp=$2 pat=$3
	shift 3
	refused_file "$out" "$tmp" "$@" && grep -q "$pat" "$out" && ! grep -q killed "$out" &&
		[[ -z $(ls -A "$tmp") ]] && ! pgrep -f "prog_ckpt 8 $STEPS" >/dev/null &&
		! pgrep -x criu >/dev/null
}
check "corrupt pages image, CRDBG_VERIFY=first: refused before criu restores anything" \
	before_criu "$work/first.err" "$work/tmp-first" "checksum of $(basename "$img") does not match" \
		env CRDBG_VERIFY=first "$crdbg" restart "$h8.bad" --backend "$backend"
diag "$work/first.err"
copy_as "$h8" "$h8.core"
core=$(ls "$CRDBG_STORE/$h8.core"/core-*.img | head -n 1)
printf 'X' | dd of="$core" bs=1 seek=20 conv=notrunc 2>/dev/null
check "corrupt core image: refused before criu restores anything, naming it" \
	before_criu "$work/core.err" "$work/tmp-core" "checksum of $(basename "$core") does not match" \
		"$crdbg" restart "$h8.core" --backend "$backend"
diag "$work/core.err"
copy_as "$h8" "$h8.short"
truncate -s 4096 "$CRDBG_STORE/$h8.short/$(basename "$img")"
check "truncated pages image: refused before criu restores anything, naming it" \
	before_criu "$work/short.err" "$work/tmp-short" "$(basename "$img") has 4096 bytes" \
		"$crdbg" restart "$h8.short" --backend "$backend"
diag "$work/short.err"
truncate -s 200 "$CRDBG_STORE/$h4/metadata"
truncated_refused() { one_line_error "$crdbg" restart "$h4" && "$crdbg" list | grep -q "^$h4 *INVALID"; }
check "truncated metadata: refused, and list shows it INVALID" truncated_refused
mkdir -p "$work/small"
mount -t tmpfs -o size=64k tmpfs "$work/small"
start full 1
"$crdbg" checkpoint "$pid" --backend "$backend" --store "$work/small/store" >"$work/hf" 2>"$work/full.err"
rc=$?
full_ok() {
	[[ $rc != 0 && $(wc -l <"$work/full.err") == 1 && ! -s $work/hf ]] && kill -0 "$pid" &&
		[[ -z $("$crdbg" list --store "$work/small/store") && -z $(ls -A "$work/small/store") ]]
}
check "full disk: one-line error, the program keeps running, nothing listed" full_ok
diag "$work/full.err"
kill -9 "$pid" 2>/dev/null
rm_ok() { "$crdbg" rm "$h" && ! "$crdbg" list | grep -q "^$h "; }
check "rm removes a checkpoint" rm_ok

[[ $n == 46 ]] || echo "# planned 46 tests, ran $n"
exit $((failed ? 1 : 0))
