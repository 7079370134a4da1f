#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The console's checkpoint and restart (guest, root, crdbg.ko loaded): one
# batch script breaks in compute(), checkpoints the 2-rank job, restarts
# it from the handles and continues to the end; the merged stacks, a
# local, pc, sp and rbp before the checkpoint, after it and after the
# restart must be identical. TAP.
set -u
top=${CRDBG_TOP:-$(cd "$(dirname "$0")/../../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
work=$(mktemp -d /tmp/crdbg-debugckpt.XXXXXX)
export CRDBG_STORE=$work/store
trap 'rm -rf "$work"' EXIT
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fail=1; fi; }
fail=0
echo "1..7"

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
	--batch "$work/script" "$build/tests/host/debug/prog_debug" >"$work/out" 2>"$work/err"
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
[ "$(grep -c 'MPIR checkpoint handle) ' "$work/out")" -ge 3 ]
ok $? "a handle per rank and a merged line"
[ "$(grep -c 'hello from rank 0 x=4' "$work/out")" = 1 ] &&
	[ "$(grep -c 'hello from rank 1 x=9' "$work/out")" = 1 ] &&
	sed -n '/=== stacks 3/,$p' "$work/out" | grep -q 'hello from rank 1 x=9'
ok $? "the restarted ranks finish with the right output"
! grep -Eq 'cannot|could not|not back|no handle|error' "$work/out" "$work/err"
ok $? "no error from checkpoint or restart"
exit $fail
