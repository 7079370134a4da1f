#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The checkpoint/restart part of `make demo` (run inside the guest, root,
# crdbg.ko loaded): a program is checkpointed and killed, restarted without
# a debugger (it continues), then restarted with --debug (the
# "MPIR debug info)" line, then gdb shows every thread waiting with the
# checkpointed PC in the frame under the hook).
set -u
top=${CRDBG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
crdbg=$build/crdbg
work=$(mktemp -d /tmp/crdbg-demo.XXXXXX)
export CRDBG_STORE=$work/store CKPT_GO=$work/go
trap 'rm -rf "$work"' EXIT
ip link set lo up 2>/dev/null
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { echo "\$ $*" >&2; "$@"; }

say "a 2-thread program with libcrdbg preloaded (it waits after step 5)"
LD_PRELOAD=$build/usr/libcrdbg.so setsid "$build/tests/crs/prog_ckpt" 2 12 50 \
	>"$work/out" 2>"$work/err" </dev/null &
pid=$!
for _ in $(seq 300); do grep -q '^step 5$' "$work/out" && break; sleep 0.1; done
cat "$work/out"

say "checkpoint it and kill it"
h=$(run "$crdbg" checkpoint "$pid" --kill -v)
echo "$h"
sed -n 's/^thread /  thread /p' "$CRDBG_STORE/$h/metadata"
run "$crdbg" list
cp "$work/out" "$work/out.at-checkpoint"
touch "$CKPT_GO"

say "restart without a debugger: it continues where it was"
run "$crdbg" restart "$h" -v
cat "$work/out"

say "restart with --debug: every thread waits for the debugger"
cp "$work/out.at-checkpoint" "$work/out"
: >"$work/err"
"$crdbg" restart "$h" --debug &
for _ in $(seq 300); do grep -q '^MPIR debug info) ' "$work/err" && break; sleep 0.1; done
cat "$work/err"
say "gdb -p $pid: every thread in MPIR_checkpoint_debugger_breakpoint, checkpointed PC under the hook"
gdb -batch -p "$pid" -ex 'p MPIR_debug_with_checkpoint' -ex 'p MPIR_checkpoint_debug_gate' \
	-ex 'thread apply all bt 10' -ex 'set var MPIR_checkpoint_debug_gate = 1' 2>&1 |
	awk '/^\$|^Thread /; /MPIR_checkpoint_debugger_breakpoint \(/ { show = 1 } /^$/ { show = 0 } show && /^#/'
wait
say "the gate is open: the program finished"
cat "$work/out"
