# SPDX-License-Identifier: GPL-2.0
# Guest group "cheapckpt": checkpoints cheap enough to take at every stop:
# incremental chains (tests/crs/test_incremental.sh), the pre-dump of a
# running tree (tests/crs/test_pre_dump.sh) and lazy restarts
# (tests/crs/test_lazy.sh) on both freeze backends.
# vm-options: --mem 3072 --timeout 2400
# vm-time: 437

ip link set lo up 2>/dev/null
run_tap incremental-ptrace "$CRDBG_TOP/tests/crs/test_incremental.sh" ptrace
run_tap predump-ptrace "$CRDBG_TOP/tests/crs/test_pre_dump.sh" ptrace
run_tap lazy-ptrace "$CRDBG_TOP/tests/crs/test_lazy.sh" ptrace
if insmod_crdbg 2>/dev/null; then
	run_tap incremental-kmod "$CRDBG_TOP/tests/crs/test_incremental.sh" kmod
	run_tap predump-kmod "$CRDBG_TOP/tests/crs/test_pre_dump.sh" kmod
	run_tap lazy-kmod "$CRDBG_TOP/tests/crs/test_lazy.sh" kmod
else
	tap_result incremental-kmod 1 "crdbg.ko loads for the kmod-backend incremental tests"
fi
