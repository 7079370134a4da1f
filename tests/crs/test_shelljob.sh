#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Shell jobs, in the guest, on one freeze backend (argument: ptrace or
# kmod). TAP on stdout. Documentation/checkpoint.md, "Shell jobs".
# A shell job is a tree whose session (and group) is led by a shell
# outside it, on that shell's terminal:
#
#   prog_pty T bash -c 'prog & wait'   prog: sid and pgid bash's, fds 1-2 T (0: /dev/null, a background job's)
#   checkpoint prog --kill
#   restart with no terminal           refused in one line, nothing restored
#   prog_pty R crdbg restart H         prog goes on, on R, in R's session
#   prog_pty R2 (slave as fd 3, no session)
#     setsid crdbg restart H --terminal-fd 3
#                                      the same, on the pty handed in
#
# Debian's LAMMPS (lmp, an MPI singleton with its orted) started the same
# way goes on after its restart on another terminal with the thermo lines
# of an uninterrupted run. And a tree whose session has no leader in its
# PID namespace (session 0:
# a program the guest's init started without setsid) is refused before
# anything is frozen, saying so, and keeps running.
set -u
. "$(dirname "$0")/lib.sh" shelljob "$@"
pty=$build/tests/crs/prog_pty
prog=$build/tests/crs/prog_ckpt
export CKPT_GO=$work/go
STEPS=20
NAP=200

# wait_long COND...: as wait_for, for at most ~300 s (restores under TCG).
wait_long() {
	local i
	for i in $(seq 3000); do "$@" && return 0; sleep 0.1; done
	return 1
}
has_crline() { tr -d '\r' <"$1" 2>/dev/null | grep -q -- "$2"; }
exists() { kill -0 "$1" 2>/dev/null; }
lines() { tr -d '\r' <"$1" | grep -E -- "$2"; }
pts_of() { readlink "/proc/$1/fd/$2"; }
sid_of() { ps -o sid= -p "$1" | tr -d ' '; }
running() { local s; s=$(ps -o stat= -p "$1") && [[ $s != T* ]]; }
# steps LOG...: the step lines of the logs, in order, as one run prints them.
steps_whole() { cmp -s <(seq 0 $((STEPS - 1)) | sed "s/^/step /") <(for l; do lines "$l" "^step "; done); }

echo "1..16"

# --- a shell job on its shell's terminal ------------------------------------
rm -f "$CKPT_GO"
PTY_PIDFILE=$work/sh.pid "$pty" "$work/t.log" bash -c '"$0" 0 "$1" "$2" & echo $! >"$3"; wait' \
	"$prog" "$STEPS" "$NAP" "$work/p.pid" </dev/null &
pids+=("$!")
wait_long test -s "$work/p.pid"
p=$(cat "$work/p.pid")
sh=$(cat "$work/sh.pid")
pids+=("$p" "$sh")
wait_long has_crline "$work/t.log" '^step 5$'
# a background job of a shell without job control reads /dev/null, not the terminal
fd0=$(pts_of "$p" 0)
echo "# prog $p: pid pgid sid $(ids "$p" 0), bash $sh, fd 0 $fd0, fd 1 $(pts_of "$p" 1)"
"$crdbg" checkpoint "$p" --backend "$backend" --kill >"$work/h" 2>"$work/ckpt.err"
rc=$?
h=$(cat "$work/h")
check "shell job: the checkpoint of a program whose session and group bash leads succeeds" \
	eval '[[ $rc == 0 && -n $h ]]'
[[ $rc == 0 ]] || diag "$work/ckpt.err"
check "shell job: it is recorded as one, with its terminal" \
	eval 'grep -qx "shell-job 1" "$CRDBG_STORE/$h/metadata" &&
	      grep -q "^stdio $p 1 0 0x[0-9a-f]* 0x[0-9a-f]* /dev/pts/" "$CRDBG_STORE/$h/metadata"'
wait_long gone "$p"
wait_long gone "$sh"

# --- no terminal: refused, nothing restored ----------------------------------
setsid -w "$crdbg" restart "$h" --backend "$backend" </dev/null >"$work/noterm.out" \
	2>"$work/noterm.err"
rc=$?
check "no terminal: the restart is refused in one line saying to restart from a terminal" \
	eval '[[ $rc != 0 && $(wc -l <"$work/noterm.err") == 1 ]] &&
	      grep -q "restart from a terminal, or hand one in with --terminal-fd" "$work/noterm.err"'
diag "$work/noterm.err"
check "no terminal: nothing was restored" eval '! exists "$p"'

# --- restarted from another shell's terminal --------------------------------
PTY_PIDFILE=$work/r.pid "$pty" "$work/r.log" "$crdbg" restart "$h" --backend "$backend" \
	</dev/null 2>"$work/r.err" &
rp=$!
pids+=("$rp")
wait_long test -s "$work/r.pid"
r=$(cat "$work/r.pid")
wait_long exists "$p"
wait_long running "$p"
sleep 1
rpts=$(pts_of "$p" 1)
echo "# restored $p: pid pgid sid $(ids "$p" 0), fd 1 $rpts; the restart $r on $(pts_of "$r" 0)"
check "another terminal: the program is back with its pid, in the restarting shell's session" \
	eval '[[ $(sid_of "$p") == "$r" ]]'
# fd 0: the restarting terminal where it was the shell's, else as it was
check "another terminal: its fds 1 and 2 are the restarting terminal, fd 0 as at the checkpoint" \
	eval '[[ $rpts == /dev/pts/* && $rpts == $(pts_of "$r" 0) && $(pts_of "$p" 2) == "$rpts" &&
	      ( $fd0 == /dev/pts/* && $(pts_of "$p" 0) == "$rpts" || $(pts_of "$p" 0) == "$fd0" ) ]]'
touch "$CKPT_GO"
wait "$rp"
rc=$?
check "another terminal: the restart ends with the program's status 0" test "$rc" = 0
[[ $rc == 0 ]] || diag "$work/r.err" "$work/r.log"
check "another terminal: its output goes on there, every step once" \
	steps_whole "$work/t.log" "$work/r.log"
steps_whole "$work/t.log" "$work/r.log" || diag "$work/t.log" "$work/r.log"

# --- a terminal handed in as an fd (a service's pty of its own) -------------
PTY_SLAVE_FD=3 PTY_NAMEFILE=$work/r2.name "$pty" "$work/r2.log" \
	setsid -w "$crdbg" restart "$h" --backend "$backend" --terminal-fd 3 \
	</dev/null >"$work/r2.out" 2>"$work/r2.err" &
rp=$!
pids+=("$rp")
wait_long exists "$p"
wait_long running "$p"
wait "$rp"
rc=$?
check "--terminal-fd: the restart ends with the program's status 0" test "$rc" = 0
[[ $rc == 0 ]] || diag "$work/r2.err" "$work/r2.log"
check "--terminal-fd: its output is on the pty handed in, every step from the checkpoint on" \
	eval 'cmp -s <(seq 6 $((STEPS - 1)) | sed "s/^/step /") <(lines "$work/r2.log" "^step ")'
check "--terminal-fd: nothing of it on crdbg restart's own stdout" \
	eval '! grep -q "^step" "$work/r2.out"'
out=$("$crdbg" restart "$h" --terminal-fd 9 2>&1 </dev/null)
rc=$?
check "--terminal-fd on an fd that is no terminal: refused in one line" \
	eval '[[ $rc != 0 && $(wc -l <<<"$out") == 1 && $out == *"--terminal-fd 9"* ]]'
echo "# $out"

# --- a real program: Debian's LAMMPS, started from a shell -----------------
# thermo FILE...: LAMMPS's thermo lines (step and five numbers), in order.
thermo() { for f; do tr -d '\r' <"$f" | awk 'NF == 6 && $1 ~ /^[0-9]+$/'; done; }
if ! command -v lmp >/dev/null; then
	for i in 1 2 3; do skip "LAMMPS shell job" "no /usr/bin/lmp (apt-get install lammps)"; done
else
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	mkdir "$work/lmp"
	printf '%s\n' "units lj" "atom_style atomic" "lattice fcc 0.8442" \
		"region box block 0 5 0 5 0 5" "create_box 1 box" "create_atoms 1 box" \
		"mass 1 1.0" "velocity all create 3.0 87287 loop geom" \
		"pair_style lj/cut 2.5" "pair_coeff 1 1 1.0 1.0 2.5" "neighbor 0.3 bin" \
		"neigh_modify every 20 delay 0 check no" "fix 1 all nve" "thermo 100" \
		"run 1500" >"$work/lmp/in.melt"
	(cd "$work/lmp" && timeout 600 lmp -in in.melt -log none </dev/null >ref.out 2>&1)
	PTY_PIDFILE=$work/lsh.pid "$pty" "$work/lt.log" bash -c \
		'cd "$0" && lmp -in in.melt -log none & echo $! >"$1"; wait' \
		"$work/lmp" "$work/lmp.pid" </dev/null &
	pids+=("$!")
	wait_long test -s "$work/lmp.pid"
	lp=$(cat "$work/lmp.pid")
	pids+=("$lp")
	wait_long eval 'thermo "$work/lt.log" | grep -q "^ *300 "'
	"$crdbg" checkpoint "$lp" --backend "$backend" --kill >"$work/lh" 2>"$work/lckpt.err"
	rc=$?
	lh=$(cat "$work/lh")
	check "LAMMPS: the checkpoint of lmp started by bash on its terminal succeeds" \
		eval '[[ $rc == 0 && -n $lh ]] && grep -qx "shell-job 1" "$CRDBG_STORE/$lh/metadata"'
	[[ $rc == 0 ]] || diag "$work/lckpt.err"
	wait_long gone "$lp"
	PTY_PIDFILE=$work/lr.pid "$pty" "$work/lr.log" timeout 900 "$crdbg" restart "$lh" \
		--backend "$backend" </dev/null 2>"$work/lr.err"
	rc=$?
	check "LAMMPS: restarted on another terminal, it runs to its end (status 0)" test "$rc" = 0
	[[ $rc == 0 ]] || diag "$work/lr.err" "$work/lr.log"
	check "LAMMPS: its thermo lines before and after, together, are an uninterrupted run's" \
		eval 'cmp -s <(thermo "$work/lmp/ref.out") <(thermo "$work/lt.log" "$work/lr.log")'
	echo "# thermo lines: $(thermo "$work/lmp/ref.out" | wc -l) uninterrupted, $(thermo "$work/lt.log" | wc -l) before the checkpoint, $(thermo "$work/lr.log" | wc -l) after"
fi

# --- no session leader in its PID namespace ---------------------------------
if [[ $(sid_of $$) != 0 ]]; then
	skip "session 0: refused before the freeze" "this test runs in a session with a leader (only the guest's init has session 0)"
else
	"$prog" 0 1000 "$NAP" >"$work/z.out" 2>&1 </dev/null &
	z=$!
	pids+=("$z")
	wait_long has_line "$work/z.out" '^step 2$'
	out=$("$crdbg" checkpoint "$z" --backend "$backend" --kill 2>&1 </dev/null)
	rc=$?
	sleep 1
	check "session 0: refused in one line naming setsid, the program still running" \
		eval '[[ $rc != 0 && $(wc -l <<<"$out") == 1 && $out == *"setsid"* ]] && running "$z"'
	echo "# $out"
fi

[[ $n == 16 ]] || echo "# planned 16 tests, ran $n"
exit $((failed ? 1 : 0))
