#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The job checkpoint benchmark (BENCH_CMDS): boots a guest (CRIU only
# works there) and runs bench-job-guest.sh; prints its Markdown section.
# JOB_BENCH_MB (MiB per process, default 64), JOB_BENCH_ROUNDS (default 2).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
res=$(mktemp -d /tmp/crdbg-job-bench.XXXXXX)
trap 'rm -rf "$res"' EXIT
if "$top/scripts/vm" --timeout 3600 --mem 3072 --results "$res" -- /bin/sh -c \
	"JOB_BENCH_MB=${JOB_BENCH_MB:-64} JOB_BENCH_ROUNDS=${JOB_BENCH_ROUNDS:-2} CRDBG_BUILD=${CRDBG_BUILD:-$top/build} $top/tests/crs/bench-job-guest.sh >$res/bench.md 2>$res/bench.err" \
	>"$res/vm.log" 2>&1 && [[ -s $res/bench.md ]]; then
	cat "$res/bench.md"
	echo
	echo "Measured in a QEMU/TCG guest (scripts/vm: 2 CPUs, 3072 MiB), Debian's 6.1 kernel."
else
	echo "_The job checkpoint benchmark needs the guest; the guest run failed: $(tail -n 1 "$res/vm.log" 2>/dev/null)_"
	exit 1
fi
