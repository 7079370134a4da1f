#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Checkpoint fidelity, in the guest: every tests/fidelity/prog_*.c holds
# one kind of kernel state (fidelity.h has the protocol). Each program is
# started daemonized (setsid, stdio on /dev/null, libcrdbg preloaded),
# and taken through each mode:
#
#   criu         raw criu dump + criu restore: the control
#   ptrace kmod  crdbg checkpoint --kill + crdbg restart, on that backend
#   criu-cont    raw criu dump --leave-running: the original checks
#                itself, then criu restore of that image checks again
#   cont-kmod    the same with crdbg checkpoint (it continues) + restart;
#                its control is criu-cont where that runs, else criu
#   cont-ptrace  (not by default: FIDELITY_MODES="... cont-ptrace")
#   X-to-Y       checkpoint --kill on backend X, restart on backend Y
#   X-lazy       checkpoint --kill on backend X, restart --lazy on it
#                (these two only where extra_modes names them)
#
# after which it checks its own state. A CRIU option crdbg does not find
# itself (user_criu_opts) is given to crdbg checkpoint --criu-opt, must be
# recorded in the metadata, and the restart must use it from there. Some
# programs talk to a peer outside the tree (peer_ready), started first.
# One TAP line per program and mode
# (two for a continue mode: the original, the restart of its image). A
# program that fails under raw CRIU is a SKIP with CRIU's reason, and so
# are the crdbg modes it controls; one that passes under raw CRIU must
# pass under crdbg. Programs run FIDELITY_JOBS (3) at a time.
#
#   test_fidelity.sh [PROG...]      (default: every prog_* built)
set -u
top=${CRDBG_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CRDBG_BUILD:-$top/build}
crdbg=$build/crdbg
bin=$build/tests/fidelity
lib=$build/usr/libcrdbg.so
criu=$(command -v criu || echo /usr/sbin/criu)
work=$(mktemp -d /tmp/crdbg-fid.XXXXXX)
export CRDBG_STORE=$work/store
JOBS=${FIDELITY_JOBS:-3}
MODES=(${FIDELITY_MODES:-criu ptrace kmod criu-cont cont-kmod})
# How long a program may take to get ready, or to check itself (TCG, a
# loaded machine: generous, a few seconds are enough when things work).
READY_S=60
RESULT_S=60

if (($#)); then
	progs=("$@")
else
	progs=()
	for f in "$bin"/prog_*; do progs+=("${f##*/prog_}"); done
fi

# The raw CRIU options a program needs (crdbg finds them itself: TCP
# sockets, file locks; see Documentation/checkpoint.md).
criu_opts() {
	case $1 in
	tcp|tcp_peer) echo --tcp-established --network-lock nftables ;;
	flock) echo --file-locks ;;
	ext_unix) echo --ext-unix-sk ;;
	esac
}

# The CRIU options crdbg cannot find itself: the user passes them to
# `crdbg checkpoint --criu-opt`, and the restart takes them from the
# checkpoint's metadata.
user_criu_opts() {
	case $1 in
	ext_unix) echo --ext-unix-sk ;;
	esac
}

# The modes a program runs besides MODES (not already in them): the
# ptrace backend's continue hands the tree to CRIU in a group stop, a
# restart on the other backend or with --lazy restores it stopped by CRIU
# (--leave-stopped) where the checkpoint's own backend may not, and each
# of those stops discards pending SIGCONTs: crdbg must queue them again
# from the metadata. A program with a peer outside the tree runs raw
# CRIU's continue too, as its continue modes' control: the peer moves on
# with the original after the checkpoint, which a restart of the image
# may not survive (raw CRIU's dump and restore cannot tell).
extra_modes() {
	local m more=()
	case $1 in
	sigcont_pending) more=(cont-ptrace kmod-to-ptrace ptrace-to-kmod kmod-lazy ptrace-lazy) ;;
	esac
	[[ -z $(peer_ready "$1") ]] || more=(criu-cont "${more[@]}")
	for m in "${more[@]}"; do
		[[ " ${MODES[*]} " == *" $m "* ]] || echo "$m"
	done
}

# ckpt_backend MODE, restart_backend MODE, restart_flags MODE: crdbg's side of a mode.
ckpt_backend() {
	case $1 in
	cont-*) echo "${1#cont-}" ;;
	*-to-*) echo "${1%%-to-*}" ;;
	*-lazy) echo "${1%-lazy}" ;;
	*) echo "$1" ;;
	esac
}
restart_backend() {
	case $1 in
	*-to-*) echo "${1##*-to-}" ;;
	*) ckpt_backend "$1" ;;
	esac
}
restart_flags() { [[ $1 != *-lazy ]] || echo --lazy; }

# state PID: its /proc state letter, empty when it is gone.
state() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }
dead() { local s; s=$(state "$1"); [[ -z $s || $s == Z ]]; }

# wait_until SECONDS COND...: poll COND every 0.1 s.
wait_until() {
	local end=$((SECONDS + $1)); shift
	until "$@"; do
		((SECONDS < end)) || return 1
		sleep 0.1
	done
}

# descendants PID: PID's descendants (not PID), deepest last.
descendants() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}

# kill_tree PID: PID and everything below it.
kill_tree() {
	local all
	all="$1 $(descendants "$1")"
	kill -9 $all 2>/dev/null
}

# first_error LOG: CRIU's first error line that says what went wrong.
first_error() {
	grep -E 'Error' "$1" 2>/dev/null | grep -v 'exited, status=' | head -n 1 | cut -c1-200
}

# peer_ready PROG: the file its outside peer creates when it serves.
peer_ready() {
	case $1 in
	tcp_peer) echo port ;;
	ext_unix) echo peer.sock ;;
	esac
}

# launch PROG RD: start the program (and its outside peer) in RD; sets pid.
launch() {
	local p=$1 rd=$2
	mkdir -p "$rd"
	peer=
	if [[ -n $(peer_ready "$p") ]]; then
		setsid "$bin/prog_$p" "$rd" peer </dev/null >/dev/null 2>&1 3>&- &
		peer=$!
		wait_until "$READY_S" test -e "$rd/$(peer_ready "$p")" || return 1
	fi
	LD_PRELOAD=$lib setsid "$bin/prog_$p" "$rd" </dev/null >/dev/null 2>&1 3>&- &
	pid=$!
	wait_until "$READY_S" test -e "$rd/ready"
}

# verdict RD WHY: the program's result (and its peer's, while one serves
# it) in $out.
verdict() {
	local rd=$1 r
	r=$(cat "$rd/result" 2>/dev/null)
	[[ -n $r ]] || r="fail: no result ($2)"
	if [[ $r == pass && -n $peer ]]; then
		wait_until 30 test -e "$rd/peer-result"
		r=$(cat "$rd/peer-result" 2>/dev/null)
		[[ -n $r ]] || r="fail: no result from the outside peer"
	fi
	out=$r
}

# checkpoint MODE RD [cont]: dump the running program; 0 when stored.
checkpoint() {
	local mode=$1 rd=$2 cont=${3:-} opts after=--kill o
	opts=$(criu_opts "$p")
	[[ -z $cont ]] || after=--no-debug	# continues; no debugger to wait for
	case $mode in
	criu*)
		mkdir -p "$rd/img"
		"$criu" dump -t "$pid" -D "$rd/img" -o dump.log -v4 ${cont:+--leave-running} $opts \
			>/dev/null 2>&1 || { echo "criu dump: $(first_error "$rd/img/dump.log")"; return 1; }
		;;
	*)
		opts=
		for o in $(user_criu_opts "$p"); do opts+=" --criu-opt=$o"; done
		"$crdbg" checkpoint "$pid" --backend "$(ckpt_backend "$mode")" $after $opts \
			>"$rd/handle" 2>"$rd/checkpoint.log" ||
			{ echo "crdbg checkpoint: $(tail -n 1 "$rd/checkpoint.log")"; return 1; }
		# recorded, for the restart to give them to criu restore too
		for o in $(user_criu_opts "$p"); do
			grep -qx "criu-opt $o" "$CRDBG_STORE/$(cat "$rd/handle")/metadata" ||
				{ echo "crdbg checkpoint did not record criu-opt $o"; return 1; }
		done
		;;
	esac
}

# answered RD PID: the result is there, or PID (the restorer, or the
# original) is gone without one.
answered() { test -e "$1/result" || dead "$2"; }

# restore MODE RD: restore the image, give the word, the verdict in $out.
# Raw CRIU restores detached (-d) and returns once every task is let go,
# so the program hears the word only when CRIU is done with it; crdbg
# restart stays in the foreground (it waits for the program).
restore() {
	local mode=$1 rd=$2 rpid why=
	case $mode in
	criu*)
		if ! "$criu" restore -d -D "$rd/img" -o restore.log -v4 $(criu_opts "$p") \
			>"$rd/restore.out" 2>&1 3>&-; then
			out="fail: criu restore: $(first_error "$rd/img/restore.log")"
			kill_tree "$pid"
			return
		fi
		rpid=$pid
		;;
	*)
		# -v: where a restart that never let the program answer stopped
		"$crdbg" restart "$(cat "$rd/handle")" --backend "$(restart_backend "$mode")" \
			$(restart_flags "$mode") -v \
			>"$rd/restart.log" 2>&1 3>&- &
		rpid=$!
		;;
	esac
	touch "$rd/go"
	wait_until "$RESULT_S" answered "$rd" "$rpid"
	if [[ ! -e $rd/result ]]; then
		case $mode in
		criu*) why="the restored program died or never answered" ;;
		*) why="crdbg restart: $(tail -n 1 "$rd/restart.log")" ;;
		esac
	fi
	verdict "$rd" "$why"
	wait_until 20 dead "$pid" || kill_tree "$pid"
	if [[ $rpid != "$pid" ]]; then
		wait_until 20 dead "$rpid" || kill -9 "$rpid" 2>/dev/null
		wait "$rpid" 2>/dev/null
	fi
}

# The original of a continue checkpoint checks itself and exits: $out.
original() {
	local rd=$1
	touch "$rd/go"
	wait_until "$RESULT_S" answered "$rd" "$pid"
	verdict "$rd" "the original never answered"
	wait_until 30 dead "$pid" || kill_tree "$pid"
	wait "$pid" 2>/dev/null
	# a TCP peer ends with its connection; a datagram peer serves the restart too
	if [[ -n $peer && $p != ext_unix ]]; then
		wait_until 30 dead "$peer" || kill -9 "$peer"
		wait "$peer" 2>/dev/null
		peer=
	fi
	rm -f "$rd/result" "$rd/go" "$rd/peer-result" "$rd/sent"
}

# run_mode PROG MODE: one line "MODE[-orig|-restart] pass|fail: ..." per half.
run_mode() {
	local p=$1 mode=$2 rd=$work/$1/$2 why cont=
	[[ $mode == *cont* ]] && cont=1
	if [[ $mode == *kmod* && -z $kmod ]]; then
		echo "$mode${cont:+-orig} fail: crdbg.ko is not loaded"
		[[ -z $cont ]] || echo "$mode-restart fail: crdbg.ko is not loaded"
		return
	fi
	if ! launch "$p" "$rd"; then
		echo "$mode${cont:+-orig} fail: the program did not get ready"
		[[ -z $cont ]] || echo "$mode-restart fail: the program did not get ready"
		kill_tree "$pid"
		[[ -z $peer ]] || kill -9 "$peer"
		return
	fi
	if ! why=$(checkpoint "$mode" "$rd" $cont); then
		echo "$mode${cont:+-orig} fail: $why"
		[[ -z $cont ]] || echo "$mode-restart fail: $why"
		kill_tree "$pid"
		wait "$pid" 2>/dev/null
		[[ -z $peer ]] || kill -9 "$peer"
		return
	fi
	if [[ -n $cont ]]; then
		original "$rd"
		echo "$mode-orig $out"
		restore "$mode" "$rd"
		echo "$mode-restart $out"
		[[ -z $peer ]] || { kill -9 "$peer" 2>/dev/null; wait "$peer" 2>/dev/null; }
	else
		wait_until 60 dead "$pid" || { echo "$mode fail: --kill left the program running"; kill_tree "$pid"; }
		wait "$pid" 2>/dev/null
		restore "$mode" "$rd"
		echo "$mode $out"
		[[ -z $peer ]] || { kill -9 "$peer" 2>/dev/null; wait "$peer" 2>/dev/null; }
	fi
}

# run_program PROG: every mode in turn; each verdict goes to $work/PROG.res
# and, with the seconds the mode took, into the TAP as a comment (progress).
# Only files: nothing started here holds a pipe the test would wait on.
run_program() {
	local p=$1 m t
	for m in "${MODES[@]}" $(extra_modes "$p"); do
		t=$SECONDS
		run_mode "$p" "$m" >"$work/$p/$m.res"
		cat "$work/$p/$m.res" >>"$work/$p.res"
		sed "s/^/# $p /; s/\$/ ($((SECONDS - t)) s)/" "$work/$p/$m.res"
	done
}

kmod=
lsmod | grep -q '^crdbg ' && kmod=1
modprobe -q nf_tables 2>/dev/null
start=$SECONDS
for p in "${progs[@]}"; do
	mkdir -p "$work/$p"
	run_program "$p" 2>"$work/$p.err" &
	while (($(jobs -rp | wc -l) >= JOBS)); do wait -n; done
done
wait

# --- TAP --------------------------------------------------------------
n=0 failed=0
res() { sed -n "s/^$2 //p" "$work/$1.res" | head -n 1; }
line() {
	n=$((n + 1))
	case $1 in
	ok) echo "ok $n $2" ;;
	skip) echo "ok $n $2 # SKIP $3" ;;
	*) failed=$((failed + 1)); echo "not ok $n $2"; echo "# $3" ;;
	esac
}
# judge PROG LABEL CONTROL-RESULT RESULT
judge() {
	local p=$1 label=$2 ctl=$3 r=$4
	[[ -n $r ]] || r="fail: no result line"
	if [[ $r == pass ]]; then
		line ok "$p $label"
	elif [[ $ctl != pass ]]; then
		line skip "$p $label" "raw CRIU cannot either: ${ctl:-no control}"
	else
		line fail "$p $label" "${r#fail: }"
	fi
}
# cont_control PROG KEY: the control of a continue mode's half, raw
# CRIU's continue where it ran, else its dump and restore (--kill).
cont_control() {
	local r
	r=$(res "$1" "criu-cont-${2##*-}")
	[[ -n $r ]] || r=$(res "$1" criu)
	echo "$r"
}
halves() { # MODE: its result keys
	if [[ $1 == *cont* ]]; then echo "$1-orig $1-restart"; else echo "$1"; fi
}
planned=0
for p in "${progs[@]}"; do
	for m in "${MODES[@]}" $(extra_modes "$p"); do
		planned=$((planned + $(halves "$m" | wc -w)))
	done
done
echo "1..$planned"
for p in "${progs[@]}"; do
	for m in "${MODES[@]}" $(extra_modes "$p"); do
		for k in $(halves "$m"); do
			r=$(res "$p" "$k")
			case $k in
			criu|criu-cont-*)
				if [[ $r == pass ]]; then
					line ok "$p $k (raw CRIU control)"
				else
					line skip "$p $k (raw CRIU control)" "raw CRIU cannot: ${r#fail: }"
				fi
				;;
			cont-*) judge "$p" "$k" "$(cont_control "$p" "$k")" "$r" ;;
			*) judge "$p" "$k" "$(res "$p" criu)" "$r" ;;
			esac
		done
	done
	# Bash's own job notes ("Killed") are noise; anything else is shown.
	grep -v ' Killed ' "$work/$p.err" | sed 's/^/# stderr: /' | head -n 5
done
echo "# ${#progs[@]} programs, modes: ${MODES[*]}, $JOBS at a time: $((SECONDS - start)) s"
if ((failed)); then
	tar -C "$work" -czf "${CRDBG_RESULTS:-/tmp}/fidelity-work.tgz" . 2>/dev/null
	echo "# work directory saved to ${CRDBG_RESULTS:-/tmp}/fidelity-work.tgz"
fi
rm -rf "$work"
exit $((failed ? 1 : 0))
