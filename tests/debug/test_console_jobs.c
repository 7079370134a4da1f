// SPDX-License-Identifier: GPL-2.0
/*
 * The console on real jobs (Open MPI programs under mpirun, prog_debug
 * copies): what a user of gdb4hpc, TotalView or DDT expects on the first
 * day. One test per behaviour: the debugger hold that cannot expire, the
 * console's breakpoint table, events announced when they happen, dead
 * ranks leaving the default set, gdb's own behaviour carried through,
 * status and stacks at scale, the terminal's habits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "console_run.h"

#ifndef MPI_JOBS
#define MPI_JOBS "build/tests/debug/mpi_jobs"
#endif

FIXTURE(jobs) {
	struct run r;
};

FIXTURE_SETUP(jobs)
{
	if (!have_gdb())
		SKIP(return, "gdb is not installed");
	if (access(CRDBG, X_OK) || access(DEBUG_PROG, X_OK))
		SKIP(return, "%s or %s not built", CRDBG, DEBUG_PROG);
}

FIXTURE_TEARDOWN(jobs)
{
	run_free(&self->r);
}

/*
 * Open MPI's debugger hold cannot expire: with a PMIx event eviction
 * time of 5 s the release event is gone long before the first continue,
 * yet the job runs to its end.
 */
TEST_F_TIMEOUT(jobs, mpir_hold_outlives_eviction, 300)
{
	const char *argv[] = { CRDBG, "debug", "--", "mpirun", "--oversubscribe", "-n", "3",
			       MPI_PROG, NULL };
	static const char go[] = "continue\necho @@END\nquit\n";
	struct run *r = &self->r;

	if (!have_mpi())
		SKIP(return, "no mpirun, or %s not built (mpicc)", MPI_PROG);
	mpi_env();
	setenv("PMIX_MCA_pmix_event_eviction_time", "5", 1);
	ASSERT_EQ(0, run_start(r, argv, true));
	unsetenv("PMIX_MCA_pmix_event_eviction_time");
	ASSERT_TRUE(run_read_until(r, "stopped: attached")) TH_LOG("%s", r->buf);
	/* Well past the eviction time before the first continue. */
	sleep(15);
	ASSERT_EQ((ssize_t)strlen(go), write(r->in, go, strlen(go)));
	ASSERT_TRUE(run_read_until(r, "@@END\n")) TH_LOG("%s", r->buf);
	EXPECT_EQ(0, run_finish(r)) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "[2] mpi rank 2 of 3 value 4\n")) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "[0-2]: exited: code 0\n")) TH_LOG("%s", r->buf);
}

/*
 * One breakpoint table: a subset breakpoint first (so that the ranks'
 * gdbs number the next one differently, as the launcher's hold already
 * did), then delete, condition, tbreak and info breakpoints on console
 * numbers; stops at one breakpoint merge over ranks whatever gdb's
 * number is there.
 */
TEST_F_TIMEOUT(jobs, mpi_breakpoint_table, 300)
{
	char path[] = "/tmp/crdbg-batch-XXXXXX";
	static const char script[] =
		"[1] break mpi_jobs.c:step\n"
		"break mpi_jobs.c:step if rank != 1\n"
		"info breakpoints\n"
		"continue\n"
		"delete 1\n"
		"[1] delete 2\n"
		"condition 2 i == 2\n"
		"tbreak MPI_Barrier\n"
		"continue\n"
		"[0,2] print i\n"
		"info breakpoints\n"
		"[0,2] continue\n"
		"delete\n"
		"info breakpoints\n"
		"continue\n";
	const char *a[] = { "--batch", path, "--", "mpirun", "--oversubscribe", "-n", "3",
			    MPI_JOBS, NULL };
	const char *out;

	if (!have_mpi() || access(MPI_JOBS, X_OK))
		SKIP(return, "no mpirun, or %s not built (mpicc)", MPI_JOBS);
	mpi_env();
	ASSERT_EQ(0, write_script(path, script));
	EXPECT_EQ(0, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	unlink(path);
	out = self->r.buf;
	EXPECT_NE(NULL, strstr(out, "\n[1]: breakpoint 1 at ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0-2]: breakpoint 2 at ")) TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^1 +breakpoint +keep +y +\\[1\\] +at .*mpi_jobs.c:[0-9]+$"))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^2 +breakpoint +keep +y +\\[0-2\\] +at .*mpi_jobs.c:[0-9]+$"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n\tstop only if rank != 1\n")) TH_LOG("%s", out);
	/* Each rank stops at the console's breakpoint, whatever gdb calls it. */
	EXPECT_NE(NULL, strstr(out, "\n[0,2]: stopped: breakpoint 2, step at ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[1]: stopped: breakpoint 1, step at ")) TH_LOG("%s", out);
	/* delete 1 and [1] delete 2: rank 1 runs on to the tbreak; */
	EXPECT_TRUE(has_line(out, "^\\[1\\]: stopped: breakpoint 3, (PMPI|MPI)_Barrier"))
		TH_LOG("%s", out);
	/* the condition reached every rank's own gdb breakpoint. */
	EXPECT_NE(NULL, strstr(out, "\n[0,2]: stopped: breakpoint 2, step at ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0,2]: i = 2\n")) TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^2 +breakpoint +keep +y +\\[0,2\\] "))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n\tstop only if i == 2\n")) TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^3 +breakpoint +del +y +\\[0,2\\] +MPI_Barrier$"))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[0,2\\]: stopped: breakpoint 3, (PMPI|MPI)_Barrier"))
		TH_LOG("%s", out);
	/* delete without numbers, in batch: all of them, without asking. */
	EXPECT_NE(NULL, strstr(out, "\nNo breakpoints or watchpoints.\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0-2]: exited: code 0\n")) TH_LOG("%s", out);
}

/*
 * A rank that segfaults while the others wait in a barrier: announced at
 * once with its signal and place, the others stopped (stopall is on by
 * default) and inspectable; resumed, it dies, the launcher kills the
 * others, and they are shown as gone, not stopped. A crashing program
 * is not a failed session: exit 0.
 */
TEST_F_TIMEOUT(jobs, mpi_rank_segv_stops_the_others, 300)
{
	char path[] = "/tmp/crdbg-batch-XXXXXX";
	static const char script[] =
		"continue\n"
		"print total\n"
		"stacks\n"
		"stacks -l\n"
		"continue\n"	/* Open MPI's handler raises it again */
		"continue\n"
		"status\n";
	const char *a[] = { "--batch", path, "--", "mpirun", "--oversubscribe", "-n", "3",
			    MPI_JOBS, "segv", NULL };
	const char *out;

	if (!have_mpi() || access(MPI_JOBS, X_OK))
		SKIP(return, "no mpirun, or %s not built (mpicc)", MPI_JOBS);
	mpi_env();
	ASSERT_EQ(0, write_script(path, script));
	EXPECT_EQ(0, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	unlink(path);
	out = self->r.buf;
	EXPECT_TRUE(has_line(out, "^\\[1\\]: stopped: signal SIGSEGV, crash at .*mpi_jobs\\.c:[0-9]+$"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\nstopping the other ranks [0,2] (stopall off leaves them running)\n"
			       "[0,2]: stopped: signal SIGINT, "))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0]: total = 3\n[1]: total = 33\n[2]: total = 63\n"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n  [1] crash\n")) TH_LOG("%s", out);
	/* stacks -l: one line of main for rank 1, another for the others. */
	EXPECT_TRUE(has_line(out, "^\\[1\\] main at .*mpi_jobs\\.c:[0-9]+$")) TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[0,2\\] main at .*mpi_jobs\\.c:[0-9]+$")) TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^  \\[1\\] crash at .*mpi_jobs\\.c:[0-9]+$")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[1]: exited: signal SIGSEGV\n")) TH_LOG("%s", out);
	/* Killed by the launcher: gone, not stopped at its signal. */
	EXPECT_TRUE(has_line(out, "^\\[(0,2|0|2)\\]: exited: signal SIG(TERM|KILL)$"))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[(0,2|0)\\] +exited +signal SIG(TERM|KILL)$")) TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[1\\] +exited +signal SIGSEGV$")) TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[(0,2|2)\\] +exited +signal SIG(TERM|KILL)$")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "stopped: signal SIGCONT")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "stopped: signal SIGTERM")) TH_LOG("%s", out);
}

/*
 * A rank that exits with code 3 while the others run: announced, the
 * others stopped; then it has left the default set (print goes to the
 * live ranks without an error for it), status says "exited: code 3";
 * continued, the others are ended by the launcher.
 */
TEST_F_TIMEOUT(jobs, mpi_rank_exit_leaves_the_set, 300)
{
	char path[] = "/tmp/crdbg-batch-XXXXXX";
	static const char script[] =
		"stopall\n"
		"continue\n"
		"print total\n"
		"status\n"
		"continue\n";
	const char *a[] = { "--batch", path, "--", "mpirun", "--oversubscribe", "-n", "3",
			    MPI_JOBS, "exit", NULL };
	const char *out;

	if (!have_mpi() || access(MPI_JOBS, X_OK))
		SKIP(return, "no mpirun, or %s not built (mpicc)", MPI_JOBS);
	mpi_env();
	ASSERT_EQ(0, write_script(path, script));
	EXPECT_EQ(0, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	unlink(path);
	out = self->r.buf;
	EXPECT_NE(NULL, strstr(out, "\nstopall: on (a faulting rank stops the others)\n"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[1]: exited: code 3\n"
			       "stopping the other ranks [0,2] (stopall off leaves them running)\n"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n(crdbg) print total\n[0]: total = 3\n[2]: total = 63\n(crdbg) "))
		TH_LOG("%s", out);
	/* status: one row per state and place. */
	EXPECT_TRUE(has_line(out, "^\\[0,2\\] +stopped +signal SIGINT, ")) TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[1\\] +exited +code 3$")) TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[(0,2|0)\\]: exited: signal SIG(TERM|KILL)$")) TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[(0,2|2)\\]: exited: signal SIG(TERM|KILL)$")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "error")) TH_LOG("%s", out);
}

/*
 * gdb's behaviour carried through, and values at scale, on 5 MPI ranks:
 * a watchpoint shows the old and new value, finish the returned value,
 * p/x and assignments print as print does (once, "EXPR = VALUE"), many
 * differing values come with a summary first, status merges the ranks
 * in one place, run is refused in one line.
 */
TEST_F_TIMEOUT(jobs, mpi_gdb_behaviour_and_values, 300)
{
	char path[] = "/tmp/crdbg-batch-XXXXXX";
	static const char script[] =
		"break step if i == 1\n"
		"continue\n"
		"watch total\n"
		"continue\n"
		"delete 2\n"
		"finish\n"
		"print total\n"
		"p/x total\n"
		"print total = 7\n"
		"status\n"
		"delete\n"
		"continue\n"
		"run\n";
	const char *a[] = { "--batch", path, "--", "mpirun", "--oversubscribe", "-n", "5",
			    MPI_JOBS, NULL };
	const char *out;

	if (!have_mpi() || access(MPI_JOBS, X_OK))
		SKIP(return, "no mpirun, or %s not built (mpicc)", MPI_JOBS);
	mpi_env();
	ASSERT_EQ(0, write_script(path, script));
	/* run refused: the one failure of the batch. */
	EXPECT_EQ(1, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	unlink(path);
	out = self->r.buf;
	EXPECT_NE(NULL, strstr(out, "\n[0-4]: watchpoint 2: total\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[1]: stopped: watchpoint 2: total = 21 (was 10), step at "))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[1\\]: stopped: function-finished, main at "
			     ".*mpi_jobs\\.c:[0-9]+, returned 11$"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n5 distinct values over 5 ranks; min 1 [0], max 81 [4]:\n"
			       "[0]: total = 1\n[1]: total = 21\n"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[1]: total = 0x15\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n(crdbg) print total = 7\n[0-4]: total = 7\n(crdbg) "))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_line(out, "^\\[0-4\\] +stopped +function-finished, main at "))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[0-4]: exited: code 0\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\nrun: an MPI job started by its launcher runs once per session"))
		TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "error")) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
