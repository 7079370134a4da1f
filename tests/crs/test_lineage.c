// SPDX-License-Identifier: GPL-2.0
/*
 * The lineage keeper (usr/crs/lineage.c, lineage-keeper.c) on the host,
 * with real processes and no CRIU: made with the old parent's pid in a
 * session led by the old session's pid, it runs what it is asked as its
 * own child with exactly the fds given, reports exits, serves a second
 * restart of the same lineage, refuses an impostor's name, a malformed
 * request and another uid, and ends once nothing is left. Needs root
 * (clone3 set_tid); test_lineage.sh covers CRIU's side in the guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "lineage.h"
#include "lineage-wire.h"

static int read_int(const char *path, int dflt)
{
	FILE *f = fopen(path, "re");
	int v = dflt;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

/*
 * A pid number nobody has, below before (0: anywhere). The kernel hands
 * out pids upwards from the last one it gave (ns_last_pid) and wraps at
 * pid_max: the free numbers just behind that one are the last it hands
 * out again, where one ahead of it can go to any process forked before
 * the test makes its own (a busy make check forks thousands).
 */
static pid_t free_pid(pid_t before)
{
	int max = read_int("/proc/sys/kernel/pid_max", 32768);
	int last = read_int("/proc/sys/kernel/ns_last_pid", max - 1);

	if (!before || before > last)
		before = last;
	for (pid_t p = before - 1; p > 300; p--)	/* 300: RESERVED_PIDS */
		if (kill(p, 0) && errno == ESRCH)
			return p;
	for (pid_t p = max - 1; p > last + 1000; p--)
		if (kill(p, 0) && errno == ESRCH)
			return p;
	return -1;
}

/* Fields 4 (ppid), 5 (pgrp) and 6 (session) of /proc/PID/stat. */
static int proc_ids(pid_t pid, pid_t *ppid, pid_t *pgid, pid_t *sid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = (int)fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');
	return p && sscanf(p + 2, "%*c %d %d %d", ppid, pgid, sid) == 3 ? 0 : -1;
}

static bool gone(pid_t pid)
{
	for (int i = 0; i < 500; i++) {
		if (kill(pid, 0) && errno == ESRCH)
			return true;
		usleep(10 * 1000);
	}
	return false;
}

/* A connection to the keeper's name, no questions asked. */
static int raw_connect(const struct crs_lineage_want *w)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0), n;

	n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "crdbg-lineage-%d-%d", w->ppid,
		     w->sid);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)))
		return -1;
	return fd;
}

static char *const sleep_argv[] = { "/bin/sleep", "5", NULL };

FIXTURE(lineage)
{
	struct crs_lineage_want w;
	struct crs_lineage l;
};

FIXTURE_SETUP(lineage)
{
	struct crs_lineage init = CRS_LINEAGE_INIT;

	if (geteuid())
		SKIP(return, "clone3 set_tid needs root");
	self->l = init;
	self->w.sid = free_pid(0);
	self->w.ppid = free_pid(self->w.sid);
	self->w.pgid = self->w.sid;
	self->w.root = 1;
	ASSERT_LT(0, self->w.sid);
	ASSERT_LT(0, self->w.ppid);
}

FIXTURE_TEARDOWN(lineage)
{
	crs_lineage_close(&self->l, true);
}

TEST_F(lineage, child_of_the_old_parent_in_the_old_session)
{
	char why[256] = "";
	int null = open("/dev/null", O_RDWR), fds[1] = { null }, targets[1] = { 0 }, st;
	pid_t ppid, pgid, sid, child;

	ASSERT_EQ(0, crs_lineage_open(&self->l, &self->w, why, sizeof(why))) TH_LOG("%s", why);
	EXPECT_LT(0, self->l.made);
	child = crs_lineage_spawn(&self->l, sleep_argv, NULL, fds, targets, 1);
	ASSERT_LT(0, child);
	ASSERT_EQ(0, proc_ids(child, &ppid, &pgid, &sid));
	EXPECT_EQ(self->w.ppid, ppid);
	EXPECT_EQ(self->w.sid, sid);
	EXPECT_EQ(self->w.sid, pgid);
	kill(child, SIGKILL);
	ASSERT_EQ(1, crs_lineage_wait(&self->l, child, &st, 10000));
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	close(null);
}

TEST_F(lineage, exactly_the_fds_given_and_the_exit_status)
{
	char *const argv[] = { "/bin/sh", "-c", "echo \"$GREETING\" >&5; ls /proc/self/fd >&5; exit 7",
			       NULL };
	char *const env[] = { "GREETING=hello", NULL };
	char why[256] = "", out[256] = "";
	int p[2], fds[1], targets[1] = { 5 }, st, n, total = 0;
	pid_t child;

	ASSERT_EQ(0, pipe(p));
	fds[0] = p[1];
	ASSERT_EQ(0, crs_lineage_open(&self->l, &self->w, why, sizeof(why))) TH_LOG("%s", why);
	child = crs_lineage_spawn(&self->l, argv, env, fds, targets, 1);
	ASSERT_LT(0, child);
	close(p[1]);
	while ((n = read(p[0], out + total, sizeof(out) - 1 - total)) > 0)
		total += n;
	out[total] = '\0';
	/* its fds: 0-2 the keeper's /dev/null, 5, and ls's own directory fd */
	EXPECT_EQ(0, strncmp(out, "hello\n0\n1\n2\n", 12)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n5\n"));
	ASSERT_EQ(1, crs_lineage_wait(&self->l, child, &st, 10000));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	close(p[0]);
}

TEST_F(lineage, a_second_restart_shares_the_keeper)
{
	struct crs_lineage second = CRS_LINEAGE_INIT;
	int null = open("/dev/null", O_RDWR), fds[1] = { null }, targets[1] = { 0 }, st;
	pid_t ppid, pgid, sid, a, b;
	char why[256] = "";

	ASSERT_EQ(0, crs_lineage_open(&self->l, &self->w, why, sizeof(why))) TH_LOG("%s", why);
	ASSERT_EQ(0, crs_lineage_open(&second, &self->w, why, sizeof(why))) TH_LOG("%s", why);
	EXPECT_EQ(0, second.made);
	a = crs_lineage_spawn(&self->l, sleep_argv, NULL, fds, targets, 1);
	b = crs_lineage_spawn(&second, sleep_argv, NULL, fds, targets, 1);
	ASSERT_LT(0, a);
	ASSERT_LT(0, b);
	ASSERT_EQ(0, proc_ids(b, &ppid, &pgid, &sid));
	EXPECT_EQ(self->w.ppid, ppid);
	/* the second hangs up: its child goes, as with PR_SET_PDEATHSIG */
	crs_lineage_close(&second, true);
	EXPECT_TRUE(gone(b));
	kill(a, SIGKILL);
	ASSERT_EQ(1, crs_lineage_wait(&self->l, a, &st, 10000));
	close(null);
}

TEST_F(lineage, the_keeper_ends_once_nothing_is_left)
{
	char why[256] = "";

	ASSERT_EQ(0, crs_lineage_open(&self->l, &self->w, why, sizeof(why))) TH_LOG("%s", why);
	crs_lineage_close(&self->l, true);
	EXPECT_TRUE(gone(self->w.ppid));
	EXPECT_TRUE(gone(self->w.sid));
}

TEST_F(lineage, a_pid_in_use_is_said)
{
	char why[256] = "", want[64];

	self->w.ppid = getpid();
	self->w.sid = self->w.pgid = 0;
	EXPECT_GT(0, crs_lineage_open(&self->l, &self->w, why, sizeof(why)));
	snprintf(want, sizeof(want), "pid %d cannot be had: in use", getpid());
	EXPECT_NE(NULL, strstr(why, want)) TH_LOG("%s", why);
}

TEST_F(lineage, an_impostor_holding_the_name_is_refused)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char why[256] = "";
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0), n;

	/* the name taken by a process that is not the old parent */
	n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "crdbg-lineage-%d-%d",
		     self->w.ppid, self->w.sid);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sa,
			  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)));
	ASSERT_EQ(0, listen(fd, 4));
	EXPECT_EQ(-EACCES, crs_lineage_open(&self->l, &self->w, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "is not a keeper of crdbg's")) TH_LOG("%s", why);
	close(fd);
}

TEST_F(lineage, malformed_requests_and_another_uid_leave_it_serving)
{
	struct lin_hdr h = { .type = LIN_SPAWN, .nr_fds = 1 }, r;
	int null = open("/dev/null", O_RDWR), fds[1] = { null }, targets[1] = { 0 }, st;
	char why[256] = "", junk[64];
	pid_t child, other;

	ASSERT_EQ(0, crs_lineage_open(&self->l, &self->w, why, sizeof(why))) TH_LOG("%s", why);
	/* a SPAWN with no argv and no fds attached */
	ASSERT_EQ((ssize_t)sizeof(h), send(self->l.fd, &h, sizeof(h), 0));
	ASSERT_EQ((ssize_t)sizeof(r), recv(self->l.fd, &r, sizeof(r), 0));
	EXPECT_EQ(LIN_SPAWNED, r.type);
	EXPECT_EQ(-EBADMSG, r.pid);
	/* another uid connects: the keeper hangs up on it */
	other = fork();
	if (other == 0) {
		struct timeval tv = { .tv_sec = 10 };
		int fd;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		fd = raw_connect(&self->w);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		_exit(fd >= 0 && recv(fd, &r, sizeof(r), 0) == 0 ? 0 : 1);
	}
	ASSERT_EQ(other, waitpid(other, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* junk of an unknown type: that connection is dropped, the keeper lives */
	memset(junk, 0x7f, sizeof(junk));
	{
		struct crs_lineage l3 = CRS_LINEAGE_INIT;

		ASSERT_EQ(0, crs_lineage_open(&l3, &self->w, why, sizeof(why)));
		ASSERT_EQ((ssize_t)sizeof(junk), send(l3.fd, junk, sizeof(junk), 0));
		EXPECT_EQ(0, recv(l3.fd, &r, sizeof(r), 0));
		crs_lineage_close(&l3, false);
	}
	child = crs_lineage_spawn(&self->l, sleep_argv, NULL, fds, targets, 1);
	ASSERT_LT(0, child);
	kill(child, SIGKILL);
	ASSERT_EQ(1, crs_lineage_wait(&self->l, child, &st, 10000));
	close(null);
}

TEST_HARNESS_MAIN
