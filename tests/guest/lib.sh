# SPDX-License-Identifier: GPL-2.0
# Helpers for guest test groups (sourced by tests/guest/run-group).

# run_tap NAME CMD...: run one test program, keep its TAP, exit status
# and seconds (NAME.seconds: what make check's time goes to). A program
# still running after CRDBG_TEST_TIMEOUT seconds is stuck: the watchdog
# keeps what shows where (NAME.hang), kills it and its descendants and
# records a failure, so a hang can never stall the group silently.
run_tap() {
	local name=$1 t0=$SECONDS limit=${CRDBG_TEST_TIMEOUT:-600} pid rc; shift
	echo "-- $name"
	# in the background (for the watchdog) but with the group's stdin, as
	# in the foreground, not /dev/null
	"$@" <&0 >"$CRDBG_RESULTS/$name.tap" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null && [ $((SECONDS - t0)) -lt "$limit" ]; do
		sleep 0.2
	done
	if kill -0 "$pid" 2>/dev/null; then
		watchdog_report "$name" "$pid" "$limit" >"$CRDBG_RESULTS/$name.hang" 2>&1
		tree_kill "$pid"
		wait "$pid"
		rc=124
		echo "not ok - watchdog: $name still running after $limit s, killed (see $name.hang)" \
			>>"$CRDBG_RESULTS/$name.tap"
	else
		wait "$pid"
		rc=$?
	fi
	echo "exit=$rc" >"$CRDBG_RESULTS/$name.exit"
	echo "$((SECONDS - t0))" >"$CRDBG_RESULTS/$name.seconds"
	cat "$CRDBG_RESULTS/$name.tap"
	[ -f "$CRDBG_RESULTS/$name.hang" ] && sed 's/^/# hang: /' "$CRDBG_RESULTS/$name.hang"
	echo "-- $name: exit $rc after $((SECONDS - t0)) s"
	return 0
}

# tree_pids PID: PID and its descendants. The test keeps its session and
# process group (a test may depend on them), so its processes are found
# by parenthood; one that was orphaned meanwhile is not.
tree_pids() {
	ps -e -o pid=,ppid= | awk -v root="$1" '
		{ kids[$2] = kids[$2] " " $1 }
		END {
			todo[1] = root; n = 1
			for (i = 1; i <= n; i++) {
				print todo[i]
				m = split(kids[todo[i]], k, " ")
				for (j = 1; j <= m; j++)
					todo[++n] = k[j]
			}
		}'
}

# watchdog_report NAME PID LIMIT: where each thread of a stuck test's
# processes is (state, wchan, kernel stack), and the kernel log's tail.
watchdog_report() {
	local p t
	echo "$1: no end after $3 s; its processes:"
	for p in $(tree_pids "$2"); do
		echo "== pid $p $(cat /proc/$p/cmdline 2>/dev/null | tr '\0' ' ')"
		for t in /proc/$p/task/*; do
			[ -d "$t" ] || continue
			echo "-- tid ${t##*/} $(grep '^State:' $t/status 2>/dev/null) wchan $(cat $t/wchan 2>/dev/null)"
			cat "$t/stack" 2>/dev/null
		done
	done
	echo "== dmesg (tail)"
	dmesg | tail -n 40
}

# tree_kill PID: SIGKILL PID and its descendants, stopped first so that
# none forks anew meanwhile.
tree_kill() {
	local pids
	pids=$(tree_pids "$1")
	kill -STOP $pids 2>/dev/null
	kill -KILL $pids 2>/dev/null
}

# tap_result NAME OK DESCRIPTION: record a single shell-level check as TAP.
tap_result() {
	local name=$1 ok=$2 desc=$3
	{ echo "1..1"; if [ "$ok" = 0 ]; then echo "ok 1 $desc"; else echo "not ok 1 $desc"; fi; } \
		>"$CRDBG_RESULTS/$name.tap"
	echo "exit=$ok" >"$CRDBG_RESULTS/$name.exit"
	cat "$CRDBG_RESULTS/$name.tap"
}

# insmod_crdbg: load the module from the build tree.
insmod_crdbg() {
	lsmod | grep -q '^crdbg ' || insmod "$CRDBG_BUILD/kmod/crdbg.ko"
}

# check_kernel_log GROUP: the group fails if the kernel warned or oopsed.
check_kernel_log() {
	local bad
	bad=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|kernel BUG|UBSAN|KASAN|refcount_t' | head -n 5)
	if [ -z "$bad" ]; then
		tap_result "$1-kernel-log" 0 "kernel log has no WARN/BUG/oops after $1"
	else
		echo "$bad" >"$CRDBG_RESULTS/$1-kernel-log.dmesg"
		dmesg >"$CRDBG_RESULTS/$1-dmesg.full"
		tap_result "$1-kernel-log" 1 "kernel log has no WARN/BUG/oops after $1: $(echo "$bad" | head -n 1)"
	fi
}
