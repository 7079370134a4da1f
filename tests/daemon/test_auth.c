// SPDX-License-Identifier: GPL-2.0
/*
 * The service's authorization of a process tree (usr/daemon/auth.c) on
 * real processes of another uid: a tree of the caller's passes; one with
 * a task that made itself not dumpable is refused naming that task;
 * another user's tree, and a proof of another process, are refused.
 * Needs root (it starts processes as other uids); without it every test
 * is a SKIP that says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "auth.h"

#define CALLER	54321
#define OTHER	54322

/*
 * A tree run as CALLER: a leader and one child, which first makes itself
 * not dumpable if asked. Both wait for SIGKILL. The child's pid comes
 * back through the pipe once it is what it was asked to be.
 */
enum child_kind { CHILD_PLAIN, CHILD_NOT_DUMPABLE };

struct tree {
	pid_t leader, child;
};

static int start_tree(struct tree *t, enum child_kind kind)
{
	int p[2];

	if (pipe(p))
		return -errno;
	t->leader = fork();
	if (t->leader < 0)
		return -errno;
	if (t->leader == 0) {
		pid_t c;

		close(p[0]);
		/* dumpable again once its creds changed, as after an exec of the user's */
		if (setresgid(CALLER, CALLER, CALLER) || setresuid(CALLER, CALLER, CALLER) ||
		    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(1);
		c = fork();
		if (c == 0) {
			if (kind == CHILD_NOT_DUMPABLE && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
				_exit(1);
			c = getpid();
			if (write(p[1], &c, sizeof(c)) != sizeof(c))
				_exit(1);
			for (;;)
				pause();
		}
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &t->child, sizeof(t->child)) != sizeof(t->child)) {
		close(p[0]);
		return -EIO;
	}
	close(p[0]);
	return 0;
}

static void stop_tree(struct tree *t)
{
	if (t->child > 0)
		kill(t->child, SIGKILL);
	if (t->leader > 0) {
		kill(t->leader, SIGKILL);
		waitpid(t->leader, NULL, 0);
	}
}

/* The caller's proof of t->leader: its pidfd and an fd of its /proc/PID/mem. */
static void proof(pid_t pid, int *pidfd, int *memfd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	*pidfd = syscall(SYS_pidfd_open, pid, 0);
	*memfd = open(path, O_RDONLY | O_CLOEXEC);
}

FIXTURE(auth) {
	struct tree t;
	int pidfd, memfd;
	char err[512];
};

FIXTURE_SETUP(auth)
{
	memset(&self->t, 0, sizeof(self->t));
	self->pidfd = self->memfd = -1;
	self->err[0] = 0;
	if (geteuid() != 0)
		SKIP(return, "needs root: it starts processes as uid %d", CALLER);
}

FIXTURE_TEARDOWN(auth)
{
	stop_tree(&self->t);
	if (self->pidfd >= 0)
		close(self->pidfd);
	if (self->memfd >= 0)
		close(self->memfd);
}

/* The service's answer to uid asking for the tree of self->t.leader with self's proof. */
static int authorize(FIXTURE_DATA(auth) *self, uid_t uid, bool descendants)
{
	struct crdbgd_caller c = { .uid = uid, .gid = uid };

	return crdbgd_auth_tree(&c, self->t.leader, descendants, self->pidfd, self->memfd,
				self->err, sizeof(self->err));
}

TEST_F(auth, callers_tree_passes)
{
	ASSERT_EQ(0, start_tree(&self->t, CHILD_PLAIN));
	proof(self->t.leader, &self->pidfd, &self->memfd);
	ASSERT_LE(0, self->pidfd);
	ASSERT_LE(0, self->memfd);
	EXPECT_EQ(0, authorize(self, CALLER, true)) TH_LOG("%s", self->err);
}

TEST_F(auth, child_not_dumpable_is_refused_by_name)
{
	char want[64];

	ASSERT_EQ(0, start_tree(&self->t, CHILD_NOT_DUMPABLE));
	proof(self->t.leader, &self->pidfd, &self->memfd);
	EXPECT_EQ(-EPERM, authorize(self, CALLER, true));
	snprintf(want, sizeof(want), "pid %d is not dumpable", (int)self->t.child);
	EXPECT_NE(NULL, strstr(self->err, want)) TH_LOG("%s", self->err);
	/* without its descendants the leader alone is the caller's */
	EXPECT_EQ(0, authorize(self, CALLER, false)) TH_LOG("%s", self->err);
}

TEST_F(auth, another_users_tree_is_refused)
{
	ASSERT_EQ(0, start_tree(&self->t, CHILD_PLAIN));
	proof(self->t.leader, &self->pidfd, &self->memfd);
	EXPECT_EQ(-EPERM, authorize(self, OTHER, true));
	EXPECT_NE(NULL, strstr(self->err, "runs as another user")) TH_LOG("%s", self->err);
}

TEST_F(auth, proof_of_another_process_is_refused)
{
	ASSERT_EQ(0, start_tree(&self->t, CHILD_PLAIN));
	/* the proof names the child, the request the leader */
	proof(self->t.child, &self->pidfd, &self->memfd);
	EXPECT_EQ(-EPERM, authorize(self, CALLER, true));
	EXPECT_NE(NULL, strstr(self->err, "pidfd given is not of this process")) TH_LOG("%s",
											 self->err);
}

TEST_HARNESS_MAIN
