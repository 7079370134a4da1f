// SPDX-License-Identifier: GPL-2.0
/* The /proc readers the checkpoint service builds its process tree with. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "proc.h"

/* A child in its own session with a grandchild in its own process group. */
FIXTURE(tree) {
	pid_t child;
	int fds[2];
};

FIXTURE_SETUP(tree)
{
	char c;

	ASSERT_EQ(0, pipe(self->fds));
	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (self->child == 0) {
		pid_t g;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setsid();
		g = fork();
		if (g == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			setpgid(0, 0);
			(void)!write(self->fds[1], "g", 1);
			for (;;)
				pause();
		}
		for (;;)
			pause();
	}
	ASSERT_EQ(1, read(self->fds[0], &c, 1));
}

FIXTURE_TEARDOWN(tree)
{
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	close(self->fds[0]);
	close(self->fds[1]);
}

TEST_F(tree, descendants_and_ids)
{
	struct crs_proc root, g;
	pid_t *pids;
	size_t nr;

	ASSERT_EQ(0, crs_proc_tree(self->child, true, &pids, &nr));
	ASSERT_EQ(2, nr);
	EXPECT_EQ(self->child, pids[0]);
	ASSERT_EQ(0, crs_proc_ids(self->child, &root));
	EXPECT_EQ(getpid(), root.ppid);
	EXPECT_EQ(self->child, root.sid);
	EXPECT_EQ(self->child, root.pgid);
	ASSERT_EQ(0, crs_proc_ids(pids[1], &g));
	EXPECT_EQ(self->child, g.ppid);
	EXPECT_EQ(pids[1], g.pgid);
	EXPECT_EQ(self->child, g.sid);
	free(pids);
	ASSERT_EQ(0, crs_proc_tree(self->child, false, &pids, &nr));
	EXPECT_EQ(1, nr);
	free(pids);
	EXPECT_EQ(0, crs_proc_tracer(self->child));
}

TEST(self_facts)
{
	char exe[4096];
	pid_t *tids;
	size_t nr;

	EXPECT_TRUE(crs_proc_maps(getpid(), "libc"));
	EXPECT_FALSE(crs_proc_maps(getpid(), "libcrdbg.so"));
	ASSERT_EQ(0, crs_proc_tids(getpid(), &tids, &nr));
	EXPECT_EQ(1, nr);
	EXPECT_EQ(getpid(), tids[0]);
	free(tids);
	ASSERT_EQ(0, crs_proc_exe(getpid(), exe, sizeof(exe)));
	EXPECT_NE(NULL, strstr(exe, "test_proc"));
	EXPECT_EQ('R', crs_task_state(getpid(), getpid()));
}

/* /proc/PID/NAME whole, NUL-terminated, cut to the buffer; -errno when gone. */
TEST(proc_files)
{
	char buf[65536], tiny[4];
	const char *at;
	int n;

	n = crs_proc_file(getpid(), "comm", buf, sizeof(buf));
	ASSERT_LT(0, n);
	EXPECT_EQ(0, strncmp(buf, "test_proc", 9));
	n = crs_proc_file(getpid(), "environ", buf, sizeof(buf));
	ASSERT_LE(0, n);
	EXPECT_EQ('\0', buf[n]);
	at = memchr(buf, '=', (size_t)n);
	EXPECT_TRUE(!n || at);				/* KEY=VALUE\0KEY=VALUE... */
	EXPECT_EQ(3, crs_proc_file(getpid(), "comm", tiny, sizeof(tiny)));
	EXPECT_STREQ("tes", tiny);
	EXPECT_GT(0, crs_proc_file(0x3ffffff0, "comm", buf, sizeof(buf)));
}

TEST(missing_process)
{
	struct crs_proc p;
	pid_t *pids;
	size_t nr;

	EXPECT_EQ(-ESRCH, crs_proc_tree(0x3ffffff0, true, &pids, &nr));
	EXPECT_EQ(-ESRCH, crs_proc_ids(0x3ffffff0, &p));
	EXPECT_EQ(0, crs_task_state(0x3ffffff0, 0x3ffffff0));
}

TEST_HARNESS_MAIN
