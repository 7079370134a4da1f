#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The freeze benchmark (BENCH_CMDS): boots a guest so crdbg.ko can be
# loaded and all three methods (kmod, ptrace, SIGSTOP) are measured side
# by side; prints the Markdown section. If the guest cannot run, measures
# ptrace and SIGSTOP on the host and says that kmod is unavailable.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CRDBG_BUILD:-$top/build}
bench=$build/tests/freeze/bench_freeze
rounds=${FREEZE_BENCH_ROUNDS:-15}
res=$(mktemp -d /tmp/crdbg-bench.XXXXXX)
trap 'rm -rf "$res"' EXIT

[[ -x $bench ]] || { echo "_freeze benchmark not built ($bench)_"; exit 1; }
if "$top/scripts/vm" --timeout 900 --results "$res" -- /bin/sh -c \
	"CRDBG_BUILD=$build; . $top/tests/guest/lib.sh; insmod_crdbg; $bench $rounds >$res/bench.md 2>$res/bench.err" \
	>"$res/vm.log" 2>&1 && [[ -s $res/bench.md ]]; then
	cat "$res/bench.md"
	echo
	echo "Goal: none set; SIGSTOP and SIGCONT are the reference."
	echo
	echo "Measured in a QEMU/TCG guest (scripts/vm: 2 CPUs, 2048 MiB), Debian's 6.1 kernel, crdbg.ko loaded."
else
	"$bench" "$rounds"
	echo
	echo "Goal: none set; SIGSTOP and SIGCONT are the reference."
	echo
	echo "Measured on the host: the guest run failed (scripts/vm: $(tail -n 1 "$res/vm.log" 2>/dev/null)), and kmod cannot be loaded on the host."
fi
