#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Terminals at restart, in the guest, on one freeze backend (argument:
# ptrace or kmod). TAP on stdout. Documentation/checkpoint.md, "Stdio and
# terminals at restart". Every terminal is a pty of tests/crs/prog_pty,
# which logs what its pty shows.
#
#   one tree, a session leader on its terminal:
#     prog_pty L0 prog_ckpt            checkpoint --kill
#     prog_pty R0 crdbg restart H      its output on R0, ids kept
#   a shell waiting in read: a line typed on the restart's terminal reaches it
#   a job of two trees on two terminals that talk through FIFOs:
#     prog_pty LA prog_ttypair ping    prog_pty LB prog_ttypair pong
#     checkpoint --job A,B --kill
#     prog_pty RA crdbg restart JOB    names terminal 1 and waits: nothing runs
#     prog_pty RB crdbg restart JOB --join 1
#                                      ping on RA's own new pty, pong on RB's
#   and: no join within --timeout, a join of another uid, of a job whose
#   restart is not waiting, of a terminal the restart has not.
set -u
. "$(dirname "$0")/lib.sh" term "$@"
pty=$build/tests/crs/prog_pty
prog=$build/tests/crs/prog_ckpt
pair=$build/tests/crs/prog_ttypair
export CKPT_GO=$work/go
STEPS=20
NAP=200
host=$(hostname)

# wait_long COND...: as wait_for, for at most ~300 s (restores under TCG).
wait_long() {
	local i
	for i in $(seq 3000); do "$@" && return 0; sleep 0.1; done
	return 1
}
has_line() { tr -d '\r' <"$1" 2>/dev/null | grep -q -- "$2"; }
exists() { kill -0 "$1" 2>/dev/null; }
# lines FILE RE: the lines of a pty's log that match, without their \r.
lines() { tr -d '\r' <"$1" | grep -E -- "$2"; }
# holds_master PID PTS: PID holds the master of /dev/pts/PTS.
holds_master() {
	grep -qs "^tty-index:[[:space:]]*${2#/dev/pts/}\$" /proc/"$1"/fdinfo/*
}
pts_of() { readlink "/proc/$1/fd/$2"; }
# crdbg_of PID: the crdbg that timeout PID runs.
crdbg_of() { pgrep -P "$1" -x crdbg || echo "$1"; }

echo "1..22"

# --- one tree on its terminal: crdbg restart relays a new pty --------------
rm -f "$CKPT_GO"
PTY_PIDFILE=$work/t0.pid "$pty" "$work/t0.log" "$prog" 0 "$STEPS" "$NAP" </dev/null &
pids+=("$!")
wait_long test -s "$work/t0.pid"
t0=$(cat "$work/t0.pid")
pids+=("$t0")
wait_long has_line "$work/t0.log" '^step 5$'
before=$(ids "$t0" 0)
"$crdbg" checkpoint "$t0" --backend "$backend" --kill >"$work/h0" 2>"$work/t0.ckpt"
wait_long gone "$t0"
h0=$(cat "$work/h0")
check "one tree: the checkpoint records its terminal (a pty whose master is outside)" \
	grep -q "^stdio $t0 1 0 0x[0-9a-f]* 0x[0-9a-f]* /dev/pts/" "$CRDBG_STORE/$h0/metadata"
[[ -n $h0 ]] || diag "$work/t0.ckpt"
PTY_PIDFILE=$work/r0.pid "$pty" "$work/r0.log" timeout 300 "$crdbg" restart "$h0" \
	--backend "$backend" </dev/null 2>"$work/r0.err" &
rp=$!
pids+=("$rp")
wait_long test -s "$work/r0.pid"
r0=$(cat "$work/r0.pid")
wait_long exists "$t0"
sleep 1
after=$(ids "$t0" 0)
t0pts=$(pts_of "$t0" 1)
echo "# before: $before; after: $after; fd 1: $t0pts"
check "one tree: pid, pgid and sid of the session leader kept" test "$after" = "$before"
check "one tree: its fd 0 and 1 are a new pty whose master crdbg restart holds" \
	eval '[[ $t0pts == /dev/pts/* && $(pts_of "$t0" 0) == "$t0pts" ]] && holds_master "$(crdbg_of "$r0")" "$t0pts"'
touch "$CKPT_GO"
wait "$rp"
rc=$?
check "one tree: the restart ends with the program's status 0" test "$rc" = 0
[[ $rc == 0 ]] || diag "$work/r0.err" "$work/r0.log"
check "one tree: its output after the restart is on crdbg restart's terminal, none lost" \
	eval 'cmp -s <(seq 0 $((STEPS - 1)) | sed "s/^/step /") <(lines "$work/t0.log" "^step "; lines "$work/r0.log" "^step ")'

# --- what is typed on crdbg restart's terminal reaches the tree -------------
PTY_PIDFILE=$work/t1.pid "$pty" "$work/t1.log" sh -c 'echo ready; read line; echo "got <$line>"' \
	</dev/null &
pids+=("$!")
wait_long test -s "$work/t1.pid"
t1=$(cat "$work/t1.pid")
pids+=("$t1")
wait_long has_line "$work/t1.log" '^ready$'
"$crdbg" checkpoint "$t1" --backend "$backend" --kill >"$work/h1" 2>"$work/t1.ckpt"
wait_long gone "$t1"
h1=$(cat "$work/h1")
[[ -n $h1 ]] || diag "$work/t1.ckpt"
mkfifo "$work/t1.in"
PTY_INPUT=$work/t1.in "$pty" "$work/r1.log" timeout 300 "$crdbg" restart "$h1" \
	--backend "$backend" </dev/null &
rp=$!
pids+=("$rp")
wait_long exists "$t1"
sleep 2
echo hello >"$work/t1.in"
wait "$rp"
rc=$?
check "input: the restart of a shell waiting in read ends with its status 0" test "$rc" = 0
check "input: a line typed on crdbg restart's terminal reached it" \
	has_line "$work/r1.log" '^got <hello>$'
[[ $rc == 0 ]] || diag "$work/r1.log"

# --- a job on two terminals -------------------------------------------------
rm -f "$CKPT_GO"
mkfifo "$work/ab" "$work/ba"
PTY_PIDFILE=$work/a.pid "$pty" "$work/a.log" "$pair" ping "$work/ab" "$work/ba" "$STEPS" "$NAP" </dev/null &
pids+=("$!")
PTY_PIDFILE=$work/b.pid "$pty" "$work/b.log" "$pair" pong "$work/ba" "$work/ab" "$STEPS" "$NAP" </dev/null &
pids+=("$!")
wait_long test -s "$work/a.pid"
wait_long test -s "$work/b.pid"
a=$(cat "$work/a.pid")
b=$(cat "$work/b.pid")
pids+=("$a" "$b")
wait_long has_line "$work/b.log" '^pong got ping 5$'
wait_long has_line "$work/a.log" '^ping got pong 5$'
aw=$(lines "$work/a.log" '^ping worker ' | awk '{ print $3 }')
bw=$(lines "$work/b.log" '^pong worker ' | awk '{ print $3 }')
pids+=("$aw" "$bw")
before="$(ids "$a" 0) $(ids "$aw" 1) / $(ids "$b" 0) $(ids "$bw" 1)"
"$crdbg" checkpoint --job "$host:$a:0,$host:$b:1" --backend "$backend" --kill \
	>"$work/hj" 2>"$work/job.ckpt"
wait_long gone "$a"
wait_long gone "$b"
hj=$(cat "$work/hj")
[[ -n $hj ]] || diag "$work/job.ckpt"
check "job: the manifest records each part's terminal" \
	eval '[[ $(grep -c "^part [01] .* [0-9a-f]*:[0-9a-f]*:/dev/pts/[0-9]*\$" "$CRDBG_STORE/.jobs/$hj") == 2 ]]'

# no join: the barrier times out naming the part, nothing was restored
timeout 600 "$crdbg" restart "$hj" --backend "$backend" --timeout 20 </dev/null \
	>"$work/nojoin.out" 2>"$work/nojoin.err"
rc=$?
check "job: without its join the restart fails, naming part 1 and its terminal" \
	eval '[[ $rc != 0 ]] && grep -q "never reported (this host (part 1, ranks 1): its terminal never joined)" "$work/nojoin.err"'
[[ $rc != 0 ]] || diag "$work/nojoin.err"
check "job: ... and it told which command to run on the other terminal" \
	grep -q "run \"crdbg restart $hj --join 1 --store $CRDBG_STORE\" on the terminal" "$work/nojoin.err"
check "job: ... and no process of the job was restored" eval '! exists "$a" && ! exists "$b" && ! exists "$aw"'

# the restart on terminal A, the join on terminal B
PTY_PIDFILE=$work/ra.pid "$pty" "$work/ra.log" timeout 600 "$crdbg" restart "$hj" \
	--backend "$backend" -v </dev/null &
ra_pty=$!
pids+=("$ra_pty")
wait_long has_line "$work/ra.log" "--join 1"
ra=$(crdbg_of "$(cat "$work/ra.pid")")
wrong=$(timeout 60 "$crdbg" restart "$hj" --join 2 2>&1 </dev/null)
rc=$?
check "job: a join of a terminal the restart has not is refused in one line" \
	eval '[[ $rc != 0 && $(wc -l <<<"$wrong") == 1 && $wrong == *"has no terminal 2"* ]]'
echo "# $wrong"
wrong=$(timeout 60 "$crdbg" restart job-20000101T000000-1 --join 1 2>&1 </dev/null)
rc=$?
check "job: a join of a job whose restart is not waiting is refused in one line" \
	eval '[[ $rc != 0 && $(wc -l <<<"$wrong") == 1 && $wrong == *"is waiting for its terminals"* ]]'
echo "# $wrong"
chmod 755 "$work"
wrong=$(timeout 60 setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$crdbg" restart "$hj" --join 1 --store "$CRDBG_STORE" 2>&1 </dev/null)
rc=$?
check "job: a join by another user is refused in one line" \
	eval '[[ $rc != 0 && $(wc -l <<<"$wrong") == 1 && $wrong == *"another user"* ]]'
echo "# $wrong"
sleep 2
check "job: before the join nothing of the job runs (no pid of it exists)" \
	eval '! exists "$a" && ! exists "$b" && ! exists "$aw" && ! exists "$bw"'

PTY_PIDFILE=$work/rb.pid "$pty" "$work/rb.log" timeout 600 "$crdbg" restart "$hj" --join 1 \
	</dev/null &
rb_pty=$!
pids+=("$rb_pty")
wait_long test -s "$work/rb.pid"
wait_long pgrep -P "$(cat "$work/rb.pid")" -x crdbg >/dev/null
rb=$(crdbg_of "$(cat "$work/rb.pid")")
wait_long exists "$aw"
wait_long exists "$bw"
sleep 1
after="$(ids "$a" 0) $(ids "$aw" 1) / $(ids "$b" 0) $(ids "$bw" 1)"
echo "# before: $before; after: $after"
check "job: pid, pgid, sid of both leaders and pid, ppid, pgid, sid of both workers kept" \
	test "$after" = "$before"
apts=$(pts_of "$aw" 1)
bpts=$(pts_of "$bw" 1)
echo "# ping's terminal $apts, pong's $bpts"
check "job: each process's fd 0 and 1 is a pty, and the two are distinct" \
	eval '[[ $apts == /dev/pts/* && $bpts == /dev/pts/* && $apts != "$bpts" && $(pts_of "$aw" 0) == "$apts" && $(pts_of "$bw" 0) == "$bpts" && $(pts_of "$a" 1) == "$apts" && $(pts_of "$b" 1) == "$bpts" ]]'
check "job: ping's pty is relayed by the restart on terminal A, pong's by the join on B" \
	eval 'holds_master "$ra" "$apts" && holds_master "$rb" "$bpts" && ! holds_master "$ra" "$bpts"'
touch "$CKPT_GO"
wait "$ra_pty"
rca=$?
wait "$rb_pty"
rcb=$?
check "job: the restart and the join end with status 0" eval '[[ $rca == 0 && $rcb == 0 ]]'
[[ $rca == 0 && $rcb == 0 ]] || diag "$work/ra.log" "$work/rb.log"
check "job: the restart released only once both parts were back" \
	has_line "$work/ra.log" "every part of $hj is back (computation .*, 2 parts): releasing"
expect() { seq 0 $((STEPS - 1)) | sed "s/^/$1 got $2 /"; echo "$1 done"; }
check "job: ping's words on terminals A, as in an uninterrupted run" \
	eval 'cmp -s <(expect ping pong) <(lines "$work/a.log" "^ping (got|done)"; lines "$work/ra.log" "^ping (got|done)")'
check "job: pong's words on terminals B, as in an uninterrupted run" \
	eval 'cmp -s <(expect pong ping) <(lines "$work/b.log" "^pong (got|done)"; lines "$work/rb.log" "^pong (got|done)")'
if ! cmp -s <(expect pong ping) <(lines "$work/b.log" "^pong (got|done)"; lines "$work/rb.log" "^pong (got|done)"); then
	diag "$work/rb.log"
fi

[[ $n == 22 ]] || echo "# planned 22 tests, ran $n"
exit $((failed ? 1 : 0))
