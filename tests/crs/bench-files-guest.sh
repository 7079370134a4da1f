#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What keeping the files a program writes costs at checkpoint time (guest,
# root; argument: ptrace or kmod). prog_ckpt (one thread, 32 MiB of
# memory) holds a file of 0, 1 or 64 MiB open for writing on fd 3;
# `crdbg checkpoint --kill` is timed three times for each, wall clock,
# and the median printed, with the checkpoint's size. Documentation/
# checkpoint.md, "Files the program writes", quotes its output.
set -u
. "$(dirname "$0")/lib.sh" bench-files "$@"
prog=$build/tests/crs/prog_ckpt
export CKPT_GO=$work/go CKPT_RSS_MB=32
median() { sort -n | sed -n 2p; }

for mib in 0 1 64; do
	head -c $((mib << 20)) /dev/urandom >"$work/data"
	for i in 1 2 3; do
		rm -f "$CKPT_GO"
		setsid "$prog" 1 20 20 >"$work/out" 2>/dev/null </dev/null 3>>"$work/data" &
		pid=$!
		pids+=("$pid")
		wait_for has_line "$work/out" '^step 5$'
		t=$EPOCHREALTIME
		h=$("$crdbg" checkpoint "$pid" --backend "$backend" --kill 2>"$work/err")
		e=$EPOCHREALTIME
		wait_for gone "$pid"
		echo "$t $e" | awk '{ printf "%.0f\n", ($2 - $1) * 1000 }' >>"$work/ms.$mib"
		du -sm "$CRDBG_STORE/$h" | cut -f1 >"$work/size.$mib"
		[[ -n $h ]] || sed 's/^/# /' "$work/err"
		"$crdbg" rm "$h" >/dev/null 2>&1
	done
	echo "# bench-files $backend: a written file of $mib MiB: checkpoint --kill $(median <"$work/ms.$mib") ms (median of 3: $(tr '\n' ' ' <"$work/ms.$mib")), checkpoint $(cat "$work/size.$mib") MiB"
done
echo "1..1"
echo "ok 1 bench-files $backend measured"
