// SPDX-License-Identifier: GPL-2.0
/*
 * The coordinator's side of a job's parts (usr/crs/job-part.c) against
 * stand-in parts: shell lines run through a launch template, as a part
 * on another node is run through srun or ssh. A part's beat is no step;
 * a part that beat and then falls silent is lost after CRS_PART_SILENCE_S
 * and its launcher ended; a part that never beats (an older crdbg) is
 * waited for until the step's timeout, as before.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include <crdbg/job.h>
#include "clock.h"
#include "job-part.h"

static char *const part_argv[] = { "crdbg", "checkpoint", "1", NULL };

/* A part "on node ghost" that is the shell line sh. */
static int start_stand_in(struct job_part *p, const char *sh)
{
	char err[256];

	memset(p, 0, sizeof(*p));
	return job_part_start(p, "ghost", sh, part_argv, err, sizeof(err));
}

/* Seconds since t0, a crs_clock_ms() reading. */
static double since_s(double t0)
{
	return (crs_clock_ms() - t0) / 1000;
}

FIXTURE(part) {
	struct job_part p;
};

FIXTURE_SETUP(part)
{
	signal(SIGPIPE, SIG_IGN);
	/* nothing of its own for the teardown to end, until a test starts it */
	memset(&self->p, 0, sizeof(self->p));
	self->p.in = self->p.out = self->p.err = -1;
}

FIXTURE_TEARDOWN(part)
{
	job_parts_finish(&self->p, 1, NULL, 1);
}

TEST_F(part, beat_is_no_step)
{
	ASSERT_EQ(0, start_stand_in(&self->p,
				    "printf 'crdbg-part alive\\ncrdbg-part frozen\\ncrdbg-part alive\\n'; "
				    "exec sleep 600"));
	ASSERT_EQ(0, job_parts_wait(&self->p, 1, "frozen", 60, NULL));
	EXPECT_TRUE(job_part_at(&self->p, "frozen"));
	EXPECT_TRUE(self->p.beats);
	EXPECT_FALSE(self->p.lost);
	EXPECT_FALSE(job_part_over(&self->p));
}

/*
 * Two parts that beat once and fall silent: one whose launcher ends on
 * SIGTERM (srun passing it on), one whose launcher ignores it (a node
 * that does not answer), killed LOST_GRACE_S later. One wait for both.
 */
TEST_F_TIMEOUT(part, silent_after_a_beat_is_lost, 120)
{
	struct job_part ps[2];
	double t0 = crs_clock_ms();

	ASSERT_EQ(0, start_stand_in(&ps[0], "printf 'crdbg-part alive\\n'; exec sleep 600"));
	ASSERT_EQ(0, start_stand_in(&ps[1],
				    "trap '' TERM; printf 'crdbg-part alive\\n'; sleep 600 & wait"));
	ps[1].index = 1;
	EXPECT_EQ(0, job_parts_wait(ps, 2, "frozen", 100, NULL));
	EXPECT_GE(since_s(t0), CRS_PART_SILENCE_S);
	EXPECT_LT(since_s(t0), 100) TH_LOG("the silence was not noticed before the timeout");
	for (int i = 0; i < 2; i++) {
		EXPECT_TRUE(ps[i].lost);
		EXPECT_TRUE(job_part_over(&ps[i]));
		EXPECT_FALSE(job_part_at(&ps[i], "frozen"));
		EXPECT_NE(NULL, strstr(ps[i].last_err,
				       "no word from it for 20 s: its node is lost or hung"))
			TH_LOG("last_err: %s", ps[i].last_err);
	}
	/* the launchers were told to end, long before finish's own grace */
	job_parts_finish(ps, 2, NULL, 60);
	EXPECT_LT(since_s(t0), 60);
	ASSERT_TRUE(WIFSIGNALED(ps[0].status)) TH_LOG("status 0x%x", ps[0].status);
	EXPECT_EQ(SIGTERM, WTERMSIG(ps[0].status));
	ASSERT_TRUE(WIFSIGNALED(ps[1].status)) TH_LOG("status 0x%x", ps[1].status);
	EXPECT_EQ(SIGKILL, WTERMSIG(ps[1].status));
}

TEST_F(part, never_beats_waits_for_the_timeout)
{
	ASSERT_EQ(0, start_stand_in(&self->p, "exec sleep 600"));
	EXPECT_EQ(-ETIMEDOUT, job_parts_wait(&self->p, 1, "frozen", 2, NULL));
	EXPECT_FALSE(self->p.lost);
	EXPECT_FALSE(job_part_over(&self->p));
}

TEST_HARNESS_MAIN
