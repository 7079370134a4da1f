// SPDX-License-Identifier: GPL-2.0
/*
 * The tree's stdio (usr/crs/tree-stdio.c) on real processes: what
 * checkpoint records of fds 0-2, and which endpoints restart replaces
 * with its own fds (criu --inherit-fd arguments).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "meta.h"
#include "tree-stdio.h"

/* A child whose fd 0-2 are in, out and err (-1: /dev/null); it pauses. */
static pid_t child_on(int in, int out, int err)
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(in >= 0 ? in : null, 0);
		dup2(out >= 0 ? out : null, 1);
		dup2(err >= 0 ? err : null, 2);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);	/* like a shell: nothing but its stdio */
		pause();
		_exit(0);
	}
	return pid;
}

static void add(struct crs_meta *m, pid_t pid)
{
	struct crs_proc p = { .pid = pid, .ppid = getpid(), .pgid = pid, .sid = pid };

	crs_meta_add_proc(m, &p);
}

static const struct crs_stdio *rec(const struct crs_meta *m, pid_t pid, int fd)
{
	for (size_t i = 0; i < m->nr_stdio; i++)
		if (m->stdio[i].pid == pid && m->stdio[i].fd == fd)
			return &m->stdio[i];
	return NULL;
}

static void ino_link(int fd, char *buf)
{
	struct stat st;

	fstat(fd, &st);
	sprintf(buf, "pipe:[%lu]", (unsigned long)st.st_ino);
}

/* A pipe read outside the tree is replaced; one read inside it is not. */
TEST(pipe_outside_replaced_inside_kept)
{
	int out[2], inner[2];
	char want_out[64], want_inner[64], **args;
	const struct crs_stdio *s;
	struct crs_meta m;
	pid_t pids[2];
	size_t nr;

	ASSERT_EQ(0, pipe(out));
	ASSERT_EQ(0, pipe(inner));
	ino_link(out[1], want_out);
	ino_link(inner[1], want_inner);
	pids[0] = child_on(-1, out[1], inner[1]);	/* writes out (to us) and inner */
	pids[1] = child_on(inner[0], -1, -1);		/* reads inner */
	ASSERT_GT(pids[0], 0);
	ASSERT_GT(pids[1], 0);
	usleep(100 * 1000);
	crs_meta_init(&m);
	add(&m, pids[0]);
	add(&m, pids[1]);
	ASSERT_EQ(0, crs_stdio_record(pids, 2, &m));
	s = rec(&m, pids[0], 1);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ(want_out, s->link);
	EXPECT_FALSE(s->inside);
	s = rec(&m, pids[0], 2);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ(want_inner, s->link);
	EXPECT_TRUE(s->inside);
	s = rec(&m, pids[1], 0);
	ASSERT_NE(NULL, s);
	EXPECT_TRUE(s->inside);

	ASSERT_EQ(0, crs_stdio_inherit_args(&m, -1, &args, &nr));
	ASSERT_EQ(2, nr);
	EXPECT_STREQ("--inherit-fd", args[0]);
	snprintf(want_inner, sizeof(want_inner), "fd[1]:%s", want_out);
	EXPECT_STREQ(want_inner, args[1]);
	crs_stdio_args_free(args, nr);
	crs_meta_free(&m);
	kill(pids[0], SIGKILL);
	kill(pids[1], SIGKILL);
	waitpid(pids[0], NULL, 0);
	waitpid(pids[1], NULL, 0);
}

/*
 * A FIFO that still exists is kept (CRIU reopens it); once removed it is
 * replaced, named by its path without the leading '/'. Two processes on
 * the same pipe give one argument.
 */
TEST(fifo_replaced_once_gone)
{
	char dir[] = "/tmp/crdbg-stdio-XXXXXX", fifo[64], want[80], **args;
	struct crs_meta m;
	pid_t pids[2];
	int fd, p[2];
	size_t nr;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/out", dir);
	ASSERT_EQ(0, mkfifo(fifo, 0600));
	fd = open(fifo, O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, pipe(p));
	pids[0] = child_on(-1, fd, p[1]);
	pids[1] = child_on(-1, -1, p[1]);
	usleep(100 * 1000);
	crs_meta_init(&m);
	add(&m, pids[0]);
	add(&m, pids[1]);
	ASSERT_EQ(0, crs_stdio_record(pids, 2, &m));
	ASSERT_NE(NULL, rec(&m, pids[0], 1));
	EXPECT_STREQ(fifo, rec(&m, pids[0], 1)->link);

	ASSERT_EQ(0, crs_stdio_inherit_args(&m, -1, &args, &nr));
	EXPECT_EQ(2, nr);	/* the pipe to us, once */
	EXPECT_TRUE(nr < 2 || !strstr(args[1], "out"));
	crs_stdio_args_free(args, nr);

	unlink(fifo);
	ASSERT_EQ(0, crs_stdio_inherit_args(&m, -1, &args, &nr));
	ASSERT_EQ(4, nr);
	snprintf(want, sizeof(want), "fd[1]:%s", fifo + 1);
	EXPECT_STREQ(want, args[1]);
	EXPECT_EQ(0, strncmp(args[3], "fd[2]:pipe:[", 12));
	crs_stdio_args_free(args, nr);
	crs_meta_free(&m);
	kill(pids[0], SIGKILL);
	kill(pids[1], SIGKILL);
	waitpid(pids[0], NULL, 0);
	waitpid(pids[1], NULL, 0);
	rmdir(dir);
}

/*
 * A pty slave whose master is outside the tree: the tree's terminal.
 * Dumped as external ("--external tty[RDEV:DEV]") unless the tree is a
 * shell job, and replaced by the terminal fd a restart is given.
 */
TEST(pty_outside_is_the_trees_terminal)
{
	char name[64], key[96], want[128], **args;
	const struct crs_stdio *t;
	struct crs_meta m;
	struct stat st;
	int master, slave;
	pid_t pid;
	size_t nr;

	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master) || ptsname_r(master, name, sizeof(name)))
		SKIP(return, "no pty here: %s", strerror(errno));
	slave = open(name, O_RDWR | O_NOCTTY);
	ASSERT_GE(slave, 0);
	ASSERT_EQ(0, fstat(slave, &st));
	pid = child_on(slave, slave, -1);
	ASSERT_GT(pid, 0);
	usleep(100 * 1000);
	crs_meta_init(&m);
	add(&m, pid);
	ASSERT_EQ(0, crs_stdio_record(&pid, 1, &m));
	t = crs_stdio_terminal(&m);
	ASSERT_NE(NULL, t);
	EXPECT_STREQ(name, t->link);
	EXPECT_EQ(0, t->fd);
	EXPECT_EQ((uint64_t)st.st_rdev, t->rdev);
	EXPECT_EQ((uint64_t)st.st_dev, t->dev);
	EXPECT_TRUE(crs_stdio_needs_terminal(&m));
	snprintf(key, sizeof(key), "tty[%lx:%lx]", (unsigned long)st.st_rdev,
		 (unsigned long)st.st_dev);

	ASSERT_EQ(0, crs_stdio_external_args(&m, &args, &nr));
	ASSERT_EQ(2, nr);	/* fds 0 and 1: one terminal */
	EXPECT_STREQ("--external", args[0]);
	EXPECT_STREQ(key, args[1]);
	crs_stdio_args_free(args, nr);

	ASSERT_EQ(0, crs_stdio_inherit_args(&m, -1, &args, &nr));
	EXPECT_EQ(0, nr);	/* no terminal given: CRIU is told nothing */
	crs_stdio_args_free(args, nr);
	ASSERT_EQ(0, crs_stdio_inherit_args(&m, slave, &args, &nr));
	ASSERT_EQ(2, nr);
	snprintf(want, sizeof(want), "fd[%d]:%s", slave, key);
	EXPECT_STREQ("--inherit-fd", args[0]);
	EXPECT_STREQ(want, args[1]);
	crs_stdio_args_free(args, nr);

	/* a shell job's terminal stays CRIU's --shell-job affair */
	m.shell_job = true;
	EXPECT_FALSE(crs_stdio_needs_terminal(&m));
	ASSERT_EQ(0, crs_stdio_external_args(&m, &args, &nr));
	EXPECT_EQ(0, nr);
	crs_stdio_args_free(args, nr);
	ASSERT_EQ(0, crs_stdio_inherit_args(&m, slave, &args, &nr));
	EXPECT_EQ(0, nr);
	crs_stdio_args_free(args, nr);
	crs_meta_free(&m);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(slave);
	close(master);
}

/* A pty whose master the tree holds is restored whole by CRIU: no terminal. */
TEST(pty_master_inside_is_not_a_terminal)
{
	char name[64], **args;
	struct crs_meta m;
	int master, slave;
	pid_t pids[2];
	size_t nr;

	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master) || ptsname_r(master, name, sizeof(name)))
		SKIP(return, "no pty here: %s", strerror(errno));
	slave = open(name, O_RDWR | O_NOCTTY);
	ASSERT_GE(slave, 0);
	pids[0] = child_on(slave, slave, slave);
	pids[1] = child_on(master, -1, -1);	/* the master's holder, in the tree */
	usleep(100 * 1000);
	crs_meta_init(&m);
	add(&m, pids[0]);
	add(&m, pids[1]);
	ASSERT_EQ(0, crs_stdio_record(pids, 2, &m));
	EXPECT_EQ(NULL, crs_stdio_terminal(&m));
	EXPECT_FALSE(crs_stdio_needs_terminal(&m));
	ASSERT_EQ(0, crs_stdio_external_args(&m, &args, &nr));
	EXPECT_EQ(0, nr);
	crs_stdio_args_free(args, nr);
	crs_meta_free(&m);
	kill(pids[0], SIGKILL);
	kill(pids[1], SIGKILL);
	waitpid(pids[0], NULL, 0);
	waitpid(pids[1], NULL, 0);
	close(slave);
	close(master);
}

TEST_HARNESS_MAIN
