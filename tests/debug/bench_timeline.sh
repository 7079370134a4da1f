#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The console timeline's benchmark (BENCH_CMDS): the per-stop cost of
# auto-checkpoint on a job of several ranks. CRIU only works in the
# guest, so this boots one (scripts/vm) and runs bench_timeline-guest.sh
# there (TL_BENCH_RANKS, TL_BENCH_MB, TL_BENCH_STOPS pass through).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
res=$(mktemp -d /tmp/crdbg-tl-bench.XXXXXX)
trap 'rm -rf "$res"' EXIT
if "$top/scripts/vm" --timeout 2400 --results "$res" -- /bin/sh -c \
	"TL_BENCH_RANKS=${TL_BENCH_RANKS:-3} TL_BENCH_MB=${TL_BENCH_MB:-64} TL_BENCH_STOPS=${TL_BENCH_STOPS:-4} CRDBG_TOP=$top CRDBG_BUILD=${CRDBG_BUILD:-$top/build} $top/tests/debug/bench_timeline-guest.sh >$res/bench.md 2>$res/bench.err" \
	>"$res/vm.log" 2>&1 && [[ -s $res/bench.md ]]; then
	cat "$res/bench.md"
	echo
	echo "Measured in a QEMU/TCG guest (scripts/vm: 2 CPUs, 2048 MiB), Debian's 6.1 kernel."
else
	echo "_The timeline benchmark needs the guest (CRIU 3.17 fails on the host kernel); the guest run failed: $(tail -n 1 "$res/vm.log" 2>/dev/null)_"
	exit 1
fi
