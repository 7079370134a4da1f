#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The files a program writes, across checkpoint and restart, in the
# guest, on one freeze backend (argument: ptrace or kmod). TAP on stdout.
# Documentation/checkpoint.md, "Files the program writes" and "A restart
# kills nothing it cannot restore".
#
#   prog_ckpt >app.log          checkpoint H at step 5, runs on to its end
#   crdbg restart H             app.log as at H, what came after kept in
#                               app.log.crdbg-after-H, the run goes on: the
#                               steps of an uninterrupted run
#   app.log now a directory     verify and restart refuse in one line,
#                               nothing restored
#   restart while the program runs         refused, the program untouched
#   restart while its pid is a zombie      waits, then restores
set -u
. "$(dirname "$0")/lib.sh" files "$@"
prog=$build/tests/crs/prog_ckpt
lib=$build/usr/libcrdbg.so
STEPS=30
NAP=20
export CKPT_GO=$work/go
seq 0 $((STEPS - 1)) | sed 's/^/step /' >"$work/expected"
steps_of() { grep -E '^step ' "$1"; }
same_steps() { steps_of "$1" | cmp -s "$work/expected" -; }
one_line() { [[ $(wc -l <"$1") == 1 ]]; }

# start NAME: the program, its stdout the file NAME.log, at its step 5.
start() {
	rm -f "$CKPT_GO"
	LD_PRELOAD=$lib setsid "$prog" 1 "$STEPS" "$NAP" \
		>"$work/$1.log" 2>"$work/$1.err" </dev/null &
	pid=$!
	pids+=("$pid")
	wait_for has_line "$work/$1.log" '^step 5$'
}

echo "1..14"

# --- appended after the checkpoint: put back, the tail kept aside -------
start app
"$crdbg" checkpoint "$pid" --backend "$backend" -v >"$work/h" 2>"$work/app.ckpt"
h=$(cat "$work/h")
check "checkpoint records the program's log and copies it" \
	grep -q "^wfile 0 .* 1 $work/app.log\$" "$CRDBG_STORE/$h/wfiles"
[[ -n $h ]] || diag "$work/app.ckpt"
cp "$work/app.log" "$work/app.at-checkpoint"
touch "$CKPT_GO"
wait_for gone "$pid"
wait "$pid" 2>/dev/null
check "the program ran on: its log grew past the checkpoint" \
	has_line "$work/app.log" '^done'
cp "$work/app.log" "$work/app.uninterrupted"
"$crdbg" verify "$h" >"$work/verify.out" 2>&1
check "verify: a log that only grew can be put back" grep -qx "$h: ok" "$work/verify.out"
timeout 400 "$crdbg" restart "$h" --backend "$backend" >"$work/app.restart" 2>"$work/app.rlog"
rc=$?
check "restart exits 0 (CRIU no longer finds a file of a bad size)" test "$rc" = 0
[[ $rc == 0 ]] || diag "$work/app.rlog"
check "restart says where the appended tail is kept" \
	grep -q "app.log put back as at checkpoint $h; what was appended since kept in $work/app.log.crdbg-after-$h\$" "$work/app.rlog"
# what was cut off is exactly what the first run wrote after the checkpoint
tail_ok() {
	[[ -s $work/app.log.crdbg-after-$h ]] &&
		cat "$work/app.at-checkpoint" "$work/app.log.crdbg-after-$h" |
		cmp -s "$work/app.uninterrupted" -
}
check "the tail kept aside is what the run wrote after the checkpoint" tail_ok
check "after the restart the log holds the steps of an uninterrupted run, once each" \
	same_steps "$work/app.log"

# --- a change crdbg cannot undo: one line, nothing restored --------------
start dir
"$crdbg" checkpoint "$pid" --backend "$backend" --kill >"$work/hd" 2>"$work/dir.ckpt"
hd=$(cat "$work/hd")
wait_for gone "$pid"
rm -f "$work/dir.log"
mkdir "$work/dir.log"
"$crdbg" verify "$hd" >/dev/null 2>"$work/dir.verify"
rc=$?
check "verify refuses a log replaced by a directory, in one line naming it" \
	eval 'test $rc != 0 && one_line "$work/dir.verify" && grep -q "$work/dir.log is now a directory" "$work/dir.verify"'
diag "$work/dir.verify"
timeout 400 "$crdbg" restart "$hd" --backend "$backend" >/dev/null 2>"$work/dir.rlog"
rc=$?
check "restart refuses it in one line, before anything is restored" \
	eval 'test $rc != 0 && one_line "$work/dir.rlog" && grep -q "nothing was restored: the program.s file $work/dir.log is now a directory" "$work/dir.rlog"'
diag "$work/dir.rlog"
check "no process was restored and the directory is untouched" \
	eval '! kill -0 $pid 2>/dev/null && test -d "$work/dir.log"'
rmdir "$work/dir.log"
timeout 400 "$crdbg" restart "$hd" --backend "$backend" >"$work/dir.restart" 2>"$work/dir.rlog2" &
rpid=$!
pids+=("$rpid")
touch "$CKPT_GO"
wait "$rpid"
rc=$?
# a stdout file that is gone: crdbg restart's own stdout stands in (the stdio rules)
check "once the directory is gone, the same checkpoint restarts, its stdout crdbg restart's" \
	eval 'test $rc = 0 && has_line "$work/dir.restart" "^step $((STEPS - 1))\$"'
[[ $rc == 0 ]] || diag "$work/dir.rlog2"

# --- pids: a live holder refuses at once, a dying one is waited for -----
start live
"$crdbg" checkpoint "$pid" --backend "$backend" >"$work/hl" 2>"$work/live.ckpt"
hl=$(cat "$work/hl")
timeout 400 "$crdbg" restart "$hl" --backend "$backend" >/dev/null 2>"$work/live.rlog"
check "restart while the program runs: refused, naming its pid" \
	grep -q "pid $pid is in use" "$work/live.rlog"
check "...and the program was not killed" kill -0 "$pid"
touch "$CKPT_GO"
wait_for gone "$pid"

# The program's parent does not reap it for a while: its pid is a zombie's.
rm -f "$CKPT_GO"
sh -c '"$0" 1 "$1" "$2" tree >"$3" 2>/dev/null </dev/null & echo $! >"$4"; exec sleep 25' \
	"$prog" "$STEPS" "$NAP" "$work/zombie.log" "$work/zombie.pid" &
pids+=("$!")
wait_for has_line "$work/zombie.log" '^step 5$'
pid=$(cat "$work/zombie.pid")
child=$(sed -n 's/^child //p' "$work/zombie.log")
pids+=("$pid" "$child")
"$crdbg" checkpoint "$pid" --backend "$backend" --kill >"$work/hz" 2>"$work/zombie.ckpt"
hz=$(cat "$work/hz")
zombie() { [[ $(ps -o stat= -p "$1") == Z* ]]; }
wait_for zombie "$pid"
zombie "$pid" && was=zombie || was=gone
touch "$CKPT_GO"
# (the restart returns when the restored program ends: a loaded TCG
# guest has taken over 120 s for the wait, the restore and the steps)
timeout 400 "$crdbg" restart "$hz" --backend "$backend" >"$work/zombie.restart" \
	2>"$work/zombie.rlog"
rc=$?
check "restart while its pid is a zombie's ($was at the start): waits, then restores" \
	eval 'test "$was" = zombie -a $rc = 0'
[[ $rc == 0 ]] || { echo "# crdbg restart: exit $rc"; diag "$work/zombie.rlog" "$work/zombie.ckpt"; }
check "...and the restored program ran to its end" same_steps "$work/zombie.log"
