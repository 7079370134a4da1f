#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The pre-dump of a checkpoint that continues (usr/crs/pre-dump.h) in the
# guest, with CRIU, on one freeze backend (argument: ptrace or kmod). TAP
# on stdout.
#
#   prog_incr 48 MiB (INCR_GROW: a thread maps a page every 2 ms)
#      | crdbg checkpoint -v (continue) at its first wait:
#      |   criu pre-dump while it runs, the freeze, the dump of what
#      |   changed since, the pre-dump's pages merged after the release
#      v
#   h (self-contained, full)        crdbg restart h
#
# The thread's new pages are in the dump but not in the pre-dump, so the
# merge writes a new pages image (tests/crs/test_pre_dump.c covers both
# ways on made-up images); the restart must print what an uninterrupted
# run prints, the grown pages intact. A program that maps nothing new is
# merged in place; --no-pre-dump, a small tree and a second (incremental)
# checkpoint take no pre-dump, and say why with -v; each part of a job
# that continues pre-dumps its own tree before the job's cut.
set -u
. "$(dirname "$0")/lib.sh" predump "$@"
prog=$build/tests/crs/prog_incr
lib=$build/usr/libcrdbg.so
MB=48

# run NAME [MB] [ENV...]: the program with its own go files ($work/NAME.go.<phase>).
run() {
	local name=$1 mb=${2:-$MB}
	shift
	(($#)) && shift
	: >"$work/$name.out"
	env INCR_GO="$work/$name.go" LD_PRELOAD="$lib" "$@" setsid "$prog" "$mb" 2 20 \
		>"$work/$name.out" 2>"$work/$name.err" </dev/null &
	pid=$!
	pids+=("$pid")
}
took() { grep 'checkpoint took' "$1"; }

echo "1..9"

# The uninterrupted output (the grower's pages checked at the end).
touch "$work/plain.go.1" "$work/plain.go.2"
run plain "$MB" INCR_GROW=1
wait_for gone "$pid"

run grow "$MB" INCR_GROW=1
wait_for has_line "$work/grow.out" '^wait 1$'
h=$("$crdbg" checkpoint "$pid" --backend "$backend" -v 2>"$work/grow.log")
cp "$work/grow.out" "$work/grow.at1"
touch "$work/grow.go.1" "$work/grow.go.2"
wait_for gone "$pid"
pre_dumped() {
	[[ -n $h ]] && ! has_line "$work/grow.log" 'no pre-dump' &&
		took "$work/grow.log" | grep -qE ', pre-dump [1-9][0-9]*,' &&
		[[ -f $CRDBG_STORE/$h/pre-dump.log ]]
}
check "a running tree of $MB MiB is pre-dumped (-v times it, its log is kept)" pre_dumped
pre_dumped || diag "$work/grow.log"
merged_by_copy() { took "$work/grow.log" | grep -qE '\([0-9]+ in place, [1-9][0-9]* copied\)'; }
check "the pages it mapped since the pre-dump make the merge write a new pages image" merged_by_copy
merged_by_copy || diag "$work/grow.log"
self_contained() {
	local d=$CRDBG_STORE/$h
	[[ ! -e $d/pre-dump && ! -e $d/parent ]] && ! grep -q '^parent ' "$d/metadata" &&
		(($(cat "$d"/pages-*.img | wc -c) > MB * 1048576))
}
check "the stored checkpoint is self-contained: every page in it, no pre-dump, no parent" \
	self_contained
self_contained || ls -la "$CRDBG_STORE/$h" | diag /dev/stdin
check "the program, continued after the checkpoint, ends with the uninterrupted output" \
	cmp -s "$work/plain.out" "$work/grow.out"
restarted() {
	cp "$work/grow.at1" "$work/grow.out"
	timeout 180 "$crdbg" restart "$h" --backend "$backend" >"$work/r.log" 2>&1 &&
		cmp -s "$work/plain.out" "$work/grow.out"
}
check "its restart runs to the uninterrupted output, every grown page intact" restarted
cmp -s "$work/plain.out" "$work/grow.out" || diag "$work/r.log" "$work/grow.out"

# Nothing mapped since: the pre-dump's pages image becomes the dump's; the
# next checkpoint of the same program is incremental (its parent the
# first) and takes no pre-dump.
rm -f "$work"/still.go.*
run still
wait_for has_line "$work/still.out" '^wait 1$'
s1=$("$crdbg" checkpoint "$pid" --backend "$backend" -v 2>"$work/s1.log")
touch "$work/still.go.1"
wait_for has_line "$work/still.out" '^wait 2$'
s2=$("$crdbg" checkpoint "$pid" --backend "$backend" -v 2>"$work/s2.log")
cp "$work/still.out" "$work/still.at2"
touch "$work/still.go.2"
wait_for gone "$pid"
in_place() { took "$work/s1.log" | grep -qE '\([1-9][0-9]* in place, 0 copied\)'; }
check "a program that mapped nothing since is merged in place" in_place
in_place || diag "$work/s1.log"
incremental_after() {
	[[ $(sed -n 's/^parent //p' "$CRDBG_STORE/$s2/metadata") == "$s1" ]] &&
		has_line "$work/s2.log" 'no pre-dump: the checkpoint is incremental' &&
		cp "$work/still.at2" "$work/still.out" &&
		timeout 180 "$crdbg" restart "$s2" --backend "$backend" >"$work/s2.r" 2>&1 &&
		diff <(grep -v '^grown' "$work/plain.out") "$work/still.out" >/dev/null
}
check "the next checkpoint is incremental on it, takes no pre-dump, and restarts to the same end" \
	incremental_after
incremental_after || diag "$work/s2.log" "$work/s2.r"

# No pre-dump: asked, or a tree too small for it to pay.
rm -f "$work"/off.go.*
run off
wait_for has_line "$work/off.out" '^wait 1$'
o1=$("$crdbg" checkpoint "$pid" --backend "$backend" --no-pre-dump -v 2>"$work/o1.log")
touch "$work/off.go.1" "$work/off.go.2"
wait_for gone "$pid"
run small 4
wait_for has_line "$work/small.out" '^wait 1$'
o2=$("$crdbg" checkpoint "$pid" --backend "$backend" -v 2>"$work/o2.log")
touch "$work/small.go.1" "$work/small.go.2"
wait_for gone "$pid"
not_pre_dumped() {
	[[ -n $o1 && -n $o2 && ! -e $CRDBG_STORE/$o1/pre-dump.log &&
		! -e $CRDBG_STORE/$o2/pre-dump.log ]] &&
		has_line "$work/o1.log" 'no pre-dump: --no-pre-dump' &&
		has_line "$work/o2.log" 'no pre-dump: the tree holds too little memory'
}
check "--no-pre-dump and a 4 MiB tree take no pre-dump, and -v says why" not_pre_dumped
not_pre_dumped || diag "$work/o1.log" "$work/o2.log"

# A job that continues: each part pre-dumps its own tree before the cut.
touch "$work/jplain.go.1" "$work/jplain.go.2"
run jplain 32
wait_for gone "$pid"
run ja 32
a=$pid
run jb 32
b=$pid
wait_for has_line "$work/ja.out" '^wait 1$'
wait_for has_line "$work/jb.out" '^wait 1$'
job=$("$crdbg" checkpoint --job "$a,$b" --backend "$backend" -v 2>"$work/job.log")
for r in ja jb; do cp "$work/$r.out" "$work/$r.at1"; done
touch "$work"/ja.go.1 "$work"/ja.go.2 "$work"/jb.go.1 "$work"/jb.go.2
wait_for gone "$a"
wait_for gone "$b"
job_pre_dumped() {
	[[ -n $job ]] && (($(grep -c 'checkpoint took .*, pre-dump [1-9][0-9]*,' "$work/job.log") == 2)) &&
		cp "$work/ja.at1" "$work/ja.out" && cp "$work/jb.at1" "$work/jb.out" &&
		timeout 180 "$crdbg" restart "$job" --backend "$backend" >"$work/jr.log" 2>&1 &&
		cmp -s "$work/jplain.out" "$work/ja.out" && cmp -s "$work/jplain.out" "$work/jb.out"
}
check "a job that continues: both parts pre-dumped, the job restarts to the uninterrupted outputs" \
	job_pre_dumped
job_pre_dumped || diag "$work/job.log" "$work/jr.log"

[[ $n == 9 ]] || echo "# planned 9 tests, ran $n"
exit $((failed ? 1 : 0))
