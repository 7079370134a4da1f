#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The console's checkpoint timeline (guest, root; the argument is the
# freeze backend, kmod or ptrace): "set auto-checkpoint on" over several
# stops of a loop, "checkpoints", "restart N", "back" and
# "set checkpoint-keep K", on a 2-rank crdbg debug -n 2 job and on a
# 2-rank Open MPI job under mpirun. TAP.
#
# - at restart 1 the stacks, the locals and the pc are those of stop 1;
# - the breakpoint set before is still in place: the next continue stops
#   there at the next iteration;
# - back returns to the checkpoint before the job's position (1 again);
# - with checkpoint-keep 4 the oldest chain is removed whole: checkpoints
#   shows 3 checkpoints, the others are gone;
# - with checkpoint-budget 1K only the newest chain (5, a full checkpoint:
#   the one after a restart is full) stays: checkpoints and
#   crdbg list show the same job checkpoint (and its 2 parts), every
#   other one is gone from the store;
# - the second checkpoint is incremental on the first (a chain);
# - the job then runs to the output of an uninterrupted run.
set -u
freeze=${1:?usage: test_timeline.sh kmod|ptrace}
export CRDBG_BACKEND=$freeze
top=${CRDBG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
prog=$build/tests/debug/prog_timeline
mprog=$build/tests/debug/mpi_timeline
work=$(mktemp -d /tmp/crdbg-timeline-$freeze.XXXXXX)
export CRDBG_STORE=$work/store
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MPIR_DO_NOT_WARN=1
cleanup() {
	pkill -9 -f "$mprog" 2>/dev/null
	pkill -9 -f "$prog" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
backend="timeline, $freeze"
. "$top/tests/guest/tap.sh"
echo "1..15"

# block NAME: what is compared at stop 1 and after going back to it.
block() {
	printf 'echo === %s\nstacks\nprint i\nprint total\nprint $pc\necho === end\n' "$1"
}
# part FILE NAME: that block of a session's output.
part() { awk -v k="=== $2\$" '$0 ~ k { on = 1; next } /=== end/ { on = 0 } on' "$1"; }
no_error() { ! grep -Eq 'cannot|could not|not back|no handle|error|did not|lost|refused' "$@"; }

{
	printf 'set auto-checkpoint on\nset checkpoint-keep 4\nbreak tl_step\ncontinue\n'
	block "at 1"
	printf 'continue\ncontinue\necho === list 1\ncheckpoints\necho === end\nrestart 1\n'
	block "again 1"
	printf 'continue\necho === after\nprint i\necho === end\nback\n'
	printf 'echo === back\nprint i\nprint total\necho === end\ncontinue\n'
	printf 'echo === list 2\ncheckpoints\necho === end\n'
	printf 'set checkpoint-budget 1K\necho === list 3\ncheckpoints\necho === end\n'
	printf 'set auto-checkpoint off\ndelete\ncontinue\n'
	# The job has ended: checkpoint 5 (stop 5, i = 1) brings it back.
	printf 'restart 5\necho === after end\nprint i\necho === end\ncontinue\nquit\n'
} >"$work/script"
timeout 900 "$build/crdbg" debug -n 2 --preload "$build/usr/libcrdbg.so" \
	--batch "$work/script" "$prog" >"$work/out" 2>"$work/err"
rc=$?
sed 's/^/# /' "$work/out" "$work/err"
ls -la "$CRDBG_STORE" | sed 's/^/# store: /'
out=$work/out
at1=$(part "$out" "at 1")

check "the batch session exits 0" test "$rc" = 0
took() {
	local i
	for i in 1 2 3 4 5; do
		grep -q "^checkpoint $i: \[0-1\] breakpoint 2, tl_step at .*prog_timeline.c:" "$out" || return 1
	done
	[[ $(grep -c '^checkpoint [0-9]*: ' "$out") == 5 ]]
}
check "auto-checkpoint took one checkpoint at each of the 5 stops, named by its breakpoint" took
chain() {
	part "$out" "list 1" | grep -Eq '^. 2 .* incremental +\[0-1\] breakpoint 2' &&
		part "$out" "list 1" | grep -Eq '^. 1 .* full +\[0-1\]' &&
		part "$out" "list 1" | grep -Eq '^. 3 .* full +\[0-1\]'
}
check "checkpoint 2 is incremental on 1, 3 starts a new chain (checkpoint-keep 4: chains of 2)" chain
check "stacks at stop 1 show tl_step under main on ranks 0-1" \
	eval 'grep -q "tl_step" <<<"$at1" && grep -q "^\[0-1\]: i = 0" <<<"$at1"'
check "restart 1: stacks, i, total and pc are those of stop 1" \
	eval 'grep -q "tl_step" <<<"$at1" && cmp -s <(echo "$at1") <(part "$out" "again 1")'
diff <(echo "$at1") <(part "$out" "again 1") | sed 's/^/# /'
check "after restart 1 the breakpoint is in place: continue stops there at i = 1" \
	eval 'part "$out" after | grep -q "^\[0-1\]: i = 1" &&
	      sed -n "/^restart: the job is at checkpoint 1/,/=== after/p" "$out" |
	      grep -q "^\[0-1\]: stopped: breakpoint 2, tl_step"'
check "back returns to checkpoint 1 (the one before the job's position)" \
	eval 'grep -q "^back: the job is at checkpoint 1: " "$out" &&
	      part "$out" back | grep -q "^\[0-1\]: i = 0" &&
	      part "$out" back | grep -q "^\[0-1\]: total = 0"'
# Retention: 1 and 2 (one chain) removed once 5 was taken; 3, 4, 5 kept.
nums() { part "$out" "list $1" | sed -n 's/^. \([0-9][0-9]*\) .*/\1/p' | tr '\n' ' '; }
handles() { part "$out" "list $1" | sed -n 's/^ *handles //p' | tr ',' '\n' | sort; }
check "checkpoint-keep 4: checkpoints lists 3 4 5 after the oldest chain went" \
	eval '[[ "$(nums 2)" == "3 4 5 " ]] && grep -q "^checkpoint-keep 4: removed checkpoints 1-2" "$out"'
echo "# list 1: $(nums 1), list 2: $(nums 2)"
"$build/crdbg" list | sed 's/^/# crdbg list: /'
budget() {
	[[ "$(nums 3)" == "5 " ]] &&
		grep -q "^checkpoint-budget 1 KiB: removed checkpoint 3\$" "$out" &&
		grep -q "^checkpoint-budget 1 KiB: removed checkpoint 4\$" "$out" &&
		[[ $(handles 3 | wc -l) == 1 ]] &&
		cmp -s <(handles 3) <("$build/crdbg" list | awk "/^job-/ { print \$1 }" | sort) &&
		[[ $("$build/crdbg" list | grep -c "^[0-9]") == 2 ]]
}
check "checkpoint-budget 1K: only the newest chain (5) stays, in checkpoints and crdbg list" budget
gone_all() {
	local h n=0
	for h in $( (handles 1; handles 2) | sort -u); do
		handles 3 | grep -qx "$h" && continue
		n=$((n + 1))
		[[ ! -e $CRDBG_STORE/.jobs/$h ]] || return 1
	done
	[[ $n == 4 && $(ls "$CRDBG_STORE" | grep -c .) == 2 ]]
}
check "... and every removed job checkpoint is gone: manifest and parts" gone_all
expected() { for r in 0 1; do CRDBG_RANK=$r "$prog" | sed "s/^/[$r] /"; done; }
ended() { sed -n "/=== after end/q;p" "$out"; }
check "the job runs to the output of an uninterrupted run" \
	eval 'cmp -s <(expected) <(ended | grep "timeline rank" | sort)'
after_end() {
	grep -q "^restart: the job is at checkpoint 5: " "$out" &&
		part "$out" "after end" | grep -q "^\[0-1\]: i = 1\$" &&
		cmp -s <(expected) <(sed -n "/=== after end/,\$p" "$out" | grep "timeline rank" | sort) &&
		[[ $(grep -c "^\[0-1\]: exited: code 0" "$out") == 2 ]]
}
check "restart 5 once the job has ended: i as at stop 5, then the same end again" after_end
check "no error from the timeline" no_error "$out" "$work/err"

# An MPI job: one image per checkpoint (mpirun's tree), the ranks meet in
# MPI_Allreduce between stops. On crdbg.ko only: a checkpoint of the job
# takes about 45 s in the TCG guest, and what the timeline adds does not
# depend on the backend (test_debugmpi.sh checkpoints and restarts the
# MPI job on both).
why=
[[ $freeze == kmod ]] || why="the MPI job runs on the kmod backend only (guest time)"
[[ -x $mprog ]] && command -v mpirun >/dev/null || why="no mpirun, or $mprog not built"
if [[ -n $why ]]; then
	skip "MPI job: restart 1 as at stop 1, breakpoint in place" "$why"
	skip "MPI job: runs to the uninterrupted output" "$why"
	[[ $failed == 0 ]]
	exit
fi
{
	printf 'set auto-checkpoint on\nbreak tl_step\ncontinue\n'
	block "at 1"
	printf 'continue\nrestart 1\n'
	block "again 1"
	printf 'continue\necho === after\nprint i\necho === end\n'
	printf 'set auto-checkpoint off\ndelete\ncontinue\nquit\n'
} >"$work/mscript"
timeout 900 "$build/crdbg" debug --preload "$build/usr/libcrdbg.so" --batch "$work/mscript" \
	-- mpirun -n 2 --oversubscribe --mca btl self,vader \
	--mca btl_vader_single_copy_mechanism none "$mprog" >"$work/mout" 2>"$work/merr"
mrc=$?
sed 's/^/# /' "$work/mout" "$work/merr"
mat1=$(part "$work/mout" "at 1" | sed 's/\$[0-9]* = /$ = /')
check "MPI job: restart 1 gives stop 1's stacks, i, total, pc; the breakpoint stops the next continue at i = 1" \
	eval '[[ $mrc == 0 ]] && grep -q "tl_step" <<<"$mat1" &&
	      grep -q "^\[0-1\]: i = 0" <<<"$mat1" &&
	      cmp -s <(echo "$mat1") <(part "$work/mout" "again 1" | sed "s/\\\$[0-9]* = /\$ = /") &&
	      part "$work/mout" after | grep -q "^\[0-1\]: i = 1" &&
	      [[ $(grep -c "^checkpoint [0-9]*: " "$work/mout") == 3 ]]'
mexpected() {
	timeout 300 mpirun -n 2 --oversubscribe --mca btl self,vader \
		--mca btl_vader_single_copy_mechanism none "$mprog" | sort
}
check "MPI job: runs to the output of an uninterrupted run, no error" \
	eval 'cmp -s <(mexpected) <(grep -o "timeline mpi rank.*" "$work/mout" | sort) &&
	      no_error "$work/mout" "$work/merr"'
[[ $failed == 0 ]]
