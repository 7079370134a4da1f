// SPDX-License-Identifier: GPL-2.0
/*
 * Shell jobs (usr/crs/shell-job.c) on real processes and ptys: a session
 * with no leader in the process's PID namespace is refused before any
 * dump; a restart of a shell job on a terminal needs our controlling
 * terminal on fd 0, or takes the one handed in with --terminal-fd.
 * Each case runs in a child: it changes the child's session and fd 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "meta.h"
#include "shell-job.h"

/* A shell job's metadata: one process whose fd 1 is the pty slave at path. */
static void shell_job_meta(struct crs_meta *m, const char *path)
{
	struct crs_proc p = { .pid = 4242, .ppid = 4000, .pgid = 4000, .sid = 4000 };
	struct crs_stdio s = { .pid = 4242, .fd = 1 };

	memset(m, 0, sizeof(*m));
	m->root = 4242;
	m->shell_job = true;
	m->has_owner = true;	/* ours: the ptys the tests open are ours */
	m->owner_uid = getuid();
	m->owner_gid = getgid();
	snprintf(s.link, sizeof(s.link), "%s", path);
	crs_meta_add_proc(m, &p);
	crs_meta_add_stdio(m, &s);
}

static int open_pty(int *ret_slave, char *path, size_t len)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (master < 0 || grantpt(master) || unlockpt(master) ||
	    ptsname_r(master, path, len))
		return -1;
	*ret_slave = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	return *ret_slave < 0 ? -1 : master;
}

/* Run fn in a child of its own session without a terminal; its exit code. */
static int in_new_session(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		setsid();
		dup2(null, 0);
		_exit(fn(arg));
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

struct term_case {
	const char *path;
	int fd;			/* --terminal-fd, or -1 */
	bool others;		/* the checkpoint is another uid's */
	char err[512];
};

/* 0: accepted and fd 0 is our controlling terminal; 1: refused as expected; else 2+. */
static int try_terminal(void *arg)
{
	struct term_case *c = arg;
	struct crs_restart_opts o = { .handle = "H", .terminal_fd = c->fd,
				      .has_terminal = c->fd >= 0 };
	struct crs_meta m;
	bool replaced;
	int r;

	shell_job_meta(&m, c->path);
	if (c->others)
		m.owner_uid = getuid() + 1;
	r = crs_shell_job_terminal(&o, &m, &replaced, c->err, sizeof(c->err));
	crs_meta_free(&m);
	if (r && c->others)
		return r == -EPERM && strstr(c->err, "(TIOCSTI)") && !strchr(c->err, '\n') &&
		       tcgetsid(0) < 0 ? 1 : 2;
	if (r)
		return strstr(c->err, "restart from a terminal, or hand one in with --terminal-fd") &&
		       !strchr(c->err, '\n') ? 1 : 2;
	if (!replaced || tcgetsid(0) != getsid(0) || getsid(0) != getpid())
		return 3;
	return 0;
}

TEST(shell_job_without_a_terminal_is_refused)
{
	struct term_case c = { .path = "/dev/pts/77", .fd = -1 };

	EXPECT_EQ(1, in_new_session(try_terminal, &c));
}

/* try_terminal() on a new pty handed in as --terminal-fd. */
static int on_new_pty(bool others)
{
	struct term_case c = { .fd = -1, .others = others };
	char path[64];
	int slave, master = open_pty(&slave, path, sizeof(path)), r;

	if (master < 0)
		return -1;
	c.path = path;
	c.fd = slave;
	r = in_new_session(try_terminal, &c);
	close(slave);
	close(master);
	return r;
}

TEST(terminal_fd_becomes_the_controlling_terminal_and_stdin)
{
	EXPECT_EQ(0, on_new_pty(false));
}

/*
 * Another uid's shell job is not given our terminal, where it could type
 * into our shell (TIOCSTI): refused, and the terminal not taken.
 */
TEST(terminal_of_another_uid_than_the_owner_is_refused)
{
	EXPECT_EQ(1, on_new_pty(true));
}

/* A terminal another session has is not stolen. */
static int hold_terminal(void *arg)
{
	int fd = *(int *)arg;

	ioctl(fd, TIOCSCTTY, 0);
	pause();
	return 0;
}

TEST(terminal_fd_of_another_session_is_refused)
{
	struct term_case c = { .fd = -1 };
	char path[64];
	int slave, master = open_pty(&slave, path, sizeof(path));
	pid_t holder;

	ASSERT_LE(0, master);
	holder = fork();
	if (holder == 0) {
		setsid();
		_exit(hold_terminal(&slave));
	}
	usleep(200000);
	c.path = path;
	c.fd = slave;
	/* refused (2: not the shell-job wording, the --terminal-fd one) */
	EXPECT_EQ(2, in_new_session(try_terminal, &c));
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	close(slave);
	close(master);
}

/* Not a shell job, or one without a terminal: nothing asked, nothing changed. */
TEST(other_trees_need_nothing)
{
	struct crs_restart_opts o = { .handle = "H", .terminal_fd = -1 };
	struct crs_meta m;
	char err[256];
	bool replaced = true;

	shell_job_meta(&m, "/dev/pts/77");
	m.shell_job = false;
	EXPECT_EQ(0, crs_shell_job_terminal(&o, &m, &replaced, err, sizeof(err)));
	EXPECT_FALSE(replaced);
	crs_meta_free(&m);
	shell_job_meta(&m, "/tmp/out.log");
	EXPECT_EQ(0, crs_shell_job_terminal(&o, &m, &replaced, err, sizeof(err)));
	crs_meta_free(&m);
}

TEST(a_session_with_its_leader_is_dumpable)
{
	pid_t self = getpid();
	char err[256];

	if (getsid(0) == 0)
		SKIP(return, "this test runs in session 0 (the guest's init)");
	EXPECT_EQ(0, crs_shell_job_dumpable(&self, 1, err, sizeof(err)));
}

/*
 * The first process of a new PID namespace: its session's leader is
 * outside, its sid there 0, as CRIU would see it.
 */
TEST(session_leader_outside_the_pid_namespace_is_refused)
{
	int p[2];
	pid_t outer, inner = 0;
	char err[512];

	ASSERT_EQ(0, pipe(p));
	outer = fork();
	if (outer == 0) {
		pid_t c;

		if (unshare(CLONE_NEWPID))
			_exit(3);
		c = fork();
		if (c == 0) {
			pause();
			_exit(0);
		}
		if (write(p[1], &c, sizeof(c)) != sizeof(c))
			_exit(4);
		waitpid(c, NULL, 0);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &inner, sizeof(inner)) != sizeof(inner)) {
		waitpid(outer, NULL, 0);
		SKIP(return, "no PID namespace of our own here (needs CAP_SYS_ADMIN)");
	}
	EXPECT_EQ(-ESRCH, crs_shell_job_dumpable(&inner, 1, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "no leader in its PID namespace"));
	EXPECT_NE(NULL, strstr(err, "setsid"));
	EXPECT_EQ(NULL, strchr(err, '\n'));
	kill(inner, SIGKILL);
	waitpid(outer, NULL, 0);
}

TEST_HARNESS_MAIN
