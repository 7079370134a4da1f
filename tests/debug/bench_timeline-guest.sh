#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# In the guest (bench_timeline.sh boots it): the per-stop cost of the
# console's auto-checkpoint on a job of TL_BENCH_RANKS ranks (default 3)
# of TL_BENCH_MB MiB each (default 64), 1% of it written between stops,
# TL_BENCH_STOPS stops (default 4). Three batch sessions side by side:
# start and quit (no continue), the stops with auto-checkpoint off, the
# same stops with it on. Prints a Markdown section.
set -uo pipefail
top=${CRDBG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
ranks=${TL_BENCH_RANKS:-3}
mb=${TL_BENCH_MB:-64}
stops=${TL_BENCH_STOPS:-4}
work=$(mktemp -d /tmp/crdbg-tl-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export CRDBG_STORE=$work/store
modprobe -q crdbg 2>/dev/null || insmod "$build/kmod/crdbg.ko" 2>/dev/null
backend=ptrace
[[ -c /dev/crdbg ]] && backend=kmod
ip link set lo up 2>/dev/null

# session NAME AUTO N: N continues to the breakpoint; seconds on stdout.
session() {
	local t0 t1
	{
		[[ $2 == on ]] && echo 'set auto-checkpoint on'
		echo 'set checkpoint-keep 0'
		[[ $3 -gt 0 ]] && echo 'break tl_step'
		for _ in $(seq "$3"); do echo continue; done
		echo quit
	} >"$work/$1.script"
	t0=$(date +%s.%N)
	timeout 1800 "$build/crdbg" debug -n "$ranks" --preload "$build/usr/libcrdbg.so" \
		--batch "$work/$1.script" "$build/tests/debug/prog_timeline" "$mb" $((stops + 2)) \
		>"$work/$1.out" 2>&1
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}
# The guest's first session pays the cold start (gdb, the libraries and
# the program read over 9p into an empty page cache): it came out slower
# than a session with four stops, which made the per-stop costs negative.
session warm off 0 >/dev/null
t0=$(session start off 0)
toff=$(session off off "$stops")
ton=$(session on on "$stops")
nck=$(grep -c '^checkpoint [0-9]*: ' "$work/on.out")
held() { sed -n 's/^checkpoint \([0-9]*\): .*, \([0-9.]*\) s$/\1 \2/p' "$work/on.out"; }
size() { sed -n "s/^checkpoint $1: .*, \\([0-9.]* [KMG]iB\\) \\(full\\|incremental\\), .*/\\1 \\2/p" "$work/on.out"; }
first_held=$(held | awk '$1 == 1 { print $2 }')
later_held=$(held | awk '$1 > 1 { s += $2; n++ } END { if (n) printf "%.2f", s / n }')
per_off=$(echo "($toff - $t0) / $stops" | bc -l)
per_on=$(echo "($ton - $t0) / $stops" | bc -l)

echo "## Auto-checkpoint: the per-stop cost (console timeline)"
echo
echo "A \`crdbg debug -n $ranks\` job of \`prog_timeline $mb $((stops + 2))\` ($mb MiB per rank, 1% of it"
echo "written between stops), $stops \`continue\`s to a breakpoint, $backend backend, one round;"
echo "three batch sessions side by side: start and quit ($(printf '%.1f' "$t0") s), the stops with"
echo "auto-checkpoint off ($(printf '%.1f' "$toff") s) and on ($(printf '%.1f' "$ton") s). A \`continue\` is the"
echo "session's time less the start-and-quit session's, per stop; \"held\" is how"
echo "long a checkpoint held the job (the console's \`checkpoint N:\` line). A"
echo "warm-up session, not counted, runs first: the guest's first session reads"
echo "gdb, the libraries and the program over 9p into an empty page cache."
echo
echo "| what | per stop | ratio to off |"
echo "|---|---|---|"
printf '| `continue` to the next stop, auto-checkpoint off | %.2f s | 1.00 |\n' "$per_off"
printf '| `continue` to the next stop, auto-checkpoint on | %.2f s | %.2f |\n' "$per_on" \
	"$(echo "$per_on / $per_off" | bc -l)"
printf '| the checkpoint at the first stop (full), job held | %s s | |\n' "${first_held:-?}"
printf '| the checkpoints at later stops (incremental), job held, mean | %s s | |\n' "${later_held:-?}"
echo
echo "Checkpoints taken: $nck of $stops stops; size of the first: $(size 1);"
echo "of the second: $(size 2) (all $ranks ranks)."
echo
echo "Goal: checkpoints cheap enough to take at every stop (no number set)."
printf 'Here a stop with auto-checkpoint on costs %.2f s, %.2f times one with it off.\n' \
	"$per_on" "$(echo "$per_on / $per_off" | bc -l)"
