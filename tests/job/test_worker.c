// SPDX-License-Identifier: GPL-2.0
/*
 * The part worker (usr/job/worker.c) in a child whose stdin and stdout are
 * pipes to the test, as they are to a coordinator: it writes only the
 * codec's messages, takes only the order that goes on, and a failure is a
 * failed step with its errno and reason.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include <crdbg/job-part.h>

/* fn() in a child on our pipes: *to is its stdin, *from its stdout. */
static pid_t run(int (*fn)(void), int *to, int *from)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe(in) || pipe(out))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		_exit(fn());
	}
	close(in[0]);
	close(out[1]);
	*to = in[1];
	*from = out[0];
	return pid;
}

/* Its next line that is not its beat, parsed: 0, or the parser's error. */
static int next_step(FILE *f, struct job_part_msg *m)
{
	char line[JOB_PART_LINE_MAX + 2];
	int r;

	while (fgets(line, sizeof(line), f)) {
		r = job_part_msg_parse(line, strlen(line), m);
		if (r || m->step != JOB_STEP_ALIVE)
			return r;
	}
	return -EPIPE;
}

static int exit_status(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int frozen_then_exit(void)
{
	job_worker_begin();
	return job_worker_frozen(NULL) ? 3 : 0;
}

static int fails(void)
{
	job_worker_failed(-ESRCH, "no process with pid %d", 999999);
	return 1;
}

/* A checkpoint part that said frozen and waits for its order. */
FIXTURE(frozen) {
	pid_t pid;
	int to;
	FILE *from;
};

FIXTURE_SETUP(frozen)
{
	struct job_part_msg m;
	int from;

	self->pid = run(frozen_then_exit, &self->to, &from);
	ASSERT_LT(0, self->pid);
	self->from = fdopen(from, "r");
	ASSERT_NE(NULL, self->from);
	ASSERT_EQ(0, next_step(self->from, &m));
	ASSERT_EQ(JOB_STEP_FROZEN, m.step);
}

FIXTURE_TEARDOWN(frozen)
{
	if (self->to >= 0)
		close(self->to);
	if (self->from)
		fclose(self->from);
}

TEST_F(frozen, waits_for_dump)
{
	ASSERT_EQ(5, write(self->to, "dump\n", 5));
	EXPECT_EQ(0, exit_status(self->pid));
}

TEST_F(frozen, refuses_another_order)
{
	/* release is not the order after frozen: called off */
	ASSERT_EQ(8, write(self->to, "release\n", 8));
	EXPECT_EQ(3, exit_status(self->pid));
}

TEST_F(frozen, closed_orders_call_it_off)
{
	close(self->to);	/* its coordinator is gone */
	self->to = -1;
	EXPECT_EQ(3, exit_status(self->pid));
}

TEST(failure_is_a_typed_step)
{
	char line[JOB_PART_LINE_MAX + 2];
	struct job_part_msg m;
	int to, from;
	pid_t pid = run(fails, &to, &from);
	FILE *f;

	ASSERT_LT(0, pid);
	f = fdopen(from, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	ASSERT_EQ(0, job_part_msg_parse(line, strlen(line), &m)) TH_LOG("%s", line);
	EXPECT_EQ(JOB_STEP_FAILED, m.step);
	EXPECT_EQ(ESRCH, m.failed.err);
	EXPECT_STREQ("no process with pid 999999", m.failed.why);
	/* nothing else on its stdout */
	EXPECT_EQ(NULL, fgets(line, sizeof(line), f));
	EXPECT_EQ(1, exit_status(pid));
	close(to);
	fclose(f);
}

TEST_HARNESS_MAIN
