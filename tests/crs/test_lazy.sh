#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# crdbg restart --lazy in the guest (criu lazy-pages over userfaultfd), on
# one freeze backend (argument: ptrace or kmod). TAP on stdout.
#
# prog_incr (64 MiB, a checksum of the whole buffer after each phase) is
# checkpointed and killed; a lazy restart must print what an uninterrupted
# run prints, from a full checkpoint and from an incremental one. If the
# lazy-pages server dies while the restored program runs, crdbg kills the
# program and says why in one line. crdbg serves the pages of a full
# checkpoint itself and checks each chunk before its pages go: a byte
# flipped in a pages image is found after the release, when its chunk is
# first asked for, and the program is killed before it gets it; a
# truncated pages image is refused before CRIU starts.
set -u
. "$(dirname "$0")/lib.sh" lazy "$@"
prog=$build/tests/crs/prog_incr
lib=$build/usr/libcrdbg.so

parent_of() { sed -n 's/^parent //p' "$CRDBG_STORE/$1/metadata"; }

# run NAME MB: start the program with its own go files ($work/NAME.go.<phase>).
run() {
	: >"$work/$1.out"
	INCR_GO=$work/$1.go LD_PRELOAD=$lib setsid "$prog" "$2" 3 20 \
		>"$work/$1.out" 2>"$work/$1.err" </dev/null &
	pid=$!
	pids+=("$pid")
}

echo "1..6"

if ! criu check --feature uffd-noncoop >/dev/null 2>&1; then
	for t in 1 2 3 4 5 6; do skip "lazy restart test $t" "criu check --feature uffd-noncoop fails here"; done
	exit 0
fi

touch "$work/plain.go.1" "$work/plain.go.2" "$work/plain.go.3"
run plain 64
wait_for gone "$pid"

# A full checkpoint (continue) before phase 1, an incremental one (--kill) before phase 2.
run lazy 64
wait_for has_line "$work/lazy.out" '^wait 1$'
h1=$("$crdbg" checkpoint "$pid" --backend "$backend" 2>"$work/c1.log")
cp "$work/lazy.out" "$work/lazy.at1"
touch "$work/lazy.go.1"
wait_for has_line "$work/lazy.out" '^wait 2$'
h2=$("$crdbg" checkpoint "$pid" --backend "$backend" --kill 2>"$work/c2.log")
wait_for gone "$pid"
cp "$work/lazy.out" "$work/lazy.at2"
touch "$work/lazy.go.2" "$work/lazy.go.3"

lazy_from() { # HANDLE AT-FILE
	cp "$2" "$work/lazy.out"
	timeout 300 "$crdbg" restart "$1" --lazy --backend "$backend" -v >"$work/r.$1.log" 2>&1 &&
		grep -q 'lazy restore: pages on demand' "$work/r.$1.log" &&
		cmp -s "$work/plain.out" "$work/lazy.out"
}
lazy_from "$h1" "$work/lazy.at1" && grep -q 'served by crdbg, each chunk checked' "$work/r.$h1.log"
rc=$?
check "restart --lazy of a full checkpoint (pages served and checked by crdbg) runs to the uninterrupted output" test "$rc" = 0
[[ $rc == 0 ]] || diag "$work/c1.log" "$work/r.$h1.log" "$work/lazy.out"
lazy_from "$h2" "$work/lazy.at2"
rc=$?
check "restart --lazy of an incremental checkpoint runs to the uninterrupted output" \
	test "$rc" = 0 -a "$(parent_of "$h2")" = "$h1"
[[ $rc == 0 ]] || diag "$work/c2.log" "$work/r.$h2.log" "$work/lazy.out"

# The lazy-pages server dies while the restored program runs: crdbg
# kills the program and says so in one line; it never reaches its end.
big=${LAZY_TEST_MB:-768}
run dies "$big"
wait_for has_line "$work/dies.out" '^wait 1$'
hd=$("$crdbg" checkpoint "$pid" --backend "$backend" --kill 2>"$work/cd.log")
wait_for gone "$pid"
cp "$work/dies.out" "$work/dies.at1"
timeout 300 "$crdbg" restart "$hd" --lazy --backend "$backend" >"$work/rd.log" 2>"$work/rd.err" &
rpid=$!
pids+=("$rpid")
server() { pgrep -f "criu lazy-pages -D $CRDBG_STORE/$hd" | head -n 1; }
released() {
	local st
	st=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) || return 1
	[[ $st != T && $st != t ]] && grep -q '^TracerPid:	0$' "/proc/$pid/status"
}
wait_for released
lp=$(server)
if [[ -n $lp ]]; then
	kill -9 "$lp"
	wait "$rpid"
	rc=$?
	dies_ok() {
		[[ $rc != 0 && $(wc -l <"$work/rd.err") == 1 ]] &&
			grep -q '^crdbg: restart: lazy restore: criu lazy-pages failed (killed by signal 9); the restored processes were killed' "$work/rd.err" &&
			gone "$pid" && ! grep -q '^done' "$work/dies.out"
	}
	check "the lazy-pages server killed while the program runs: crdbg kills the program, one line, non-zero exit" dies_ok
	dies_ok || diag "$work/rd.err" "$work/dies.out"
	touch "$work/dies.go.1" "$work/dies.go.2" "$work/dies.go.3"
	cp "$work/dies.at1" "$work/dies.out"
	timeout 300 "$crdbg" restart "$hd" --backend "$backend" >/dev/null 2>&1
	check "that checkpoint then restarts in full" grep -q '^done' "$work/dies.out"
else
	# The server had copied all $big MiB before the program was released.
	wait "$rpid"
	skip "the lazy-pages server killed while the program runs" "it had finished copying $big MiB before the tree was released"
	skip "that checkpoint then restarts in full" "see the previous test"
fi

# A flipped byte three quarters into the largest pages image (in the
# program's 256 MiB buffer, which CRIU leaves to lazy-pages, far enough
# in that the copy behind seldom reaches it before the release): the
# restart releases the program, then kills it when that chunk is first
# asked for, in one line naming the image; the program never prints its
# end. Under load the copy behind may get there before the release: the
# same one line then, the program killed before it ran.
run bad 256
wait_for has_line "$work/bad.out" '^wait 1$'
hb=$("$crdbg" checkpoint "$pid" --backend "$backend" --kill 2>"$work/cb.log")
wait_for gone "$pid"
touch "$work/bad.go.1" "$work/bad.go.2" "$work/bad.go.3"
img=$(ls -S "$CRDBG_STORE/$hb"/pages-*.img | head -n 1)
size=$(stat -c %s "$img")
cp "$img" "$work/pages.orig"
printf '\x5a' | dd of="$img" bs=1 seek=$((size / 4 * 3)) conv=notrunc status=none
cmp -s "$img" "$work/pages.orig" || flipped=1
timeout 300 "$crdbg" restart "$hb" --lazy --backend "$backend" -v >"$work/rb.log" 2>"$work/rb.err"
rc=$?
bad_ok() {
	local name
	name=$(basename "$img")
	[[ $rc != 0 && ${flipped:-0} == 1 ]] &&
		[[ $(grep -c '^crdbg: restart: checkpoint' "$work/rb.err") == 1 ]] &&
		grep -q "^crdbg: restart: checkpoint $hb is corrupt: checksum of $name does not match in bytes [0-9]*-[0-9]* (found when criu lazy-pages asked for those pages, before any was served: the restored processes were killed)\$" "$work/rb.err" &&
		gone "$pid" && ! grep -q '^done' "$work/bad.out"
}
grep -q 'crdbg: restart released after' "$work/rb.err" ||
	echo "# the copy behind reached the flipped chunk before the release"
check "a flipped byte in a pages chunk served lazily: the program is killed before it gets it, one line naming the image" bad_ok
bad_ok || diag "$work/rb.err" "$work/bad.out"

# The same image truncated by a page: refused before CRIU starts.
cp "$work/pages.orig" "$img"
truncate -s $((size - 4096)) "$img"
timeout 300 "$crdbg" restart "$hb" --lazy --backend "$backend" >"$work/rt.log" 2>"$work/rt.err"
rc=$?
trunc_ok() {
	[[ $rc != 0 && $(wc -l <"$work/rt.err") == 1 ]] &&
		grep -q "^crdbg: restart: checkpoint $hb is corrupt: $(basename "$img") has $((size - 4096)) bytes, expected $size\$" "$work/rt.err" &&
		gone "$pid" && ! grep -q '^done' "$work/bad.out"
}
check "a truncated pages image: restart --lazy refuses it before criu runs, one line" trunc_ok
trunc_ok || diag "$work/rt.err"

[[ $n == 6 ]] || echo "# planned 6 tests, ran $n"
exit $((failed ? 1 : 0))
