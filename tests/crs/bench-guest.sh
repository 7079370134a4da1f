#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the guest: crdbg checkpoint vs raw `criu dump --leave-running`,
# crdbg restart vs raw `criu restore -d`, on the same program at each RSS
# in $CKPT_BENCH_MB (MiB, default "64"), $CKPT_BENCH_ROUNDS rounds each.
# Prints a Markdown section on stdout.
set -u
top=${CRDBG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
crdbg=$build/crdbg
prog=$build/tests/crs/prog_ckpt
lib=$build/usr/libcrdbg.so
rounds=${CKPT_BENCH_ROUNDS:-3}
work=$(mktemp -d /tmp/crdbg-bench.XXXXXX)
export CRDBG_STORE=$work/store CKPT_GO=$work/go
trap 'rm -rf "$work"' EXIT
ip link set lo up 2>/dev/null

now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.4f\n", a - b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
start() {
	: >"$work/out"
	CKPT_RSS_MB=$1 LD_PRELOAD=$lib setsid "$prog" 1 50 20 >"$work/out" 2>&1 </dev/null &
	pid=$!
	for _ in $(seq 3000); do grep -q '^step 5$' "$work/out" && return 0; sleep 0.05; done
	return 1
}
stop() { kill -9 "$pid" 2>/dev/null; for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done; }
released() { # running again: the program's image, not stopped, not traced
	local st
	[[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$prog" ]] || return 1
	st=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) || return 1
	[[ $st != T && $st != t ]] && grep -q '^TracerPid:	0$' "/proc/$pid/status"
}
wait_released() { for _ in $(seq 6000); do released && return 0; sleep 0.01; done; return 1; }
mean() { awk '{ s += $1 } END { if (NR) printf "%.3f", s / NR; else print "n/a" }'; }

echo "### Checkpoint and restart: crdbg vs raw CRIU"
echo
echo "Program: tests/crs/prog_ckpt (1 worker thread, libcrdbg preloaded) holding"
echo "the given RSS; $rounds rounds each; crdbg used the ptrace freeze backend, and"
echo "CRIU 3.17.1 in both columns. Restart is timed until the process runs again."
echo
echo "| RSS | crdbg checkpoint (s) | criu dump (s) | ratio | crdbg restart (s) | criu restore (s) | ratio | image size / RSS |"
echo "|---|---|---|---|---|---|---|---|"
for mb in ${CKPT_BENCH_MB:-64}; do
	: >"$work/cd"; : >"$work/rd"; : >"$work/cr"; : >"$work/rr"; : >"$work/sz"
	for r in $(seq "$rounds"); do
		rm -rf "$work/raw" && mkdir -p "$work/raw"
		start "$mb" || { echo "| $mb MiB | program did not start |"; continue 2; }
		t=$(now)
		criu dump -t "$pid" -D "$work/raw" -o dump.log --leave-running >/dev/null 2>&1 || echo "# criu dump failed" >&2
		since "$t" >>"$work/rd"
		stop
		t=$(now)
		criu restore -D "$work/raw" -o restore.log -d >/dev/null 2>&1 || echo "# criu restore failed" >&2
		wait_released
		since "$t" >>"$work/rr"
		stop

		start "$mb"
		t=$(now)
		h=$("$crdbg" checkpoint "$pid" --backend ptrace 2>/dev/null)
		since "$t" >>"$work/cd"
		du -sb "$CRDBG_STORE/$h" | awk -v mb="$mb" '{ print $1 / (mb * 1048576) }' >>"$work/sz"
		stop
		t=$(now)
		"$crdbg" restart "$h" --backend ptrace >/dev/null 2>&1 &
		wait_released
		since "$t" >>"$work/cr"
		stop
		wait
		"$crdbg" rm "$h"
	done
	cd=$(mean <"$work/cd"); rd=$(mean <"$work/rd"); cr=$(mean <"$work/cr"); rr=$(mean <"$work/rr")
	printf '| %s MiB | %s | %s | %s | %s | %s | %s | %s |\n' "$mb" "$cd" "$rd" \
		"$(ratio "$cd" "$rd")" "$cr" "$rr" "$(ratio "$cr" "$rr")" "$(mean <"$work/sz")"
done
echo
echo "crdbg's extra cost: the MPIR request/answer, the freeze and hand-over,"
echo "SHA-256 of every image, the metadata, and on restart the verification,"
echo "the hook push on every thread and the release."
