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

TEST_HARNESS_MAIN
