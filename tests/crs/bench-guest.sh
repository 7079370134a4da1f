#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the guest: crdbg checkpoint vs raw `criu dump --leave-running`,
# crdbg restart vs raw `criu restore -d`, on the same program at each RSS
# in $CKPT_BENCH_MB (MiB, default "64"), $CKPT_BENCH_ROUNDS rounds each;
# the stop each causes and where crdbg's time goes; first vs incremental
# checkpoint at 1% dirty and full vs lazy restart at $CKPT_BENCH_INCR_MB
# MiB (default 256); the SHA-256 comparison at $CKPT_BENCH_DIGEST_MB
# (default: the sizes of $CKPT_BENCH_MB). Prints Markdown sections on stdout.
# $CKPT_BENCH_TRACE (a file): where a restart's time lies beyond crdbg's
# phases, one line a restart, and each raw restore's time beside them.
set -u
top=${CRDBG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
crdbg=$build/crdbg
prog=$build/tests/crs/prog_ckpt
incr=$build/tests/crs/prog_incr
lib=$build/usr/libcrdbg.so
rounds=${CKPT_BENCH_ROUNDS:-3}
# crdbg's freeze backend ($CKPT_BENCH_BACKEND, default ptrace; kmod needs crdbg.ko loaded)
backend=${CKPT_BENCH_BACKEND:-ptrace}
work=$(mktemp -d /tmp/crdbg-bench.XXXXXX)
export CRDBG_STORE=$work/store CKPT_GO=$work/go
trap 'rm -rf "$work"' EXIT
ip link set lo up 2>/dev/null
# CRIU caches its kernel feature checks (/run/criu.kdat) on its first run:
# make that run here, not inside the first measured dump.
criu check >/dev/null 2>&1

# Times are $EPOCHREALTIME, read by the shell itself: a `date` forked to
# read the clock put its own start (about 30 ms here) inside every
# measured span, and so pulled every ratio toward 1. elapsed A B: B - A.
elapsed() { awk -v a="$2" -v b="$1" 'BEGIN { printf "%.4f\n", a - b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# verdict R MAX: whether a ratio R (a number or n/a) meets a goal of at most MAX
verdict() { awk -v r="$1" -v m="$2" 'BEGIN { if (r !~ /^[0-9]+(\.[0-9]*)?$/) print "not measured"; else if (r + 0 <= m + 0) print "**met**"; else print "**not met**" }'; }
start() {
	: >"$work/out"
	CKPT_RSS_MB=$1 LD_PRELOAD=$lib setsid "$prog" 1 50 20 >"$work/out" 2>&1 </dev/null &
	pid=$!
	for _ in $(seq 3000); do grep -q '^step 5$' "$work/out" && return 0; sleep 0.05; done
	return 1
}
stop() { kill -9 "$pid" 2>/dev/null; for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done; }
# released: the program runs again (its image, not stopped, not traced,
# out of CRIU's restorer). The restorer sets the image's exe link before
# CRIU seizes the tree, so exe, state and TracerPid alone also match a
# window inside the restore (seen in the test guest, raw and
# crdbg alike). CRIU forks each task with every signal blocked and only
# rt_sigreturn at the end puts the program's mask back: a main thread
# blocking SIGHUP to SIGTERM (low bits feff of SigBlk) is still restoring.
# Polled with bash builtins only, a 10 ms nap on a FIFO nobody writes:
# a poll that forked (readlink, awk, grep, sleep) took a share of the
# guest's two CPUs from whichever restore it watched.
mkfifo "$work/nap" && exec {nap_fd}<>"$work/nap"
nap() { read -r -t 0.01 -u "$nap_fd" _; }
released() {
	local line st
	[[ /proc/$pid/exe -ef $prog ]] || return 1
	read -r line 2>/dev/null </proc/$pid/stat || return 1
	line=${line##*) }
	st=${line%% *}
	[[ $st != T && $st != t ]] || return 1
	while read -r line; do
		case $line in
		SigBlk:*feff) return 1 ;;
		TracerPid:*) [[ ${line#TracerPid:} =~ ^[[:space:]]*0$ ]] || return 1 ;;
		SigBlk:*) return 0 ;;	# comes after TracerPid
		esac
	done 2>/dev/null </proc/$pid/status
	return 1
}
wait_released() { for _ in $(seq 6000); do released && return 0; nap; done; return 1; }
# phases LOG: from crdbg restart -v's timing table, "V R W H" (ms): V
# everything before criu restores (read and checks, verify before criu,
# criu start, verify while criu starts), R criu restore, W wait for the
# page digests, H hook and release
phases() {
	sed -n 's/.*released after [0-9]* ms: read and checks \([0-9]*\), verify before criu \([0-9]*\), criu start \([0-9]*\), verify while criu starts \([0-9]*\), criu restore \([0-9]*\), wait for the page digests \([0-9]*\), hook and release \([0-9]*\)$/\1 \2 \3 \4 \5 \6 \7/p' "$1" |
		awk '{ print $1 + $2 + $3 + $4, $5, $6, $7 }'
}
mean() { awk '{ s += $1 } END { if (NR) printf "%.3f", s / NR; else print "n/a" }'; }

# --- Incremental checkpoints: first vs incremental at 1% dirty ----------
# prog_incr holds $CKPT_BENCH_INCR_MB MiB and writes 1% of its pages
# between the two checkpoints; its gap thread (wakes every ms) measures
# how long each checkpoint stopped it. Raw CRIU does the same with
# --track-mem and --prev-images-dir, in the same rounds.
imb=${CKPT_BENCH_INCR_MB:-256}
incr_start() {
	: >"$work/i.out"; : >"$work/i.err"; rm -f "$work/go".*
	INCR_GO=$work/go INCR_GAP=1 LD_PRELOAD=$lib setsid "$incr" "$imb" 2 10 \
		>"$work/i.out" 2>"$work/i.err" </dev/null &
	pid=$!
	incr_wait '^wait 1$'
}
incr_wait() { for _ in $(seq 6000); do grep -q "$1" "$work/i.out" && return 0; sleep 0.05; done; return 1; }
# incr_round KIND: checkpoint, write 1%, checkpoint; appends
# "stop1 stop2 size1 size2 time1 time2" (ms ms bytes bytes s s) to $work/incr.KIND
incr_round() {
	local kind=$1 t t1 t2 s1 s2 g1 g2
	incr_start || { echo "# prog_incr did not start" >&2; return 1; }
	t=$EPOCHREALTIME
	if [[ $kind == criu ]]; then
		mkdir -p "$work/c1" "$work/c2"
		criu dump -t "$pid" -D "$work/c1" -o dump.log --leave-running --track-mem >/dev/null 2>&1 ||
			echo "# criu dump failed" >&2
	else
		h1=$("$crdbg" checkpoint "$pid" --backend "$backend" --no-pre-dump 2>/dev/null)
	fi
	e=$EPOCHREALTIME; t1=$(elapsed "$t" "$e")
	touch "$work/go.1"
	incr_wait '^wait 2$'
	t=$EPOCHREALTIME
	if [[ $kind == criu ]]; then
		criu dump -t "$pid" -D "$work/c2" -o dump.log --leave-running --track-mem \
			--prev-images-dir ../c1 >/dev/null 2>&1 || echo "# criu dump (incremental) failed" >&2
		s1=$(du -sb "$work/c1" | cut -f1) s2=$(du -sb "$work/c2" | cut -f1)
	else
		h2=$("$crdbg" checkpoint "$pid" --backend "$backend" 2>/dev/null)
		s1=$(du -sb "$CRDBG_STORE/$h1" | cut -f1) s2=$(du -sb "$CRDBG_STORE/$h2" | cut -f1)
	fi
	e=$EPOCHREALTIME; t2=$(elapsed "$t" "$e")
	touch "$work/go.2"
	incr_wait '^done'
	g1=$(awk '$1 == "gap" && $2 == 1 { print $3 }' "$work/i.err")
	g2=$(awk '$1 == "gap" && $2 == 2 { print $3 }' "$work/i.err")
	echo "$g1 $g2 $s1 $s2 $t1 $t2" >>"$work/incr.$kind"
	stop
	rm -rf "$work/c1" "$work/c2"
	[[ $kind == criu ]] || { "$crdbg" rm "$h2"; "$crdbg" rm "$h1"; }
}
col() { awk -v c="$1" '{ s += $c } END { if (NR) printf "%.3f", s / NR; else print "n/a" }' "$2"; }
# median_ratio A B FILE: the median over FILE's rounds of column A / column B
median_ratio() {
	awk -v a="$1" -v b="$2" '$b > 0 { print $a / $b }' "$3" | sort -g |
		awk '{ v[NR] = $1 } END { if (!NR) { print "n/a"; exit }
			printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo
sec_commands() {
echo "### Checkpoint and restart: crdbg vs raw CRIU"
echo
echo "Program: tests/crs/prog_ckpt (1 worker thread, libcrdbg preloaded) holding"
echo "the given RSS; $rounds rounds each; crdbg used the $backend freeze backend, and"
echo "CRIU 3.17.1 in both columns. Restart is timed until the process runs again."
echo
echo "| RSS | crdbg checkpoint (s) | criu dump (s) | ratio | crdbg restart (s) | criu restore (s) | ratio | image size / RSS |"
echo "|---|---|---|---|---|---|---|---|"
for mb in ${CKPT_BENCH_MB:-64}; do
	: >"$work/cd"; : >"$work/rd"; : >"$work/cr"; : >"$work/rr"; : >"$work/sz"
	for r in $(seq "$rounds"); do
		rm -rf "$work/raw" && mkdir -p "$work/raw"
		start "$mb" || { echo "| $mb MiB | program did not start |"; continue 2; }
		t=$EPOCHREALTIME
		criu dump -t "$pid" -D "$work/raw" -o dump.log --leave-running >/dev/null 2>&1 || echo "# criu dump failed" >&2
		elapsed "$t" "$EPOCHREALTIME" >>"$work/rd"
		stop
		t=$EPOCHREALTIME
		criu restore -D "$work/raw" -o restore.log -d >/dev/null 2>&1 || echo "# criu restore failed" >&2
		wait_released
		elapsed "$t" "$EPOCHREALTIME" >>"$work/rr"
		stop

		start "$mb"
		t=$EPOCHREALTIME
		h=$("$crdbg" checkpoint "$pid" --backend "$backend" 2>/dev/null)
		elapsed "$t" "$EPOCHREALTIME" >>"$work/cd"
		du -sb "$CRDBG_STORE/$h" | awk -v mb="$mb" '{ print $1 / (mb * 1048576) }' >>"$work/sz"
		stop
		t=$EPOCHREALTIME
		"$crdbg" restart "$h" --backend "$backend" >/dev/null 2>&1 &
		wait_released
		elapsed "$t" "$EPOCHREALTIME" >>"$work/cr"
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
echo "the XXH3-128 digest of every image (after the release), the metadata, and"
echo "on restart the verification, the hook push on every thread and the release."
echo
echo "Goal: none of its own; the stop and restart table carries the goals."

}
sec_incr() {
echo "### Incremental checkpoints: first vs incremental at 1% dirty"
echo
echo "Program: tests/crs/prog_incr holding $imb MiB (libcrdbg preloaded), 1% of"
echo "its pages written between a first and a second checkpoint (continue);"
echo "$rounds rounds, means. Stop = the longest time a thread of the program that"
echo "wakes every millisecond did not run (so it includes the freeze and the"
echo "release). crdbg: $backend backend, the first checkpoint with --no-pre-dump"
echo "(every page copied while stopped, as raw CRIU's first; a pre-dump takes"
echo "most of that out of the stop, next section), the second incremental on"
echo "its own; raw CRIU: \`criu dump --leave-running --track-mem\`, then the same"
echo "with \`--prev-images-dir\`."
echo
echo "| RSS | tool | first: stop (ms) | incremental: stop (ms) | stop ratio | first: image (MiB) | incremental: image (MiB) | image ratio | first: command (s) | incremental: command (s) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
: >"$work/incr.criu"; : >"$work/incr.crdbg"
for r in $(seq "$rounds"); do
	incr_round criu
	incr_round crdbg
done
for kind in criu crdbg; do
	f=$work/incr.$kind
	g1=$(col 1 "$f") g2=$(col 2 "$f") s1=$(col 3 "$f") s2=$(col 4 "$f")
	printf '| %s MiB | %s | %.0f | %.0f | %s | %.1f | %.1f | %s | %s | %s |\n' "$imb" \
		"$([[ $kind == criu ]] && echo "raw CRIU" || echo crdbg)" "$g1" "$g2" \
		"$(ratio "$g2" "$g1")" "$(awk -v b="$s1" 'BEGIN { print b / 1048576 }')" \
		"$(awk -v b="$s2" 'BEGIN { print b / 1048576 }')" "$(ratio "$s2" "$s1")" \
		"$(col 5 "$f")" "$(col 6 "$f")"
done
f=$work/incr.crdbg
sr=$(ratio "$(col 2 "$f")" "$(col 1 "$f")") ir=$(ratio "$(col 4 "$f")" "$(col 3 "$f")")
echo
echo "Goal: incremental stop <= 0.1x the first, image about 1% of the first."
echo "Stop: $(verdict "$sr" 0.10) (crdbg's ratio $sr); image: $(verdict "$ir" 0.01) (ratio $ir)."

}
sec_stop() {
# --- Stop time, and where crdbg's time goes (crdbg -v phase marks) ------
echo
echo "### Checkpoint stop time and restart to released: crdbg vs raw CRIU"
echo
echo "Program: tests/crs/prog_incr (libcrdbg preloaded) holding the given RSS;"
echo "$rounds rounds after one not counted (the first criu of a boot runs cold), means."
echo "Stopped = the time the program's millisecond thread (SCHED_FIFO) did not"
echo "run during \`criu dump --leave-running\` or \`crdbg checkpoint\` (continue,"
echo "$backend backend), every pause over 10 ms summed: crdbg's pre-dump stops"
echo "the tree once more, briefly, before the freeze; the longest single pause"
echo "is given too. Released = from the command's start until the restored"
echo "process runs untraced and out of CRIU's restorer (\`criu restore -d\`;"
echo "\`crdbg restart\`), polled with bash builtins while each runs; \"criu"
echo "restore, polled once it returned\" is the raw restore looked at only after"
echo "criu exited. The phases are crdbg's own -v marks. crdbg checks the memory"
echo "pages' digests while criu restores and releases once they passed; \"all"
echo "digests first\" is the same restart with CRDBG_VERIFY=first (every digest"
echo "before \`criu restore\`). The ratios are of the means; the median columns"
echo "give the median of the rounds' own ratios (each round's raw and crdbg"
echo "measured back to back), which one slow round moves less."
echo
echo "| RSS | criu stopped (ms) | crdbg stopped in all (ms) | ratio | crdbg's longest stop (ms) | crdbg: pre-dump (while it runs) / freeze / criu dump / release (ms) | crdbg: merge / checksums after the release (ms) | criu restore to released (s) | crdbg restart to released (s) | ratio | crdbg: verify before / criu restore / wait for page digests / hook+release (ms) | crdbg, all digests first, to released (s) | ratio | criu restore, polled once it returned (s) | crdbg restart's ratio to it | stop: median ratio | restart: median ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# crdbg_restart H [ENV...]: restart H ($backend, -v) in the background with
# the program's files as at checkpoint 2, wait until released; prints the
# seconds and the four phases
crdbg_restart() {
	local h=$1 t el
	shift
	cp "$work/o.at2" "$work/i.out"; cp "$work/e.at2" "$work/i.err"
	t=$EPOCHREALTIME
	# a subshell that execs crdbg: no exec of env(1) on this path, which
	# the raw restore (bash execs criu) does not have either
	(for kv in "$@"; do export "${kv?}"; done
	 exec "$crdbg" restart "$h" --backend "$backend" -v >/dev/null 2>"$work/rv.log") &
	prog=$incr wait_released
	e=$EPOCHREALTIME; el=$(elapsed "$t" "$e")
	stop; wait
	[[ -n ${CKPT_BENCH_TRACE:-} ]] && trace_restart "crdbg${1+ $*}" "$t" "$e" "$work/rv.log"
	echo "$el $(phases "$work/rv.log")"
}
# trace_restart WHAT T E LOG: with $CKPT_BENCH_TRACE (a file), where a
# restart's time to released lies outside crdbg's own phases: from the
# shell's start to crdbg's first mark, and from its release to the poll
# seeing the program run (CLOCK_REALTIME, crdbg restart -v).
trace_restart() {
	local b r
	read -r b r < <(sed -n 's/.*restart began at \([0-9.]*\), released at \([0-9.]*\) .*/\1 \2/p' "$4")
	echo "$1 to-released $(elapsed "$2" "$3") before-crdbg's-start $(elapsed "$2" "${b:-$2}") after-its-release $(elapsed "${r:-$3}" "$3")" >>"$CKPT_BENCH_TRACE"
}
goals=""
for mb in ${CKPT_BENCH_MB:-64}; do
	: >"$work/st"
	# round 0 warms criu, crdbg and the page cache up and is not counted
	for r in $(seq 0 "$rounds"); do
		imb_save=$imb; imb=$mb
		incr_start || { imb=$imb_save; continue; }
		rm -rf "$work/raw" && mkdir -p "$work/raw"
		criu dump -t "$pid" -D "$work/raw" -o dump.log --leave-running >/dev/null 2>&1
		cp "$work/i.out" "$work/o.at1"; cp "$work/i.err" "$work/e.at1"
		touch "$work/go.1"; incr_wait '^wait 2$'
		h=$("$crdbg" checkpoint "$pid" --backend "$backend" -v 2>"$work/cv.log")
		cp "$work/i.out" "$work/o.at2"; cp "$work/i.err" "$work/e.at2"
		touch "$work/go.2"; incr_wait '^done'
		g1=$(awk '$1 == "gap" && $2 == 1 { print $3, $4 }' "$work/i.err")
		g2=$(awk '$1 == "gap" && $2 == 2 { print $3, $4 }' "$work/i.err")
		stop
		ph=$(sed -n 's/.*checkpoint took .*freeze \([0-9]*\), criu dump \([0-9]*\), release \([0-9]*\).*checksums and metadata \([0-9]*\)$/\1 \2 \3 \4/p' "$work/cv.log")
		pm=$(sed -n 's/.*checkpoint took .*pre-dump \([0-9]*\), .*pre-dump merged \([0-9]*\) .*/\1 \2/p' "$work/cv.log")
		# restarts: raw, then crdbg, each to released (it waits there, no go file)
		rm -f "$work/go".*
		# polled while criu restores, as crdbg restart is below
		cp "$work/o.at1" "$work/i.out"; cp "$work/e.at1" "$work/i.err"
		t=$EPOCHREALTIME
		criu restore -D "$work/raw" -o restore.log -d >/dev/null 2>&1 &
		cpid=$!
		prog=$incr wait_released
		e=$EPOCHREALTIME; rr=$(elapsed "$t" "$e")
		wait "$cpid"
		[[ -n ${CKPT_BENCH_TRACE:-} ]] && echo "criu restore to-released $rr" >>"$CKPT_BENCH_TRACE"
		stop
		# the same restore, polled only once criu returned
		cp "$work/o.at1" "$work/i.out"; cp "$work/e.at1" "$work/i.err"
		t=$EPOCHREALTIME
		criu restore -D "$work/raw" -o restore.log -d >/dev/null 2>&1
		prog=$incr wait_released
		e=$EPOCHREALTIME; ro=$(elapsed "$t" "$e")
		stop
		cr=$(crdbg_restart "$h")
		cf=$(crdbg_restart "$h" CRDBG_VERIFY=first)
		"$crdbg" rm "$h"
		[[ $(wc -w <<<"$cr") == 5 ]] || cr="$cr 0 0 0 0 0"
		# 1, 2: the longest stops (raw, crdbg); 3-6: crdbg's checkpoint
		# phases; 7-14: the restarts; 15, 16: the stops summed (raw,
		# crdbg); 17, 18: crdbg's pre-dump and merge
		((r)) && echo "${g1% *} ${g2% *} ${ph:-0 0 0 0} $rr $cr ${cf%% *} $ro ${g1#* } ${g2#* } ${pm:-0 0}" >>"$work/st"
		imb=$imb_save
	done
	f=$work/st
	printf '| %s MiB | %.0f | %.0f | %s | %.0f | %.0f / %.0f / %.0f / %.0f | %.0f / %.0f | %.3f | %.3f | %s | %.0f / %.0f / %.0f / %.0f | %.3f | %s | %.3f | %s | %s | %s |\n' "$mb" \
		"$(col 15 "$f")" "$(col 16 "$f")" "$(ratio "$(col 16 "$f")" "$(col 15 "$f")")" \
		"$(col 2 "$f")" "$(col 17 "$f")" "$(col 3 "$f")" "$(col 4 "$f")" "$(col 5 "$f")" \
		"$(col 18 "$f")" "$(col 6 "$f")" \
		"$(col 7 "$f")" "$(col 8 "$f")" "$(ratio "$(col 8 "$f")" "$(col 7 "$f")")" \
		"$(col 9 "$f")" "$(col 10 "$f")" "$(col 11 "$f")" "$(col 12 "$f")" \
		"$(col 13 "$f")" "$(ratio "$(col 13 "$f")" "$(col 7 "$f")")" \
		"$(col 14 "$f")" "$(ratio "$(col 8 "$f")" "$(col 14 "$f")")" \
		"$(median_ratio 16 15 "$f")" "$(median_ratio 8 7 "$f")"
	sr=$(ratio "$(col 16 "$f")" "$(col 15 "$f")") rr=$(ratio "$(col 8 "$f")" "$(col 7 "$f")")
	goals="$goals $mb MiB: stop $(verdict "$sr" 1.10) (${sr}x), restart $(verdict "$rr" 1.10) (${rr}x, median $(median_ratio 8 7 "$f")x)."
done
echo
echo "Goal: stop and restart to released each <= 1.10x raw CRIU.$goals"

}
sec_lazy() {
# --- Lazy restart: full vs lazy to released ----------------------------
echo
echo "### Restart: full vs lazy (\`--lazy\`, criu lazy-pages) to released"
echo
echo "Program: tests/crs/prog_incr holding the given RSS, checkpointed with --kill;"
echo "$rounds rounds, means; $backend backend. Released as above; the lazy restart's"
echo "pages come on demand and the rest is copied behind, served by crdbg, which"
echo "checks each chunk of the pages image before its pages go; its \"wait for page"
echo "digests\" is the check of the chunks criu restore reads itself."
echo
echo "| RSS | full restart to released (s) | lazy restart to released (s) | ratio | full: verify before / criu restore / wait for page digests / hook+release (ms) | lazy: verify before / criu restore / wait for page digests / hook+release (ms) |"
echo "|---|---|---|---|---|---|"
goals=""
for mb in ${CKPT_BENCH_LAZY_MB:-$imb}; do
	imb_save=$imb; imb=$mb
	: >"$work/lz"
	for r in $(seq "$rounds"); do
		incr_start || continue
		h=$("$crdbg" checkpoint "$pid" --backend "$backend" --kill 2>/dev/null)
		for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
		cp "$work/i.out" "$work/i.keep"; cp "$work/i.err" "$work/e.keep"
		line=""
		for mode in full lazy; do
			cp "$work/i.keep" "$work/i.out"; cp "$work/e.keep" "$work/i.err"
			t=$EPOCHREALTIME
			"$crdbg" restart "$h" --backend "$backend" -v $([[ $mode == lazy ]] && echo --lazy) >/dev/null 2>"$work/rv.log" &
			prog=$incr wait_released
			e=$EPOCHREALTIME; el=$(elapsed "$t" "$e")
			stop; wait
			rph=$(phases "$work/rv.log")
			line="$line $el ${rph:-0 0 0 0}"
		done
		"$crdbg" rm "$h"
		echo "$line" >>"$work/lz"
	done
	f=$work/lz
	printf '| %s MiB | %.3f | %.3f | %s | %.0f / %.0f / %.0f / %.0f | %.0f / %.0f / %.0f / %.0f |\n' "$imb" \
		"$(col 1 "$f")" "$(col 6 "$f")" "$(ratio "$(col 6 "$f")" "$(col 1 "$f")")" \
		"$(col 2 "$f")" "$(col 3 "$f")" "$(col 4 "$f")" "$(col 5 "$f")" \
		"$(col 7 "$f")" "$(col 8 "$f")" "$(col 9 "$f")" "$(col 10 "$f")"
	lr=$(ratio "$(col 6 "$f")" "$(col 1 "$f")")
	goals="$goals $mb MiB: $(verdict "$lr" 0.20) (${lr}x)."
	imb=$imb_save
done
echo
echo "Goal: lazy restart to released <= 0.2x the full one.$goals"

}
sec_digests() {
# --- The digest: XXH3-128 vs SHA-256 -------------------------------------
echo
echo "### Image digests: XXH3-128 (default) vs SHA-256 (CRDBG_DIGEST=sha256)"
echo
echo "The same program (tests/crs/prog_incr) checkpointed twice (continue, --full),"
echo "once with each digest; \"after the release\" is crdbg's -v mark for the"
echo "digests and metadata of a checkpoint (not stop time); verify is \\\`crdbg"
echo "verify HANDLE\\\`, which is what a restart does before \\\`criu restore\\\`."
echo
echo "| RSS | XXH3-128: after the release (ms) | SHA-256: after the release (ms) | XXH3-128: verify (s) | SHA-256: verify (s) |"
echo "|---|---|---|---|---|"
for mb in ${CKPT_BENCH_DIGEST_MB:-${CKPT_BENCH_MB:-64}}; do
	imb_save=$imb; imb=$mb
	incr_start || { imb=$imb_save; continue; }
	hx=$("$crdbg" checkpoint "$pid" --backend "$backend" --full -v 2>"$work/dx.log")
	touch "$work/go.1"; incr_wait '^wait 2$'
	hs=$(CRDBG_DIGEST=sha256 "$crdbg" checkpoint "$pid" --backend "$backend" --full -v 2>"$work/ds.log")
	touch "$work/go.2"; incr_wait '^done'
	stop
	cx=$(sed -n 's/.*checksums and metadata \([0-9]*\)$/\1/p' "$work/dx.log")
	cs=$(sed -n 's/.*checksums and metadata \([0-9]*\)$/\1/p' "$work/ds.log")
	t=$EPOCHREALTIME; "$crdbg" verify "$hx" >/dev/null 2>&1; e=$EPOCHREALTIME; vx=$(elapsed "$t" "$e")
	t=$EPOCHREALTIME; "$crdbg" verify "$hs" >/dev/null 2>&1; e=$EPOCHREALTIME; vs=$(elapsed "$t" "$e")
	printf '| %s MiB | %s | %s | %.3f | %.3f |\n' "$mb" "${cx:-n/a}" "${cs:-n/a}" "$vx" "$vs"
	"$crdbg" rm "$hs"; "$crdbg" rm "$hx"
	imb=$imb_save
done
echo
echo "Goal: none of its own; the table says what the default digest saves"
echo "against SHA-256."

}
# Sections in the order of $CKPT_BENCH_SECTIONS (default: all, as listed).
for sec in ${CKPT_BENCH_SECTIONS:-commands incr stop lazy digests}; do
	"sec_$sec"
	echo
done
