// SPDX-License-Identifier: GPL-2.0
/*
 * A launcher's agent ended without running (usr/crs/agent.c): a
 * "launcher" child waits for its "agent", a process of three threads held
 * in its group stop as a restart holds one; we, their ancestor, seize the
 * agent, let it go (SIGCONT, the release) and end it. The launcher must
 * see the exit code we chose, and the agent must not have run a single
 * instruction of its own after its stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "kselftest_harness.h"
#include "proc.h"

static int ran_fd;
static volatile int held;

/* Writes once the process went into its stop: it must never run again. */
static void *spin(void *arg)
{
	(void)arg;
	for (;;) {
		struct timespec t = { .tv_nsec = 1000 * 1000 };

		nanosleep(&t, NULL);
		if (held)
			(void)!write(ran_fd, "t", 1);
	}
	return NULL;
}

static void agent(void)
{
	pthread_t t;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	pthread_create(&t, NULL, spin, NULL);
	pthread_create(&t, NULL, spin, NULL);
	held = 1;
	raise(SIGSTOP);		/* held, as a restart holds a tree */
	(void)!write(ran_fd, "m", 1);
	for (;;)
		pause();
}

/* Every thread of pid in its stop. */
static bool all_stopped(pid_t pid)
{
	pid_t *tids;
	size_t nr;
	bool all;

	if (crs_proc_tids(pid, &tids, &nr) || nr != 3) {
		if (!crs_proc_tids(pid, &tids, &nr))
			free(tids);
		return false;
	}
	all = true;
	for (size_t i = 0; i < nr; i++)
		all &= crs_task_state(pid, tids[i]) == 'T';
	free(tids);
	return all;
}

FIXTURE(launcher) {
	pid_t launcher, agent;
	int status_fd, ran_fd;
};

/* The launcher writes its agent's pid, then its wait status, on a pipe. */
FIXTURE_SETUP(launcher)
{
	int st[2], ran[2];
	char c;

	ASSERT_EQ(0, pipe(st));
	ASSERT_EQ(0, pipe2(ran, O_NONBLOCK));
	self->launcher = fork();
	ASSERT_GE(self->launcher, 0);
	if (self->launcher == 0) {
		pid_t a;
		int s = 0;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ran_fd = ran[1];
		a = fork();
		if (a == 0)
			agent();
		(void)!write(st[1], &a, sizeof(a));
		while (waitpid(a, &s, 0) < 0 && errno == EINTR)
			;
		(void)!write(st[1], &s, sizeof(s));
		_exit(0);
	}
	close(st[1]);
	close(ran[1]);
	self->status_fd = st[0];
	self->ran_fd = ran[0];
	ASSERT_EQ(sizeof(pid_t), read(st[0], &self->agent, sizeof(pid_t)));
	/* held: in its group stop, as a restart leaves a tree */
	for (int i = 0; i < 2000 && !all_stopped(self->agent); i++)
		usleep(1000);
	ASSERT_TRUE(all_stopped(self->agent));
	/* what the threads wrote on their way into the stop */
	usleep(20 * 1000);
	while (read(self->ran_fd, &c, 1) == 1)
		;
}

FIXTURE_TEARDOWN(launcher)
{
	kill(self->agent, SIGKILL);
	kill(self->launcher, SIGKILL);
	waitpid(self->launcher, NULL, 0);
}

static int launcher_saw(int fd)
{
	int s = -1;

	if (read(fd, &s, sizeof(s)) != sizeof(s))
		return -1;
	return s;
}

TEST_F(launcher, ends_with_the_code_and_runs_nothing)
{
	struct crs_agent a;
	char err[256], c;
	int s;

	ASSERT_EQ(0, crs_agent_seize(&a, self->agent, err, sizeof(err))) TH_LOG("%s", err);
	kill(self->agent, SIGCONT);	/* the release */
	usleep(100 * 1000);
	EXPECT_NE(1, read(self->ran_fd, &c, 1));	/* nothing of its own ran */
	ASSERT_EQ(0, crs_agent_end(&a, 7, 5000, err, sizeof(err))) TH_LOG("%s", err);
	s = launcher_saw(self->status_fd);
	ASSERT_TRUE(WIFEXITED(s)) TH_LOG("wait status %#x", s);
	EXPECT_EQ(7, WEXITSTATUS(s));
	EXPECT_NE(1, read(self->ran_fd, &c, 1));	/* no byte: none ran on the way out */
}

TEST_F(launcher, ends_with_zero)
{
	struct crs_agent a;
	char err[256];
	int s;

	ASSERT_EQ(0, crs_agent_seize(&a, self->agent, err, sizeof(err))) TH_LOG("%s", err);
	kill(self->agent, SIGCONT);
	ASSERT_EQ(0, crs_agent_end(&a, 0, 5000, err, sizeof(err))) TH_LOG("%s", err);
	s = launcher_saw(self->status_fd);
	ASSERT_TRUE(WIFEXITED(s));
	EXPECT_EQ(0, WEXITSTATUS(s));
}

TEST_F(launcher, killed_when_called_off)
{
	struct crs_agent a;
	char err[256];
	int s;

	ASSERT_EQ(0, crs_agent_seize(&a, self->agent, err, sizeof(err))) TH_LOG("%s", err);
	crs_agent_kill(&a);
	s = launcher_saw(self->status_fd);
	ASSERT_TRUE(WIFSIGNALED(s));
	EXPECT_EQ(SIGKILL, WTERMSIG(s));
}

TEST(no_such_agent)
{
	struct crs_agent a;
	char err[256] = "";

	EXPECT_GT(0, crs_agent_seize(&a, 0x3fffffff, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "agent"));
}

TEST_HARNESS_MAIN
