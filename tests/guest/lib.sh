# SPDX-License-Identifier: GPL-2.0
# Helpers for guest test groups (sourced by tests/guest/run-group).

# run_tap NAME CMD...: run one test program, keep its TAP, exit status
# and seconds (NAME.seconds: what make check's time goes to).
run_tap() {
	local name=$1 t0=$SECONDS; shift
	echo "-- $name"
	timeout "${CRDBG_TEST_TIMEOUT:-600}" "$@" >"$CRDBG_RESULTS/$name.tap" 2>&1
	local rc=$?
	echo "exit=$rc" >"$CRDBG_RESULTS/$name.exit"
	echo "$((SECONDS - t0))" >"$CRDBG_RESULTS/$name.seconds"
	cat "$CRDBG_RESULTS/$name.tap"
	echo "-- $name: exit $rc after $((SECONDS - t0)) s"
	return 0
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
