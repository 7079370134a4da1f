#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The console's checkpoint and restart of an Open MPI job acquired through
# MPIR (guest, root, crdbg.ko loaded):
#
#   crdbg debug --preload libcrdbg.so --batch SCRIPT -- mpirun -n 2 ... mpi_debug
#
# one batch script breaks in compute() on both ranks, sets a breakpoint
# in MPI_Barrier, checkpoints the job (mpirun and its ranks: one handle,
# a job checkpoint of one part, mpirun's tree),
# lets rank 1 exit with code 3 (held in its exit), restarts the job and
# continues to the end; the merged stacks, the rank argument, pc and sp
# before the checkpoint, after it and after the restart must be
# identical, and the restarted ranks must stop at the breakpoint set
# before the checkpoint. A second session checkpoints into a store crdbg
# cannot write. The argument is the freeze backend (kmod or ptrace). TAP.
set -u
freeze=${1:?usage: test_debugmpi.sh kmod|ptrace}
export CRDBG_BACKEND=$freeze
top=${CRDBG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
prog=$build/tests/debug/mpi_debug
work=$(mktemp -d /tmp/crdbg-debugmpi-$freeze.XXXXXX)
export CRDBG_STORE=$work/store
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MPIR_DO_NOT_WARN=1
cleanup() {
	pkill -9 -f "$prog" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
backend="mpirun, $freeze"
. "$top/tests/guest/tap.sh"

if [[ ! -x $prog ]] || ! command -v mpirun >/dev/null; then
	echo "1..1"
	echo "ok 1 $freeze: console checkpoint of an MPI job # SKIP no mpirun, or $prog not built (mpicc missing at build time)"
	exit 0
fi
echo "1..14"

block() {
	printf 'echo === stacks %s\nstacks\nprint rank\nprint $pc\nprint $sp\necho === end\n' "$1"
}
# session NAME: run the batch script $work/NAME under crdbg debug -- mpirun;
# its output in $work/NAME.out and .err, its exit status in $rc.
session() {
	timeout 600 "$build/crdbg" debug --preload "$build/usr/libcrdbg.so" --batch "$work/$1" \
		-- mpirun -n 2 --oversubscribe --mca btl self,vader \
		--mca btl_vader_single_copy_mechanism none "$prog" >"$work/$1.out" 2>"$work/$1.err"
	rc=$?
	sed 's/^/# /' "$work/$1.out" "$work/$1.err"
}
# part FILE N: block N of a session's output ($N = values: only values compare).
part() { awk -v k="=== stacks $2" '$0 ~ k { on = 1; next } /=== end/ { on = 0 } on' "$1" |
	sed 's/\$[0-9]* = /$ = /'; }
# After the checkpoint rank 1 is made to exit with code 3: the console
# holds it in its exit (commands.c), and the restart brings the whole job
# back, the held rank killed before mpirun ever learnt of the exit. One
# session for both (each session costs an MPI start under TCG).
{
	printf 'break compute\ncontinue\nbreak MPI_Barrier\n'
	block 1
	echo checkpoint
	block 2
	printf '[1] set var main::exit_code = 3\ncontinue\ncontinue\nstatus\n'
	echo restart
	block 3
	printf 'continue\ncontinue\nquit\n'
} >"$work/script"
session script
for i in 1 2 3; do part "$work/script.out" $i >"$work/s$i"; done
has_compute() { grep -q 'compute' "$1" && grep -q '^\[0-1\]' "$1"; }
one_handle() { [[ $(grep -c 'MPIR checkpoint handle) ' "$1") == 1 ]]; }
# The handle is a job checkpoint of one part, mpirun's tree (its
# manifest: part K NODE RANKS HANDLE SHA ...), holding both ranks.
of_mpirun() {
	local h p
	h=$(sed -n 's/.*MPIR checkpoint handle) //p' "$1" | head -n 1)
	[[ -n $h && -f $CRDBG_STORE/.jobs/$h ]] || return 1
	[[ $(awk '$1 == "part"' "$CRDBG_STORE/.jobs/$h" | wc -l) == 1 ]] || return 1
	p=$(awk '$1 == "part" && $4 == "0-1" { print $5 }' "$CRDBG_STORE/.jobs/$h")
	[[ -n $p ]] && "$build/crdbg" list --store "$CRDBG_STORE" | grep "^$p" | grep -Eq 'mpirun|orterun' &&
		grep -qx "backend $freeze" "$CRDBG_STORE/$p/metadata"
}
# The restarted job's output, once per rank, and every rank's exit 0.
finished() {
	local after
	after=$(sed -n '/=== stacks 3/,$p' "$1")
	[[ $(grep -c 'mpi rank 0 of 2 value 4' <<<"$after") == 1 &&
	   $(grep -c 'mpi rank 1 of 2 value 9' <<<"$after") == 1 ]] &&
		grep -q '^\[0-1\]: exited: code 0' <<<"$after"
}
# The number the session gave "break MPI_Barrier" (the hold of Open MPI's
# ranks may have used gdb's first), then a stop there after the restart.
barrier_after_restart() {
	local t b
	b=$(sed -n '/(crdbg) break MPI_Barrier/{n;p;q}' "$1" | sed -n 's/.*: breakpoint \([0-9]*\) .*/\1/p')
	[[ -n $b ]] || return 1
	t=$(sed -n '/=== stacks 3/,$p' "$1" | grep "stopped: breakpoint $b, .*MPI_Barrier")
	grep -q '^\[0-1\]' <<<"$t" || { grep -q '^\[0\]' <<<"$t" && grep -q '^\[1\]' <<<"$t"; }
}
no_error() { ! grep -Eq 'cannot|could not|not back|no handle|error|did not|lost' "$@"; }
held_exit() {
	grep -qx '\[1\]: exited: code 3' "$1" &&
		grep -q '^\[1\] held in exit until a run command' "$1" &&
		grep -Eq '^\[1\] +exited +code 3$' "$1"
}
exit_unheard() { ! grep -q "non-zero" "$@"; }

check "the batch session exits 0" test "$rc" = 0
check "stacks before the checkpoint show compute on ranks 0-1" has_compute "$work/s1"
check "stacks, rank, pc, sp after the checkpoint are identical" cmp -s "$work/s1" "$work/s2"
diff "$work/s1" "$work/s2" | sed 's/^/# /'
check "stacks, rank, pc, sp after the restart are identical" cmp -s "$work/s1" "$work/s3"
diff "$work/s1" "$work/s3" | sed 's/^/# /'
check "one handle for the whole job" one_handle "$work/script.out"
check "the checkpoint is mpirun's tree, taken with the $freeze backend" of_mpirun "$work/script.out"
check "the restarted ranks finish through mpirun with the right output" finished "$work/script.out"
check "the restarted ranks stop at the breakpoint set before the checkpoint" \
	barrier_after_restart "$work/script.out"
check "no error from checkpoint or restart" no_error "$work/script.out" "$work/script.err"
check "rank 1's exit with code 3 is held, the session says so, status shows it exited" \
	held_exit "$work/script.out"
check "mpirun never learnt of the held exit" exit_unheard "$work/script.out" "$work/script.err"

# A checkpoint that fails (a store crdbg cannot write) puts mpirun and the
# ranks back where they were: same stacks, and the job runs to its end.
{
	printf 'break compute\ncontinue\n'
	block 1
	echo checkpoint
	block 2
	printf 'continue\nquit\n'
} >"$work/script-fail"
CRDBG_STORE=/proc/crdbg-no-store session script-fail
part "$work/script-fail.out" 1 >"$work/f1"
part "$work/script-fail.out" 2 >"$work/f2"
said_why() { [[ $rc == 1 ]] && grep -q '^checkpoint: .*crdbg-no-store' "$work/script-fail.out"; }
ran_to_end() {
	grep -q 'mpi rank 1 of 2 value 9' "$1" && grep -q '^\[0-1\]: exited: code 0' "$1"
}
check "a failed checkpoint says why in one line and the batch exits 1" said_why
check "after a failed checkpoint stacks, rank, pc, sp are as before" \
	eval 'has_compute "$work/f1" && cmp -s "$work/f1" "$work/f2"'
check "after a failed checkpoint the job runs to its end" ran_to_end "$work/script-fail.out"

[[ $failed == 0 ]]
