# SPDX-License-Identifier: GPL-2.0
# Guest group "debugckpt": the console's checkpoint and restart of a whole
# job on crdbg.ko: crdbg debug -n N jobs (tests/debug/test_debugckpt.sh)
# and an Open MPI job acquired through MPIR (test_debugmpi.sh, on either
# freeze backend), and the console's checkpoint timeline (auto-checkpoint,
# restart N, back, checkpoint-keep: test_timeline.sh, on either backend),
# and Debian's LAMMPS, whose log grows past a checkpoint and is put back
# at the restart (test_files_lammps.sh).
# About 35 min of TCG on this loaded machine: more than the default 900 s.
# vm-options: --timeout 2400
# vm-time: 1000

ip link set lo up 2>/dev/null
if insmod_crdbg 2>/dev/null; then
	# 452 s on an idle machine, over 600 beside make check's other lane.
	CRDBG_TEST_TIMEOUT=1200 run_tap debugckpt "$CRDBG_TOP/tests/debug/test_debugckpt.sh"
	run_tap debugmpi-kmod "$CRDBG_TOP/tests/debug/test_debugmpi.sh" kmod
	run_tap debugmpi-ptrace "$CRDBG_TOP/tests/debug/test_debugmpi.sh" ptrace
	run_tap files-lammps "$CRDBG_TOP/tests/debug/test_files_lammps.sh"
	# About 7 min each on an idle machine; over 10 under load.
	CRDBG_TEST_TIMEOUT=1200 run_tap timeline-kmod "$CRDBG_TOP/tests/debug/test_timeline.sh" kmod
	CRDBG_TEST_TIMEOUT=1200 run_tap timeline-ptrace "$CRDBG_TOP/tests/debug/test_timeline.sh" ptrace
else
	tap_result debugckpt 1 "crdbg.ko loads for the console checkpoint tests"
fi
