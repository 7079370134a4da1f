#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the guest: a job checkpoint of three processes (three parts, one
# cut) next to the slowest of three raw `criu dump`s of the same
# processes, and `crdbg restart JOB` to released next to the slowest raw
# `criu restore -d`; $JOB_BENCH_MB MiB each (default 64), $JOB_BENCH_ROUNDS
# rounds (default 2). Both kill the processes at the dump. Markdown on stdout.
set -u
top=${CRDBG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
crdbg=$build/crdbg
prog=$build/tests/crs/prog_incr
lib=$build/usr/libcrdbg.so
mb=${JOB_BENCH_MB:-64}
rounds=${JOB_BENCH_ROUNDS:-2}
work=$(mktemp -d /tmp/crdbg-jobbench.XXXXXX)
export CRDBG_STORE=$work/store
trap 'pkill -9 -f "$prog" 2>/dev/null; rm -rf "$work"' EXIT
ip link set lo up 2>/dev/null
criu check >/dev/null 2>&1

now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.4f\n", a - b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
mean() { awk '{ s += $1 } END { if (NR) printf "%.3f", s / NR; else print "n/a" }'; }
max() { sort -g | tail -n 1; }
start3() { # three processes waiting for phase 1 (never given): pids in $p
	local r
	p=()
	for r in 0 1 2; do
		INCR_GO=$work/go$r LD_PRELOAD=$lib setsid "$prog" "$mb" 1 10 \
			>"$work/o$r" 2>"$work/e$r" </dev/null &
		p+=($!)
	done
	for r in 0 1 2; do
		for _ in $(seq 3000); do grep -q '^wait 1$' "$work/o$r" && break; sleep 0.05; done
	done
}
gone3() { local q; for q in "${p[@]}"; do while kill -0 "$q" 2>/dev/null; do sleep 0.02; done; done; }

: >"$work/jc"; : >"$work/rc"; : >"$work/jr"; : >"$work/rr"; : >"$work/rcs"; : >"$work/rrs"
sum() { awk '{ s += $1 } END { printf "%.4f\n", s }'; }
for _ in $(seq "$rounds"); do
	# Raw CRIU, one process at a time: the slowest is what a node costs.
	start3
	: >"$work/raw"
	for r in 0 1 2; do
		rm -rf "$work/raw$r" && mkdir -p "$work/raw$r"
		t=$(now)
		criu dump -t "${p[r]}" -D "$work/raw$r" -o dump.log --shell-job >/dev/null 2>&1
		since "$t" >>"$work/raw"
	done
	max <"$work/raw" >>"$work/rc"
	sum <"$work/raw" >>"$work/rcs"
	gone3
	: >"$work/raw"
	for r in 0 1 2; do
		t=$(now)
		criu restore -D "$work/raw$r" -o restore.log --shell-job -d >/dev/null 2>&1
		since "$t" >>"$work/raw"
	done
	max <"$work/raw" >>"$work/rr"
	sum <"$work/raw" >>"$work/rrs"
	kill -9 "${p[@]}" 2>/dev/null
	gone3
	# crdbg: the three at one cut, then the barrier.
	start3
	t=$(now)
	job=$("$crdbg" checkpoint --job "${p[0]},${p[1]},${p[2]}" --kill --backend ptrace 2>/dev/null)
	since "$t" >>"$work/jc"
	gone3
	t=$(now)
	"$crdbg" restart "$job" --backend ptrace -v >/dev/null 2>"$work/restart.err" &
	rp=$!
	for _ in $(seq 6000); do grep -q ': releasing$' "$work/restart.err" && break; sleep 0.01; done
	since "$t" >>"$work/jr"
	kill -9 "${p[@]}" 2>/dev/null
	wait "$rp" 2>/dev/null
	"$crdbg" rm "$job" >/dev/null 2>&1
done

echo "## Job checkpoints: three parts at one cut vs raw CRIU"
echo
echo "Three processes (tests/crs/prog_incr, $mb MiB each, libcrdbg preloaded) in"
echo "one guest; $rounds rounds. Raw CRIU: \`criu dump\` of each in turn, the"
echo "slowest counted (one node's cost); crdbg: \`checkpoint --job\` of the three"
echo "(freeze all, dump all, keep all; --kill, ptrace backend), and \`restart JOB\`"
echo "until the coordinator releases every part, next to the slowest raw"
echo "\`criu restore -d\`. The three parts share the guest's 2 vCPUs, so the"
echo "sum of the three raw runs (what one node holding all three costs) is given too."
echo
echo "| | crdbg job (s) | slowest raw CRIU (s) | ratio | sum of 3 raw (s) | ratio |"
echo "|---|---|---|---|---|---|"
jc=$(mean <"$work/jc"); rc=$(mean <"$work/rc"); jr=$(mean <"$work/jr"); rr=$(mean <"$work/rr")
rcs=$(mean <"$work/rcs"); rrs=$(mean <"$work/rrs")
echo "| checkpoint (3 parts) | $jc | $rc | $(ratio "$jc" "$rc") | $rcs | $(ratio "$jc" "$rcs") |"
echo "| restart to released (3 parts) | $jr | $rr | $(ratio "$jr" "$rr") | $rrs | $(ratio "$jr" "$rrs") |"
echo
echo "Goal: none set; the slowest and the sum of the raw runs are the reference."
