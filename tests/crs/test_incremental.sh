#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Incremental checkpoints in the guest, on one freeze backend (argument:
# ptrace or kmod). TAP on stdout.
#
#   prog_incr 32 MiB, 3 phases, 2% of its pages written in each
#      | crdbg checkpoint (continue) in the wait before phases 1, 2, 3
#      v
#   h1 (full) <-parent- h2 <-parent- h3      crdbg restart h1|h2|h3
#
# Each restart must print what an uninterrupted run prints (every phase's
# checksum of the whole buffer), so every page has to come back from the
# right checkpoint of the chain. A chain with a missing or corrupt link is
# refused before anything runs; rm of a checkpoint others need is refused.
set -u
. "$(dirname "$0")/lib.sh" incr "$@"
prog=$build/tests/crs/prog_incr
lib=$build/usr/libcrdbg.so
MB=32

one_line_error() { # OUT CMD...: fails with exactly one "crdbg:" line on stderr, kept in OUT
	local out=$1 rc
	shift
	"$@" 2>"$out" >/dev/null
	rc=$?
	[[ $rc != 0 && $(wc -l <"$out") == 1 ]] && grep -q '^crdbg:' "$out"
}
parent_of() { sed -n 's/^parent //p' "$CRDBG_STORE/$1/metadata"; }
page_bytes() { cat "$CRDBG_STORE/$1"/pages-*.img | wc -c; }

# run NAME: start the program with its own go files ($work/NAME.go.<phase>).
run() {
	: >"$work/$1.out"
	INCR_GO=$work/$1.go LD_PRELOAD=$lib setsid "$prog" "$MB" 3 20 \
		>"$work/$1.out" 2>"$work/$1.err" </dev/null &
	pid=$!
	pids+=("$pid")
}

echo "1..15"

# The uninterrupted output.
touch "$work/plain.go.1" "$work/plain.go.2" "$work/plain.go.3"
run plain
wait_for gone "$pid"

# A chain of three, the program going on after each.
run chain
declare -a h
for i in 1 2 3; do
	wait_for has_line "$work/chain.out" "^wait $i\$"
	h[i]=$("$crdbg" checkpoint "$pid" --backend "$backend" 2>"$work/ckpt$i.log")
	cp "$work/chain.out" "$work/chain.at$i"
	touch "$work/chain.go.$i"
done
wait_for gone "$pid"
chain_ok() {
	[[ -n ${h[1]} && -n ${h[2]} && -n ${h[3]} && -z $(parent_of "${h[1]}") &&
		$(parent_of "${h[2]}") == "${h[1]}" && $(parent_of "${h[3]}") == "${h[2]}" ]]
}
check "three checkpoints: the first full, each later one names the previous as its parent" chain_ok
chain_ok || diag "$work"/ckpt*.log
check "the program, continued after each checkpoint, ends with the uninterrupted output" \
	cmp -s "$work/plain.out" "$work/chain.out"
small() {
	local b1 b2 b3
	b1=$(page_bytes "${h[1]}") b2=$(page_bytes "${h[2]}") b3=$(page_bytes "${h[3]}")
	echo "# pages bytes: first $b1, second $b2, third $b3"
	(( b1 > MB * 1048576 && b2 * 4 < b1 && b3 * 4 < b1 ))
}
check "the incremental checkpoints store a fraction of the first one's pages" small
listed_chain() {
	"$crdbg" list >"$work/list" && "$crdbg" list --json >"$work/list.json" &&
		grep -qE "^${h[2]} .* ${h[1]} " "$work/list" &&
		grep -qE "^${h[3]} .* ${h[2]} " "$work/list" &&
		grep -q "\"handle\": \"${h[3]}\", \"valid\": true.*\"parent\": \"${h[2]}\"" "$work/list.json"
}
check "list shows each checkpoint's parent (text and JSON)" listed_chain
listed_chain || diag "$work/list" "$work/list.json"

# restart_from I: the output file as it was at checkpoint I, every go file there.
restart_from() {
	cp "$work/chain.at$1" "$work/chain.out"
	timeout 180 "$crdbg" restart "${h[$1]}" --backend "$backend" >"$work/r$1.log" 2>&1 &&
		cmp -s "$work/plain.out" "$work/chain.out"
}
for i in 1 2 3; do
	check "restart from checkpoint $i of the chain runs to the uninterrupted output" restart_from "$i"
	cmp -s "$work/plain.out" "$work/chain.out" || diag "$work/r$i.log" "$work/chain.out"
done

# A missing link: nothing runs, one line names it, list marks the chain.
mv "$CRDBG_STORE/${h[2]}" "$CRDBG_STORE/.away"
cp "$work/chain.at3" "$work/chain.out"
missing_refused() {
	one_line_error "$work/missing.err" "$crdbg" restart "${h[3]}" --backend "$backend" &&
		grep -q "${h[2]}.*missing" "$work/missing.err" && gone "$pid" &&
		cmp -s "$work/chain.at3" "$work/chain.out" &&
		"$crdbg" list | grep -q "^${h[3]} *INVALID: .*${h[2]}"
}
check "a chain with a missing parent is refused before anything runs, and list shows it INVALID" \
	missing_refused
diag "$work/missing.err"
mv "$CRDBG_STORE/.away" "$CRDBG_STORE/${h[2]}"

# A corrupt ancestor (a flipped byte in the first checkpoint's pages).
img=$(ls -S "$CRDBG_STORE/${h[1]}"/pages-*.img | head -n 1)
cp "$img" "$work/pages.bak"
printf 'X' | dd of="$img" bs=1 seek=4097 conv=notrunc 2>/dev/null
corrupt_refused() {
	one_line_error "$work/corrupt.err" "$crdbg" restart "${h[3]}" --backend "$backend" &&
		grep -q "${h[1]}.*checksum" "$work/corrupt.err" && gone "$pid" &&
		cmp -s "$work/chain.at3" "$work/chain.out"
}
check "a chain with a corrupt ancestor is refused before anything runs, naming it" corrupt_refused
diag "$work/corrupt.err"
cp "$work/pages.bak" "$img"

# rm: refused while others depend on it, from the chain's end it works.
rm_refused() {
	one_line_error "$work/rm.err" "$crdbg" rm "${h[1]}" &&
		grep -q "${h[2]}" "$work/rm.err" && [[ -d $CRDBG_STORE/${h[1]} ]]
}
check "rm of a checkpoint an incremental one depends on is refused, naming it" rm_refused
diag "$work/rm.err"
rm_chain() { "$crdbg" rm "${h[3]}" && "$crdbg" rm "${h[2]}" && "$crdbg" rm "${h[1]}" &&
	[[ -z $(ls "$CRDBG_STORE") ]]; }
check "the chain is removed from its end" rm_chain

# The last checkpoint removed: the next one cannot take an older parent,
# which lacks what the program wrote in between; it is full, and restarts.
run again
wait_for has_line "$work/again.out" '^wait 1$'
a1=$("$crdbg" checkpoint "$pid" --backend "$backend" 2>/dev/null)
touch "$work/again.go.1"
wait_for has_line "$work/again.out" '^wait 2$'
a2=$("$crdbg" checkpoint "$pid" --backend "$backend" 2>/dev/null)
"$crdbg" rm "$a2"
touch "$work/again.go.2"
wait_for has_line "$work/again.out" '^wait 3$'
a3=$("$crdbg" checkpoint "$pid" --backend "$backend" --kill 2>"$work/a3.log")
wait_for gone "$pid"
touch "$work/again.go.3"
after_rm_ok() {
	[[ -n $a1 && -n $a2 && -n $a3 && -z $(parent_of "$a3") ]] &&
		timeout 180 "$crdbg" restart "$a3" --backend "$backend" >"$work/a3.r" 2>&1 &&
		cmp -s "$work/plain.out" "$work/again.out"
}
after_rm_ok
rc=$?
check "after the newest checkpoint is removed the next one is full, and restarts to the uninterrupted output" \
	test "$rc" = 0
[[ $rc == 0 ]] || diag "$work/a3.log" "$work/a3.r" "$work/again.out"

# The dump gate is a CRIU plugin, not an action script (CRIU would run a
# script as a new process at each action, one while the tree is stopped):
# criu's debug log names the plugin it loaded and runs no script.
run gated
wait_for has_line "$work/gated.out" '^wait 1$'
g1=$(CRDBG_CRIU_VERBOSITY=4 "$crdbg" checkpoint "$pid" --backend "$backend" --full \
	2>"$work/g1.log")
touch "$work/gated.go.1" "$work/gated.go.2" "$work/gated.go.3"
gate_is_plugin() {
	local log=$CRDBG_STORE/$g1/dump.log
	[[ -n $g1 ]] && grep -q 'Plugin "crdbg_gate"' "$log" &&
		grep -q 'Running post-dump scripts' "$log" &&
		! grep -qP '\t\[/' "$log"	# criu/action-scripts.c: "\t[PATH]" after the timestamp
}
check "the dump gate is CRIU's plugin: loaded, and no action script runs" gate_is_plugin
gate_is_plugin || diag "$work/g1.log"

# ... preloaded into criu, it holds CRIU at its first seize of the root,
# after CRIU's own set-up (not at the plugins' init): the tree is frozen
# for the dump alone.
waits_at_seize() {
	local log=$CRDBG_STORE/$g1/dump.log at plugin seized
	plugin=$(grep -n 'Plugin "crdbg_gate"' "$log" | head -n 1 | cut -d: -f1)
	at=$(grep -n "crdbg gate: CRIU waits at its first seize of $pid\$" "$log" | cut -d: -f1)
	seized=$(grep -n 'Seized task ' "$log" | head -n 1)
	[[ -n $plugin && -n $at ]] && ((at > plugin)) &&
		[[ ${seized#*:} == *"Seized task $pid, "* ]] && ((${seized%%:*} > at)) &&
		! grep -q "waits at its plugins' init" "$log"
}
check "the dump waits at CRIU's first seize of the root, after CRIU's set-up" waits_at_seize
waits_at_seize || diag "$CRDBG_STORE/$g1/dump.log"

# The dump gate (criu started before the freeze) leaves nothing behind.
no_gate_left() { ! ls -d "${TMPDIR:-/tmp}"/crdbg-gate-* >/dev/null 2>&1; }
check "no dump gate directory is left behind" no_gate_left

[[ $n == 15 ]] || echo "# planned 15 tests, ran $n"
exit $((failed ? 1 : 0))
