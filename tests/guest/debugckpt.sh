# SPDX-License-Identifier: GPL-2.0
# Guest group "debugckpt": the console's checkpoint and restart of a whole
# job (tests/guest/debug/debugckpt-test.sh), on crdbg.ko.

ip link set lo up 2>/dev/null
if insmod_crdbg 2>/dev/null; then
	run_tap debugckpt "$CRDBG_TOP/tests/guest/debug/debugckpt-test.sh"
else
	tap_result debugckpt 1 "crdbg.ko loads for the console checkpoint test"
fi
