#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The console's checkpoint and restart (guest, root, crdbg.ko loaded): one
# batch script breaks in compute(), checkpoints the 2-rank job, restarts
# it from the handles and continues to the end; the merged stacks, a
# local, pc, sp and rbp before the checkpoint, after it and after the
# restart must be identical. TAP.
set -u
top=${CRDBG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
work=$(mktemp -d /tmp/crdbg-debugckpt.XXXXXX)
export CRDBG_STORE=$work/store
trap 'rm -rf "$work"' EXIT
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fail=1; fi; }
fail=0
echo "1..21"

cat >"$work/script" <<'EOS'
break compute
continue
echo === stacks 1
stacks
print rank
print $pc
print $sp
print $rbp
echo === end
checkpoint
echo === stacks 2
stacks
print rank
print $pc
print $sp
print $rbp
echo === end
restart
echo === stacks 3
stacks
print rank
print $pc
print $sp
print $rbp
echo === end

continue
quit
EOS
timeout 500 "$build/crdbg" debug -n 2 --preload "$build/usr/libcrdbg.so" \
	--batch "$work/script" "$build/tests/debug/prog_debug" >"$work/out" 2>"$work/err"
rc=$?
sed 's/^/# /' "$work/out" "$work/err"
part() { awk -v k="=== stacks $1" '$0 ~ k { on = 1; next } /=== end/ { on = 0 } on' "$work/out"; }
part 1 >"$work/s1"; part 2 >"$work/s2"; part 3 >"$work/s3"
ok "$rc" "the batch session exits 0"
grep -q 'compute' "$work/s1" && [ "$(grep -c . "$work/s1")" -ge 2 ]
ok $? "stacks before the checkpoint show compute"
cmp -s "$work/s1" "$work/s2"
ok $? "stacks, rank, pc, sp, rbp after the checkpoint are identical"
cmp -s "$work/s1" "$work/s3"
ok $? "stacks, rank, pc, sp, rbp after the restart are identical"
# One job checkpoint: one handle, its manifest a part per rank, each part
# recording the job's CID.
job=$(grep -o 'MPIR checkpoint handle) job-[^ ]*' "$work/out" | tail -n 1 | cut -d' ' -f4)
m=$CRDBG_STORE/.jobs/$job
cid=$(sed -n 's/^cid //p' "$m" 2>/dev/null)
parts_carry_cid() {
	local h
	for h in $(awk '$1 == "part" { print $5 }' "$m"); do
		grep -q "^cid $cid 2 " "$CRDBG_STORE/$h/metadata" || return 1
	done
}
[ "$(grep -c 'MPIR checkpoint handle) ' "$work/out")" = 1 ] && [ -n "$cid" ] &&
	[ "$(awk '$1 == "part" { print $4 }' "$m" | tr '\n' ' ')" = "0 1 " ] && parts_carry_cid
ok $? "one job handle; its manifest has a part per rank, each with the job's CID"
[ "$(grep -c 'hello from rank 0 x=4' "$work/out")" = 1 ] &&
	[ "$(grep -c 'hello from rank 1 x=9' "$work/out")" = 1 ] &&
	sed -n '/=== stacks 3/,$p' "$work/out" | grep -q 'hello from rank 1 x=9'
ok $? "the restarted ranks finish with the right output"
! grep -Eq 'cannot|could not|not back|no handle|error|did not' "$work/out" "$work/err"
ok $? "no error from checkpoint or restart"

# A threaded program: every thread's pc and vector registers, and the
# results its workers compute in SSE registers, survive a checkpoint and a
# restart taken in the middle of their loops.
# regs_block N: what is compared before the checkpoint, after it and after
# the restart (thread 2 is the designated thread: left out).
regs_block() {
	echo "echo === regs $1"
	echo "stacks"
	for e in '$pc' '$sp' '$xmm0.v2_int64' '$xmm1.v2_int64' '$xmm2.v2_int64'; do
		echo "thread apply 1 3-6 p/x $e"
	done
	echo "info registers rax rbx rcx rdx rsi rdi rbp r8 r9 r10 r11 r12 r13 r14 r15 eflags"
	echo "echo === end"
}
{
	printf 'break compute\ncontinue\n'
	regs_block 1
	echo checkpoint
	regs_block 2
	echo restart
	regs_block 3
	printf 'continue\nquit\n'
} >"$work/script2"
prog2=$build/tests/debug/prog_ckpt
for r in 0 1; do CRDBG_RANK=$r "$prog2" | sed "s/^/[$r] /"; done | grep ' result ' | sort >"$work/expected2"
timeout 600 "$build/crdbg" debug -n 2 --preload "$build/usr/libcrdbg.so" \
	--batch "$work/script2" "$prog2" >"$work/out2" 2>"$work/err2"
rc=$?
grep -v '^\[[01]\]: ' "$work/out2" | sed 's/^/# /' | head -80
sed 's/^/# /' "$work/err2" | head -20
# gdb numbers its value history ($1, $2...): only the values are compared.
regs() { awk -v k="=== regs $1" '$0 ~ k { on = 1; next } /=== end/ { on = 0 } on' "$work/out2" |
	sed 's/\$[0-9]* = /$ = /'; }
regs 1 >"$work/r1"; regs 2 >"$work/r2"; regs 3 >"$work/r3"
ok "$rc" "threaded program: the batch session exits 0"
[ "$(grep -c 'Thread ' "$work/r1")" -ge 10 ] && cmp -s "$work/r1" "$work/r2"
ok $? "threaded program: every thread's pc, sp, xmm0-2 and the GPRs are the same after the checkpoint"
diff "$work/r1" "$work/r2" | sed 's/^/# /'
cmp -s "$work/r1" "$work/r3"
ok $? "threaded program: ... and after the restart"
diff "$work/r1" "$work/r3" | sed 's/^/# /' 
grep ' result ' "$work/out2" | sort >"$work/got2"
[ "$(wc -l <"$work/expected2")" = 8 ] && cmp -s "$work/expected2" "$work/got2"
ok $? "threaded program: the workers' results equal an uninterrupted run's"
diff "$work/expected2" "$work/got2" | sed 's/^/# /'

# A damaged part refuses the restart before anything happens: the first
# session's checkpoint with rank 1's pages truncated, restarted into a
# new session: the refusal names rank 1 and the ranks stay as they were.
hs=$(grep -o 'MPIR checkpoint handle) job-[^ ,]*' "$work/out" | tail -n 1 | cut -d' ' -f4)
# The job checkpoint's part for rank 1 (its manifest: part K NODE RANKS HANDLE SHA).
h1=$(awk '$1 == "part" && $4 == "1" { print $5 }' "$CRDBG_STORE/.jobs/$hs" 2>/dev/null)
pages=$(ls "$CRDBG_STORE/$h1"/pages-*.img 2>/dev/null | head -n 1)
if [ -n "$pages" ]; then
	truncate -s -1 "$pages"
	printf 'break compute\ncontinue\necho === stacks 1\nstacks\necho === end\nrestart %s\necho === stacks 2\nstacks\necho === end\ncontinue\nquit\n' \
		"$hs" >"$work/script4"
	timeout 500 "$build/crdbg" debug -n 2 --preload "$build/usr/libcrdbg.so" \
		--batch "$work/script4" "$build/tests/debug/prog_debug" >"$work/out4" 2>"$work/err4"
	rc=$?
	sed 's/^/# /' "$work/out4" "$work/err4" | head -40
	part4() { awk -v k="=== stacks $1" '$0 ~ k { on = 1; next } /=== end/ { on = 0 } on' "$work/out4"; }
	[ "$rc" = 1 ] && grep -q "^restart: refused, nothing was changed: .*(part 1, ranks 1): .*$h1" "$work/out4" "$work/err4"
	ok $? "a damaged part refuses the restart, naming its rank, and the run exits 1"
	! grep -q 'MPIR debug info) \|part 0, .*verify' "$work/out4" "$work/err4"
	ok $? "... before anything was restored"
	cmp -s <(part4 1) <(part4 2) && grep -q compute <(part4 1) &&
		grep -q '\[0-1\]: exited: code 0' "$work/out4"
	ok $? "... the ranks are as they were and run to their normal end"
else
	for t in 1 2 3; do echo "not ok $((n + t)) no checkpoint of the first session to damage"; done
	n=$((n + 3)); fail=1
fi

# A part that fails fails the job's checkpoint: rank 1 holds a descriptor
# CRIU cannot dump (crdbg.ko's misc device), so its part fails while rank
# 0's is stored; rank 0's part is removed, no handle is printed, and
# both ranks go on from where they were to their normal end.
cat >"$work/script3" <<'EOS'
break compute
continue
[1] print (int)open("/dev/crdbg", 0) >= 0
echo === stacks 1
stacks
echo === end
checkpoint
echo === stacks 2
stacks
echo === end
continue
quit
EOS
if [ -c /dev/crdbg ]; then
	rm -rf "$CRDBG_STORE"
	timeout 500 "$build/crdbg" debug -n 2 --preload "$build/usr/libcrdbg.so" \
		--batch "$work/script3" "$build/tests/debug/prog_debug" >"$work/out3" 2>"$work/err3"
	rc=$?
	sed 's/^/# /' "$work/out3" "$work/err3" | head -60
	part3() { awk -v k="=== stacks $1" '$0 ~ k { on = 1; next } /=== end/ { on = 0 } on' "$work/out3"; }
	[ "$rc" = 1 ] && grep -q '^checkpoint: failed on .*(part 1, ranks 1): ' "$work/out3" "$work/err3" &&
		! grep -q 'failed on .*(part 0, ranks 0)' "$work/out3" "$work/err3"
	ok $? "one rank's part fails: the run says so for that rank only and exits 1"
	grep -q 'checkpoint: failed on .*nothing was kept, the job goes on' "$work/out3" "$work/err3" &&
		! grep -q 'MPIR checkpoint handle) ' "$work/out3"
	ok $? "... no handle is printed"
	[ -z "$(ls "$CRDBG_STORE" 2>/dev/null | grep -v '^\.')" ]
	ok $? "... and the store holds no checkpoint (rank 0's part was removed)"
	cmp -s <(part3 1) <(part3 2) && grep -q 'compute' <(part3 1) &&
		grep -q '\[0-1\]: exited: code 0' "$work/out3"
	ok $? "... the ranks are back where they were and run to their normal end"
else
	for t in 1 2 3 4; do echo "ok $((n + t)) # SKIP crdbg.ko is not loaded (no /dev/crdbg)"; done
	n=$((n + 4))
fi

# A Fortran program: at its stops gdb's language is Fortran, where
# crdbg's own C expressions (the hook's trampoline, the MPIR variables)
# did not parse and every checkpoint failed in the park. Its values in
# Fortran before and after the checkpoint and the restart, and its output
# against an uninterrupted run's.
progf=$build/tests/debug/prog_ckpt_f
if [ -x "$progf" ]; then
	vals() {
		printf 'echo === vals %s\nstacks\nprint it\nprint total\nprint field(7)\n' "$1"
		printf 'print $pc\nprint $sp\necho === end\n'
	}
	{
		printf 'break compute\ncontinue\n'
		vals 1
		echo checkpoint
		vals 2
		echo restart
		vals 3
		printf 'delete\ncontinue\nquit\n'
	} >"$work/script5"
	for r in 0 1; do CRDBG_RANK=$r "$progf" | sed "s/^/[$r] /"; done >"$work/expected5"
	timeout 500 "$build/crdbg" debug -n 2 --preload "$build/usr/libcrdbg.so" \
		--batch "$work/script5" "$progf" >"$work/out5" 2>"$work/err5"
	rc=$?
	sed 's/^/# /' "$work/out5" "$work/err5" | head -80
	vals5() { awk -v k="=== vals $1" '$0 ~ k { on = 1; next } /=== end/ { on = 0 } on' "$work/out5" |
		sed 's/\$[0-9]* = /$ = /'; }
	[ "$rc" = 0 ] && ! grep -Eq 'cannot|could not|not back|no handle|error|did not' "$work/out5" "$work/err5"
	ok $? "Fortran program: the checkpoint and the restart pass, the batch exits 0"
	grep -q 'it = 20' <(vals5 1) && grep -q 'compute' <(vals5 1) &&
		cmp -s <(vals5 1) <(vals5 2) && cmp -s <(vals5 1) <(vals5 3)
	ok $? "Fortran program: its stack, variables, pc and sp are the same after the checkpoint and after the restart"
	diff <(vals5 1) <(vals5 3) | sed 's/^/# /'
	[ "$(grep -c . "$work/expected5")" = 2 ] &&
		cmp -s "$work/expected5" <(grep -E '^\[[01]\] rank [01] total ' "$work/out5" | sort)
	ok $? "Fortran program: the restarted ranks print an uninterrupted run's totals"
else
	for t in 1 2 3; do echo "ok $((n + t)) # SKIP $progf not built (no gfortran)"; done
	n=$((n + 3))
fi
exit $fail
