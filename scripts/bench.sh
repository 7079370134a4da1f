#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every benchmark command registered in BENCH_CMDS and write their
# Markdown sections to Documentation/performance.md, each under the command
# that produced it.   bench.sh BUILD CMD...
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
shift
out=$top/Documentation/performance.md
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
	echo "# Performance"
	echo
	echo "Written by \`make bench\` on $(date -u +%Y-%m-%d) ($(nproc) cores, $(uname -m))."
	echo "Absolute times on this shared 2-core machine are noise; read the ratios,"
	echo "which are measured side by side in one run."
	for cmd in "$@"; do
		echo
		echo "<!-- produced by: $cmd -->"
		echo "Command: \`$cmd\`"
		echo
		(cd "$top" && eval "$cmd") || echo "_benchmark failed with status $?_"
	done
} >"$tmp"
mv "$tmp" "$out"
echo "bench: wrote $out"
