// SPDX-License-Identifier: GPL-2.0
/*
 * Restores that carry ghost files take turns on the host
 * (usr/crs/ghost-lock.c): one without ghosts never waits, a second with
 * ghosts waits until the first gives its turn back.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ghost-lock.h"
#include "kselftest_harness.h"

FIXTURE(dirs) {
	char with[64], without[64];
};

FIXTURE_SETUP(dirs)
{
	char path[128];
	int fd;

	if (geteuid())
		SKIP(return, "the turn is taken in %s, root's", CRS_GHOST_LOCK_DIR);
	strcpy(self->with, "/tmp/crdbg-ghost-XXXXXX");
	strcpy(self->without, "/tmp/crdbg-noghost-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->with));
	ASSERT_NE(NULL, mkdtemp(self->without));
	snprintf(path, sizeof(path), "%s/ghost-file-1.img", self->with);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	ASSERT_LE(0, fd);
	close(fd);
}

FIXTURE_TEARDOWN(dirs)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", self->with, self->without);
	(void)!system(cmd);
}

TEST_F(dirs, without_ghosts_no_turn)
{
	char err[256];
	int fd = 7;

	ASSERT_EQ(0, crs_ghost_lock(self->without, &fd, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(-1, fd);
	crs_ghost_unlock(&fd);
}

TEST_F(dirs, second_waits_for_the_first)
{
	char err[256], c = 0;
	int fd, p[2], st;
	pid_t child;

	ASSERT_EQ(0, crs_ghost_lock(self->with, &fd, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(p));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		int cfd;

		close(p[0]);
		if (crs_ghost_lock(self->with, &cfd, err, sizeof(err)) || cfd < 0)
			_exit(1);
		(void)!write(p[1], "t", 1);	/* its turn */
		crs_ghost_unlock(&cfd);
		_exit(0);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	usleep(300 * 1000);
	EXPECT_EQ(-1, read(p[0], &c, 1));	/* still ours */
	crs_ghost_unlock(&fd);
	fcntl(p[0], F_SETFL, 0);
	EXPECT_EQ(1, read(p[0], &c, 1));
	EXPECT_EQ('t', c);
	ASSERT_EQ(child, waitpid(child, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_HARNESS_MAIN
