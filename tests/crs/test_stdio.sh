#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Stdio at restart, in the guest, on one freeze backend (argument: ptrace
# or kmod). TAP on stdout. Documentation/checkpoint.md, "Stdio and
# terminals at restart".
#
#   prog_ckpt ... tree | cat >pipe.out      checkpoint --kill; cat ends
#   crdbg restart H >restart.out            the rest of the steps, rc 0
#
#   prog_ckpt ... >FIFO (cat FIFO >f.out)   checkpoint --kill; FIFO removed
#   crdbg restart H >restart.out            the rest of the steps, rc 0
set -u
. "$(dirname "$0")/lib.sh" stdio "$@"
prog=$build/tests/crs/prog_ckpt
export CKPT_GO=$work/go
STEPS=30
NAP=20

running() { local s; s=$(ps -o stat= -p "$1") && [[ $s != T* ]]; }
seq 0 $((STEPS - 1)) | sed 's/^/step /' >"$work/expected"

# all_steps FILE...: the step lines of the files, in order, are an
# uninterrupted run's (each step once: none lost, none twice).
all_steps() { cat "$@" | grep -E '^step ' | cmp -s "$work/expected" -; }

echo "1..9"

# --- stdout a pipe to a reader outside the tree, gone at restart ---------
rm -f "$CKPT_GO"
# The inner sh writes the reader's pid (cat, the pipeline's last command).
sh -c '"$0" 1 "$1" "$2" tree 2>/dev/null | cat >"$3" & echo $! >"$4"; wait' \
	"$prog" "$STEPS" "$NAP" "$work/pipe.out" "$work/pipe.pid" </dev/null &
pids+=("$!")
wait_for has_line "$work/pipe.out" '^step 5$'
child=$(sed -n 's/^child //p' "$work/pipe.out")
pid=$(ps -o ppid= -p "$child" | tr -d ' ')
pids+=("$pid" "$child")
before="$(ids "$pid" 0) / $(ids "$child" 1)"
reader=$(cat "$work/pipe.pid")
"$crdbg" checkpoint "$pid" --backend "$backend" --kill >"$work/hp" 2>"$work/pipe.ckpt"
wait_for gone "$pid"
wait_for gone "$child"
wait_for gone "$reader"
hp=$(cat "$work/hp")
check "pipe: the checkpoint records fd 1 as a pipe whose reader is outside the tree" \
	grep -q "^stdio $pid 1 0 0x[0-9a-f]* 0x[0-9a-f]* pipe:\[" "$CRDBG_STORE/$hp/metadata"
[[ -n $hp ]] || diag "$work/pipe.ckpt"
check "pipe: the reader is gone with the writer" gone "$reader"
timeout 120 "$crdbg" restart "$hp" --backend "$backend" >"$work/pipe.restart" \
	2>"$work/pipe.rlog" &
rpid=$!
pids+=("$rpid")
wait_for running "$pid"
after="$(ids "$pid" 0) / $(ids "$child" 1)"
echo "# before: $before; after: $after"
check "pipe: pid, pgid, sid of the leader and pid, ppid, pgid, sid of its child kept" \
	test "$after" = "$before"
touch "$CKPT_GO"
wait_for gone "$pid"
kill -9 "$child" 2>/dev/null
wait "$rpid"
rc=$?
check "pipe: restart ends with the program's exit status 0" test "$rc" = 0
[[ $rc == 0 ]] || diag "$work/pipe.rlog" "$work/pipe.restart"
check "pipe: the steps after the checkpoint arrive on crdbg restart's stdout, none lost" \
	all_steps "$work/pipe.out" "$work/pipe.restart"
check "pipe: the program ran to its end after restart" has_line "$work/pipe.restart" '^done'

# --- stdout a FIFO that no longer exists at restart --------------------
rm -f "$CKPT_GO"
mkfifo "$work/fifo"
cat "$work/fifo" >"$work/fifo.out" &
reader=$!
setsid "$prog" 1 "$STEPS" "$NAP" >"$work/fifo" 2>/dev/null </dev/null &
pid=$!
pids+=("$pid" "$reader")
wait_for has_line "$work/fifo.out" '^step 5$'
"$crdbg" checkpoint "$pid" --backend "$backend" --kill >"$work/hf" 2>"$work/fifo.ckpt"
wait_for gone "$pid"
wait_for gone "$reader"
rm -f "$work/fifo"
hf=$(cat "$work/hf")
check "fifo: the checkpoint records fd 1 as the FIFO's path" \
	grep -q "^stdio $pid 1 0 0x[0-9a-f]* 0x[0-9a-f]* $work/fifo\$" "$CRDBG_STORE/$hf/metadata"
[[ -n $hf ]] || diag "$work/fifo.ckpt"
touch "$CKPT_GO"
timeout 120 "$crdbg" restart "$hf" --backend "$backend" >"$work/fifo.restart" 2>"$work/fifo.rlog"
rc=$?
check "fifo: restart without the FIFO ends with exit status 0" test "$rc" = 0
[[ $rc == 0 ]] || diag "$work/fifo.rlog"
check "fifo: the steps after the checkpoint arrive on crdbg restart's stdout, none lost" \
	all_steps "$work/fifo.out" "$work/fifo.restart"

[[ $n == 9 ]] || echo "# planned 9 tests, ran $n"
exit $((failed ? 1 : 0))
