#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every benchmark command registered in BENCH_CMDS and write
# Documentation/performance.md: this header, then one section a command.
# Each command prints its section, heading first ("## Title"), then what
# it measures, its table, its "Goal:" line (the goal and whether it is
# met) and where it was measured; this script puts the command under the
# heading (a section without one gets one naming the command) and the
# host's load around the run after it.   bench.sh BUILD CMD...
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
shift
out=$top/Documentation/performance.md
tmp=$(mktemp)
sec=$(mktemp)
trap 'rm -f "$tmp" "$sec"' EXIT
load() { cut -d' ' -f1 /proc/loadavg; }
{
	echo "# Performance"
	echo
	echo "One section per benchmark that \`make bench\` runs (\`make print-BENCH_CMDS\`),"
	echo "in that order: its command, what it measures, its latest table, where and"
	echo "under what load it was measured, and its goal. scripts/bench.sh writes this"
	echo "header and runs each command, which prints its own section; a section"
	echo "measured by its command alone, with other settings, names them."
	echo
	echo "Absolute times on this shared 2-core machine are noise; read the ratios,"
	echo "which are measured side by side in one run. Under QEMU's TCG an exec costs"
	echo "tens of milliseconds (about one on hardware), so the fixed cost of starting"
	echo "a program weighs more in a guest than on a node."
	echo
	echo "Written by \`make bench\` on $(date -u +%Y-%m-%d) ($(nproc) cores, $(uname -m))."
	for cmd in "$@"; do
		echo
		echo "<!-- produced by: $cmd -->"
		l0=$(load)
		(cd "$top" && eval "$cmd") >"$sec"
		rc=$?
		l1=$(load)
		# Its heading (or one naming the command), the command, then the
		# rest of the section without blank lines around it.
		CMD=$cmd awk 'BEGIN { cmd = ENVIRON["CMD"] } { l[++n] = $0 }
			END { s = 1; while (s <= n && l[s] == "") s++
			      e = n; while (e >= s && l[e] == "") e--
			      if (s <= e && l[s] ~ /^## /) print l[s++]
			      else printf "## `%s`\n", cmd
			      printf "\nCommand: `%s`\n", cmd
			      while (s <= e && l[s] == "") s++
			      if (s <= e) print ""
			      for (i = s; i <= e; i++) print l[i] }' "$sec"
		((rc)) && { echo; echo "_benchmark failed with status ${rc}_"; }
		echo
		echo "Load: host load average $l0 at the start, $l1 at the end."
	done
} >"$tmp"
mv "$tmp" "$out"
echo "bench: wrote $out"
