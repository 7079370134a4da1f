#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The checkpoint benchmark (BENCH_CMDS): CRIU only works in the guest, so
# this boots one (scripts/vm) and runs bench-guest.sh there; prints its
# Markdown section. CKPT_BENCH_MB="64 1024" adds sizes (1 GiB needs
# CKPT_BENCH_MEM=4096 or more guest memory).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
res=$(mktemp -d /tmp/crdbg-ckpt-bench.XXXXXX)
trap 'rm -rf "$res"' EXIT
if "$top/scripts/vm" --timeout 1200 --mem "${CKPT_BENCH_MEM:-2048}" --results "$res" -- /bin/sh -c \
	"CKPT_BENCH_MB='${CKPT_BENCH_MB:-64}' CKPT_BENCH_ROUNDS=${CKPT_BENCH_ROUNDS:-3} $top/tests/crs/bench-guest.sh >$res/bench.md 2>$res/bench.err" \
	>"$res/vm.log" 2>&1 && [[ -s $res/bench.md ]]; then
	cat "$res/bench.md"
	echo
	echo "Measured in a QEMU/TCG guest (scripts/vm), Debian's 6.1 kernel."
else
	echo "_The checkpoint benchmark needs the guest (CRIU 3.17 fails on the host kernel); the guest run failed: $(tail -n 1 "$res/vm.log" 2>/dev/null)_"
	exit 1
fi
