#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# crdbg's start-up on the host (BENCH_CMDS): the exec of `crdbg --version`
# and of `crdbg kmod status` (which also opens a generic netlink socket
# and resolves the family; on a host without crdbg.ko it fails, and
# hyperfine is told to accept that), against /bin/true. hyperfine runs
# each command RUNS times in a round, and the rounds (ROUNDS) take turns,
# so that a change of the machine's load falls on every command alike;
# the table has the median, the minimum and the 90th percentile over all
# runs. CRDBG_BASELINE=PATH puts another crdbg binary beside build/crdbg
# in the same rounds (a build of an older tree, say). Prints the
# Markdown section.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${CRDBG_BUILD:-$top/build}
crdbg=$build/crdbg
runs=${STARTUP_BENCH_RUNS:-200}
rounds=${STARTUP_BENCH_ROUNDS:-5}
base=${CRDBG_BASELINE:-}
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT

[[ -x $crdbg ]] || { echo "_crdbg not built ($crdbg)_"; exit 1; }
command -v hyperfine >/dev/null || { echo "_hyperfine is not installed (make deps)_"; exit 1; }

cmds=(-n "/bin/true" "/bin/true"
      -n "crdbg --version" "$crdbg --version"
      -n "crdbg kmod status" "$crdbg kmod status")
if [[ -n $base ]]; then
	[[ -x $base ]] || { echo "_CRDBG_BASELINE $base is not a program_"; exit 1; }
	cmds+=(-n "baseline --version" "$base --version"
	       -n "baseline kmod status" "$base kmod status")
fi
load0=$(cut -d' ' -f1 /proc/loadavg)
for ((i = 0; i < rounds; i++)); do
	hyperfine -N -i -w 10 -r "$runs" --export-json "$res/$i.json" "${cmds[@]}" \
		>/dev/null 2>&1 || { echo "_hyperfine failed_"; exit 1; }
done

echo "## crdbg's start-up on the host"
echo
echo "The exec of \`crdbg --version\` and of \`crdbg kmod status\` (a generic netlink"
echo "socket and the family's look-up, which fails without crdbg.ko) against"
echo "/bin/true${base:+ and a baseline build}; crdbg links $(ldd "$crdbg" | awk '/=>/ { print $1 }' | tr '\n' ' ' | sed 's/ $//')."
echo
python3 - "$res"/*.json <<'PY'
import json, statistics, sys
times = {}
for f in sys.argv[1:]:
    for r in json.load(open(f))["results"]:
        times.setdefault(r["command"], []).extend(r["times"])
print("| command | median ms | min ms | 90th percentile ms |")
print("|---|---:|---:|---:|")
for cmd, t in times.items():
    t.sort()
    print("| %s | %.2f | %.2f | %.2f |" % (cmd, statistics.median(t) * 1e3, t[0] * 1e3,
                                          t[int(len(t) * 0.9)] * 1e3))
# The minimum is the exec's own cost; the median and the tail add what
# the machine's load did to it.
low = times["crdbg --version"][0] * 1e3
print()
print("Goal: `crdbg --version` under 2 ms at the minimum, no start-up a user would notice: "
      "%s (%.2f ms)." % ("met" if low < 2 else "not met", low))
PY
echo
echo "Measured on the host: $rounds rounds of $runs runs of each (hyperfine -N, no shell;" \
     "10 warm-up runs a round), $(nproc) cores, load $load0 at the start and" \
     "$(cut -d' ' -f1 /proc/loadavg) at the end."
if [[ -n $base ]]; then
	echo "The baseline ($base) links $(ldd "$base" | awk '/=>/ { print $1 }' | tr '\n' ' ' | sed 's/ $//')."
fi
