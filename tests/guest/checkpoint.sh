# SPDX-License-Identifier: GPL-2.0
# Guest group "checkpoint": crdbg checkpoint / restart / list / rm over CRIU
# on both freeze backends (tests/crs/test_checkpoint.sh), and job checkpoints
# (tests/crs/test_job.sh: the cut, the manifest, the restart barrier),
# and the tree's stdio at restart (tests/crs/test_stdio.sh: a pipe whose
# reader and a FIFO that are gone, replaced by crdbg restart's stdout),
# and terminals at restart (tests/crs/test_terminal.sh: a pty of its own
# for a session leader, a job's second terminal through --join), and the
# root's parent, session and group outside the tree (test_lineage.sh),
# and shell jobs (test_shelljob.sh: a program a shell started on its
# terminal, restarted on another terminal or on one handed in as an fd;
# ptrace only: what it tests is CRIU's and the terminal's, not the freeze),
# and the files the program writes and the pids it needs at restart
# (tests/crs/test_files.sh: an appended log put back, its tail kept
# aside; a change that cannot be undone refused before anything is
# restored; a pid still a zombie's waited for; about a minute a backend).
# A few minutes on an idle machine; each program may take 20 min and the
# guest 40 under load (test_checkpoint.sh passed 600 s at load 20; the
# whole group took 23 min at load 14, test_terminal.sh 2.5 min of it per
# backend).
# vm-options: --timeout 2400
# vm-time: 700
export CRDBG_TEST_TIMEOUT=1200

ip link set lo up 2>/dev/null
run_tap checkpoint-ptrace "$CRDBG_TOP/tests/crs/test_checkpoint.sh" ptrace
run_tap job-ptrace "$CRDBG_TOP/tests/crs/test_job.sh" ptrace
run_tap stdio-ptrace "$CRDBG_TOP/tests/crs/test_stdio.sh" ptrace
run_tap lineage-ptrace "$CRDBG_TOP/tests/crs/test_lineage.sh" ptrace
run_tap terminal-ptrace "$CRDBG_TOP/tests/crs/test_terminal.sh" ptrace
run_tap shelljob-ptrace "$CRDBG_TOP/tests/crs/test_shelljob.sh" ptrace
run_tap files-ptrace "$CRDBG_TOP/tests/crs/test_files.sh" ptrace
if insmod_crdbg 2>/dev/null; then
	run_tap checkpoint-kmod "$CRDBG_TOP/tests/crs/test_checkpoint.sh" kmod
	run_tap job-kmod "$CRDBG_TOP/tests/crs/test_job.sh" kmod
	run_tap stdio-kmod "$CRDBG_TOP/tests/crs/test_stdio.sh" kmod
	run_tap lineage-kmod "$CRDBG_TOP/tests/crs/test_lineage.sh" kmod
	run_tap terminal-kmod "$CRDBG_TOP/tests/crs/test_terminal.sh" kmod
	run_tap files-kmod "$CRDBG_TOP/tests/crs/test_files.sh" kmod
else
	tap_result checkpoint-kmod 1 "crdbg.ko loads for the kmod-backend checkpoint tests"
fi
