#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Job checkpoints in the guest, on one freeze backend (argument: ptrace or
# kmod). TAP on stdout.
#
#   a, b, c: three prog_incr processes (the "ranks"), waiting for phase 1
#     | crdbg checkpoint --job A,B,C --kill    one cut, one manifest, 3 parts
#     v
#   job-...  crdbg restart JOB (three times)  the barrier: all back, then released
#
# Every restart must end each process with the uninterrupted output. A
# corrupt part, a part of another computation, a part that never reports
# and a part that cannot be taken are refused naming the part, and nothing
# of the job runs (or, at checkpoint, the job goes on and nothing is kept).
set -u
. "$(dirname "$0")/lib.sh" job "$@"
prog=$build/tests/crs/prog_incr
lib=$build/usr/libcrdbg.so

all_gone() { local p; for p in "$@"; do kill -0 "$p" 2>/dev/null && return 1; done; return 0; }
one_line_error() { # OUT CMD...: fails with one "crdbg:" line last on stderr, kept in OUT
	local out=$1 rc
	shift
	"$@" 2>"$out" >/dev/null
	rc=$?
	[[ $rc != 0 ]] && tail -n 1 "$out" | grep -q '^crdbg:'
}
stores() { ls "$CRDBG_STORE" 2>/dev/null | wc -l; }
reseal() { # FILE: a manifest edited by hand, sealed again as crdbg would
	local body
	body=$(sed '$d' "$1")
	printf '%s\nend %s\n' "$body" "$(printf '%s\n' "$body" | sha256sum | cut -d' ' -f1)" >"$1"
}

# run NAME: start a rank with its own go files ($work/NAME.go.<phase>).
run() {
	INCR_GO=$work/$1.go LD_PRELOAD=$lib setsid "$prog" 4 2 20 \
		>"$work/$1.out" 2>"$work/$1.err" </dev/null &
	pid=$!
	disown "$pid"	# its kill is expected: no "Killed" from bash
	pids+=("$pid")
	eval "pid_$1=$pid"
}
go_all() { local r; for r in "$@"; do touch "$work/$r.go.1" "$work/$r.go.2"; done; }
at_wait() { has_line "$work/$1.out" '^wait 1$'; }
# CRIU checks that an open file has the size it had: output files go back too.
snapshot() { local r; for r in "$@"; do cp "$work/$r.out" "$work/$r.at1"; cp "$work/$r.err" "$work/$r.err1"; done; }
rewind() {
	local r
	for r in "$@"; do
		cp "$work/$r.at1" "$work/$r.out"
		cp "$work/$r.err1" "$work/$r.err"
		rm -f "$work/$r.go."*
	done
}
same_end() { local r; for r in "$@"; do cmp -s "$work/plain.out" "$work/$r.out" || return 1; done; }

echo "1..17"

touch "$work/plain.go.1" "$work/plain.go.2"
run plain
wait_for gone "$pid"

# One cut over three processes; --kill ends them once all are stored.
run a; run b; run c
wait_for at_wait a && wait_for at_wait b && wait_for at_wait c
snapshot a b c
job=$("$crdbg" checkpoint --job "$pid_a,$pid_b,$pid_c" --kill --backend "$backend" \
	2>"$work/ckpt.log")
check "checkpoint --job prints one job handle" test -n "$job" -a -f "$CRDBG_STORE/.jobs/$job"
[[ -n $job ]] || diag "$work/ckpt.log"
check "--kill ended every process of the job once every part was stored" \
	wait_for all_gone "$pid_a" "$pid_b" "$pid_c"
cid=$(sed -n 's/^cid //p' "$CRDBG_STORE/.jobs/$job" 2>/dev/null)
parts_ok() {
	local k h
	[[ -n $cid && $(grep -c '^part ' "$CRDBG_STORE/.jobs/$job") == 3 ]] || return 1
	for k in 0 1 2; do
		h=$(awk -v k=$k '$1 == "part" && $2 == k { print $5 }' "$CRDBG_STORE/.jobs/$job")
		grep -qx "cid $cid 3 $k" "$CRDBG_STORE/$h/metadata" || return 1
		[[ $(sha256sum <"$CRDBG_STORE/$h/metadata" | cut -d' ' -f1) == \
			$(awk -v k=$k '$1 == "part" && $2 == k { print $6 }' "$CRDBG_STORE/.jobs/$job") ]] ||
			return 1
	done
}
check "the manifest names 3 parts; each part records the CID, the count and its index" parts_ok
list_ok() { "$crdbg" list >"$work/list" && grep -Eq "^$job .* 3 .*$cid +-\$" "$work/list"; }
check "crdbg list shows the job with its parts and CID" list_ok
list_ok || diag "$work/list"

# The barrier: every part back before any is released; three times.
restart_job() { # LOG [ARGS]: restart the job, the ranks free to finish
	local log=$1
	shift
	rewind a b c
	go_all a b c	# a restored rank finds its go files once released
	"$crdbg" restart "$job" --backend "$backend" "$@" >"$work/restart.out" 2>"$log"
	echo "exit $?" >>"$log"
	same_end a b c && grep -qx 'exit 0' "$log"
}
for i in 1 2 3; do
	# its log (crdbg's exit last) when it failed, even if the ranks end well later
	check "restart $i of the job: every rank ends with the uninterrupted output" \
		restart_job "$work/restart$i.log" -v ||
		{ DIAG_LINES=40 diag "$work/restart$i.log"; diag "$work/a.out"; }
done
released_after_all() { # the coordinator released only after the last part reported
	grep -q "every part of $job is back (computation $cid, 3 parts): releasing" \
		"$work/restart1.log"
}
check "the coordinator adopted the job's CID and released when all 3 parts were back" \
	released_after_all

# --debug: crdbg itself prints every restored process's marker.
markers_ok() {
	local rp n
	rewind a b c
	"$crdbg" restart "$job" --backend "$backend" --debug >/dev/null 2>"$work/debug.err" &
	rp=$!
	wait_for eval '[[ $(grep -c "^MPIR debug info) [^ ]*:[0-9]*$" "$work/debug.err") -ge 3 ]]'
	n=$(grep -c "^MPIR debug info) " "$work/debug.err")
	kill -9 "$pid_a" "$pid_b" "$pid_c" 2>/dev/null	# parked for a debugger: end them
	wait "$rp"
	[[ $n == 3 ]] && grep -q "^MPIR debug info) .*:$pid_a\$" "$work/debug.err" &&
		grep -q "^MPIR debug info) .*:$pid_c\$" "$work/debug.err"
}
check "restart --debug of the job prints one MPIR debug info line per restored process" markers_ok
wait_for all_gone "$pid_a" "$pid_b" "$pid_c"

# From a fresh shell, with the debugger: crdbg debug --restart JOB restores
# the job through the barrier and attaches a console to its ranks (rank i:
# part i), every thread back at its pc; the ranks then run to their end.
adopt_ok() {
	rewind a b c
	go_all a b c
	printf 'status -p\necho === stacks\nstacks\necho === end\ncontinue\nquit\n' >"$work/adopt.script"
	CRDBG_BACKEND=$backend timeout 600 "$crdbg" debug --restart "$job" --batch "$work/adopt.script" \
		>"$work/adopt.out" 2>&1 || return 1
	awk '/=== stacks/ { on = 1; next } /=== end/ { on = 0 } on' "$work/adopt.out" |
		grep -Eq '\[0-2\].*(wait_go|main)' &&
		grep -q "^restart: job $job: ranks 0-2 are where the checkpoint left them" \
			"$work/adopt.out" &&
		grep -q '^\[0-2\]: exited: code 0' "$work/adopt.out" && same_end a b c
}
check "debug --restart JOB: the console attaches to the restored ranks at wait_go; they end as uninterrupted" \
	adopt_ok
grep -q '^\[0-2\]: exited: code 0' "$work/adopt.out" || diag "$work/adopt.out"
wait_for all_gone "$pid_a" "$pid_b" "$pid_c"

# A corrupt part: refused before anything is restored, naming the part.
h1=$(awk '$1 == "part" && $2 == 1 { print $5 }' "$CRDBG_STORE/.jobs/$job")
rewind a b c
cp -a "$CRDBG_STORE/$h1" "$work/h1.bak"
pages=$(ls "$CRDBG_STORE/$h1"/pages-*.img | head -n 1)
truncate -s -1 "$pages"
corrupt_refused() {
	one_line_error "$work/corrupt.err" "$crdbg" restart "$job" --backend "$backend" &&
		grep -q "refused, nothing was restored: .*part 1.*$h1 is corrupt" "$work/corrupt.err" &&
		! pgrep -f "$prog" >/dev/null
}
check "a corrupt part is refused naming it, before anything runs" corrupt_refused
grep -q refused "$work/corrupt.err" || diag "$work/corrupt.err"
rm -rf "${CRDBG_STORE:?}/$h1" && cp -a "$work/h1.bak" "$CRDBG_STORE/$h1"

# A part of another computation: rejected at the barrier, nothing released.
run d
wait_for at_wait d
snapshot d
other=$("$crdbg" checkpoint --job "$pid_d" --kill --backend "$backend" 2>"$work/ckpt2.log")
wait_for all_gone "$pid_d"
hd=$(awk '$1 == "part" && $2 == 0 { print $5, $6 }' "$CRDBG_STORE/.jobs/$other")
forged=job-forged-$backend
sed -e "s/^handle .*/handle $forged/" \
	-e "s/^\(part 2 [^ ]* [^ ]*\) .*/\1 $hd/" "$CRDBG_STORE/.jobs/$job" >"$CRDBG_STORE/.jobs/$forged"
reseal "$CRDBG_STORE/.jobs/$forged"
foreign_rejected() {
	one_line_error "$work/foreign.err" "$crdbg" restart "$forged" --backend "$backend" &&
		grep -q "part 2.* belongs to computation .*, not $cid" "$work/foreign.err" &&
		wait_for all_gone $(awk '$1 == "process" { print $2 }' \
			"$CRDBG_STORE"/*/metadata)
}
rewind a b c d
check "a part of another computation is rejected and the held parts are killed" foreign_rejected
grep -q computation "$work/foreign.err" || diag "$work/foreign.err"

# A part that never reports: the timeout names it; nothing runs.
late=job-late-$backend
sed -e "s/^handle .*/handle $late/" -e "s/^\(part 2\) [^ ]*/\1 ghost/" \
	"$CRDBG_STORE/.jobs/$job" >"$CRDBG_STORE/.jobs/$late"
reseal "$CRDBG_STORE/.jobs/$late"
late_refused() {
	one_line_error "$work/late.err" "$crdbg" restart "$late" --backend "$backend" \
		--timeout 5 --launch 'sleep 600; {cmd}' &&
		grep -q "1 part never reported (ghost (part 2))" "$work/late.err" &&
		! pgrep -f "$prog" >/dev/null
}
rewind a b c
check "a part that never reports times out naming its node; nothing runs" late_refused
grep -q never "$work/late.err" || diag "$work/late.err"

# A part that cannot be taken: nothing kept anywhere, the job goes on.
run e; run f
wait_for at_wait e && wait_for at_wait f
before=$(stores)
jobs_before=$(ls "$CRDBG_STORE/.jobs" | wc -l)
part_fails() {
	one_line_error "$work/fail.err" "$crdbg" checkpoint --job "$pid_e,$pid_f,999999" \
		--backend "$backend" &&
		grep -q "failed on .*part 2.*no process with pid 999999.*nothing was kept" \
			"$work/fail.err" &&
		[[ $(stores) == "$before" && $(ls "$CRDBG_STORE/.jobs" | wc -l) == "$jobs_before" ]] &&
		kill -0 "$pid_e" && kill -0 "$pid_f"
}
check "a part that fails: one line naming it, no part or manifest kept, the job goes on" part_fails
grep -q failed "$work/fail.err" || diag "$work/fail.err"
kill -9 "$pid_e" "$pid_f" 2>/dev/null

# A part whose node falls silent once it froze its rank: part 1 is "on"
# node ghost, started through a launch template that passes its lines on
# until "crdbg-part frozen" and then nothing, its pipe left open (as a
# lost or cut-off node: no end of file, no beat). The coordinator hears
# nothing for CRS_PART_SILENCE_S (20 s), ends naming it, keeps nothing,
# and both ranks run on to the uninterrupted end.
cat >"$work/quiet-after-frozen" <<'QUIET'
#!/bin/sh
while IFS= read -r l; do
	printf '%s\n' "$l"
	[ "$l" = "crdbg-part frozen" ] && exec sleep 600
done
QUIET
chmod +x "$work/quiet-after-frozen"
run g; run h
wait_for at_wait g && wait_for at_wait h
before=$(stores)
jobs_before=$(ls "$CRDBG_STORE/.jobs" | wc -l)
"$crdbg" checkpoint --job "$pid_g,ghost:$pid_h" --launch "{cmd} | $work/quiet-after-frozen" \
	--backend "$backend" >"$work/lost.out" 2>"$work/lost.err" &
coord=$!
part_lost() {
	local rc
	{ wait_for gone "$coord" || wait_for gone "$coord"; } || return 1
	wait "$coord"
	rc=$?
	((rc != 0)) && [[ ! -s $work/lost.out ]] &&
		tail -n 1 "$work/lost.err" |
		grep -q "^crdbg: .*failed on ghost (part 1): no word from it for 20 s: its node is lost or hung.*nothing was kept" &&
		[[ $(stores) == "$before" && $(ls "$CRDBG_STORE/.jobs" | wc -l) == "$jobs_before" ]] &&
		wait_for eval '! pgrep -f "quiet-after-frozen|crdbg-part checkpoint $pid_h " >/dev/null'
}
check "a part that falls silent after its freeze is taken as lost: one line naming it, nothing kept" \
	part_lost || { diag "$work/lost.err"; ps -eo pid,stat,args | grep -E "crdbg|prog_incr" | diag -; }
go_all g h
check "... and both ranks, thawed, run on to the uninterrupted end" \
	eval 'wait_for all_gone "$pid_g" "$pid_h" && same_end g h' ||
	{ ps -o pid,stat,wchan:20,args -p "$pid_g,$pid_h" | diag -; diag "$work/h.out"; }

# rm: a part alone is refused naming its job; the job goes whole.
rm_ok() {
	one_line_error "$work/rm1.err" "$crdbg" rm "$h1" &&
		grep -q "part of job checkpoint $job" "$work/rm1.err" &&
		"$crdbg" rm "$job" && [[ ! -e $CRDBG_STORE/.jobs/$job && ! -e $CRDBG_STORE/$h1 ]]
}
check "rm of a part names its job; rm of the job removes every part and the manifest" rm_ok
exit $((failed != 0))
