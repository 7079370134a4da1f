// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP ports a tree listens on (usr/crs/listen-ports.c), without CRIU:
 * a real child listens on a loopback port, crdbg records it, and the wait
 * a restart runs refuses while the port is held and passes once it is not.
 * In a network namespace of the test's own (root), a listener bound to a
 * node address: recorded, and a restart's check refuses once the host no
 * longer has it, naming it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "listen-ports.h"
#include "meta.h"
#include "store.h"

FIXTURE(lp) {
	char dir[64];
	pid_t child;
	unsigned int port;
	struct crs_meta m;
	char err[512];
};

FIXTURE_SETUP(lp)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int s, go[2];
	char c;

	strcpy(self->dir, "/tmp/crdbg-ports-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	s = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_GE(s, 0);
	ASSERT_EQ(0, bind(s, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, getsockname(s, (struct sockaddr *)&a, &len));
	self->port = ntohs(a.sin_port);
	ASSERT_EQ(0, pipe(go));
	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (!self->child) {
		if (listen(s, 1) || write(go[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(s);
	close(go[1]);
	ASSERT_EQ(1, read(go[0], &c, 1));
	close(go[0]);
	crs_meta_init(&self->m);
	struct crs_proc p = { .pid = self->child };

	self->m.root = self->child;
	ASSERT_EQ(0, crs_meta_add_proc(&self->m, &p));
}

FIXTURE_TEARDOWN(lp)
{
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	crs_meta_free(&self->m);
	crs_rmtree(AT_FDCWD, self->dir);
}

TEST_F(lp, listening_port_recorded_and_waited_for)
{
	char path[128], want[32], *buf;
	size_t len;

	ASSERT_EQ(0, crs_listen_ports_record(&self->m, self->dir, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	snprintf(path, sizeof(path), "%s/" CRS_LISTEN_PORTS_NAME, self->dir);
	ASSERT_EQ(0, crs_read_file(path, 4096, &buf, &len));
	/* the fixture's listener has no SO_REUSEADDR */
	snprintf(want, sizeof(want), "\nlisten %u no-reuseaddr\n", self->port);
	EXPECT_NE(NULL, memmem(buf, len, want, strlen(want))) TH_LOG("%.*s", (int)len, buf);
	free(buf);
	/* held: refused once the deadline passed, naming the port */
	EXPECT_EQ(-EADDRINUSE, crs_listen_ports_wait(self->dir, "H", time(NULL) + 1, self->err,
						     sizeof(self->err)));
	snprintf(want, sizeof(want), "TCP port %u", self->port);
	EXPECT_NE(NULL, strstr(self->err, want)) TH_LOG("%s", self->err);
	/* its process gone: free at once */
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	EXPECT_EQ(0, crs_listen_ports_wait(self->dir, "H", time(NULL) + 5, self->err,
					   sizeof(self->err))) TH_LOG("%s", self->err);
}

TEST_F(lp, no_listener_no_record)
{
	char path[128];

	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	self->m.procs[0].zombie = true;
	ASSERT_EQ(0, crs_listen_ports_record(&self->m, self->dir, self->err, sizeof(self->err)));
	snprintf(path, sizeof(path), "%s/" CRS_LISTEN_PORTS_NAME, self->dir);
	EXPECT_NE(0, access(path, F_OK));
	EXPECT_EQ(0, crs_listen_ports_wait(self->dir, "H", time(NULL), self->err, sizeof(self->err)));
}

/* ip(8) (iproute2, a dependency) on this namespace's lo. */
static int ip_lo(const char *what)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip %s >/dev/null 2>&1", what);
	return system(cmd) ? -1 : 0;
}

/* The steps in a child (its own network namespace): its exit code names a failed one. */
static int addr_case(const char *dir)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(4711) };
	struct crs_meta m;
	struct crs_proc p = { 0 };
	char err[512], path[128], *buf;
	size_t len;
	int s, rc = 0;
	pid_t tree;

	if (unshare(CLONE_NEWNET) || ip_lo("link set lo up") ||
	    ip_lo("addr add 10.77.0.1/32 dev lo"))
		return 10;
	inet_pton(AF_INET, "10.77.0.1", &a.sin_addr);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 1))
		return 11;
	tree = fork();
	if (!tree) {
		pause();
		_exit(0);
	}
	close(s);
	crs_meta_init(&m);
	p.pid = tree;
	m.root = tree;
	if (crs_meta_add_proc(&m, &p) || crs_listen_ports_record(&m, dir, err, sizeof(err)))
		rc = 12;
	snprintf(path, sizeof(path), "%s/" CRS_LISTEN_PORTS_NAME, dir);
	if (!rc && (crs_read_file(path, 4096, &buf, &len) ||
		    !memmem(buf, len, "\naddr 10.77.0.1\n", 16) || !memmem(buf, len, "\nlisten 4711 no-reuseaddr\n", 26)))
		rc = 13;
	kill(tree, SIGKILL);
	waitpid(tree, NULL, 0);
	/* the host has it: the check passes */
	if (!rc && crs_listen_addrs_check(dir, "H", err, sizeof(err)))
		rc = 14;
	/* its address gone: refused, naming it */
	if (!rc && ip_lo("addr del 10.77.0.1/32 dev lo"))
		rc = 15;
	if (!rc && (crs_listen_addrs_check(dir, "H", err, sizeof(err)) != -EADDRNOTAVAIL ||
		    !strstr(err, "bound to 10.77.0.1, which is not an address of this host")))
		rc = 16;
	crs_meta_free(&m);
	return rc;
}

/* A case in a child of its own (it unshares its network namespace): its exit code, or -1. */
static int in_child(int (*fn)(const char *), const char *dir)
{
	int st;
	pid_t c = fork();

	if (c < 0)
		return -1;
	if (!c)
		_exit(fn(dir));
	if (waitpid(c, &st, 0) != c || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

TEST_F(lp, a_node_address_is_recorded_and_a_restart_without_it_refused)
{
	if (geteuid())
		SKIP(return, "needs root: a network namespace of its own");
	/* 10-11 set-up, 12-13 the record, 14 a false refusal, 15-16 no refusal */
	EXPECT_EQ(0, in_child(addr_case, self->dir));
}

TEST_F(lp, a_record_of_version_1_still_reads)
{
	static const char v1[] = "crdbg-listen-ports 1\nlisten 80\n";
	static const char bad[] = "crdbg-listen-ports 1\naddr 10.0.0.1\n";
	static const char v2[] = "crdbg-listen-ports 2\nlisten 80\naddr 10.0.0.1\naddr fd00::7\n";
	static struct crs_listen_record rec;

	ASSERT_EQ(0, crs_listen_ports_parse(v1, sizeof(v1) - 1, &rec));
	EXPECT_EQ(1u, rec.nr_ports);
	EXPECT_EQ(-EBADMSG, crs_listen_ports_parse(bad, sizeof(bad) - 1, &rec));
	ASSERT_EQ(0, crs_listen_ports_parse(v2, sizeof(v2) - 1, &rec));
	EXPECT_EQ(2u, rec.nr_addrs);
	EXPECT_STREQ("fd00::7", rec.addrs[1]);
}

TEST_F(lp, version_3_says_which_listeners_lack_reuseaddr)
{
	static const char v3[] = "crdbg-listen-ports 3\nlisten 80 no-reuseaddr\nlisten 81\n";
	static const char flag_in_v2[] = "crdbg-listen-ports 2\nlisten 80 no-reuseaddr\n";
	static const char bad_flag[] = "crdbg-listen-ports 3\nlisten 80 reuse\n";
	static const char v4[] = "crdbg-listen-ports 4\nlisten 80\n";
	static struct crs_listen_record rec;

	ASSERT_EQ(0, crs_listen_ports_parse(v3, sizeof(v3) - 1, &rec));
	ASSERT_EQ(2u, rec.nr_ports);
	EXPECT_TRUE(rec.no_reuseaddr[0]);
	EXPECT_FALSE(rec.no_reuseaddr[1]);
	EXPECT_EQ(-EBADMSG, crs_listen_ports_parse(flag_in_v2, sizeof(flag_in_v2) - 1, &rec));
	EXPECT_EQ(-EBADMSG, crs_listen_ports_parse(bad_flag, sizeof(bad_flag) - 1, &rec));
	EXPECT_EQ(-EBADMSG, crs_listen_ports_parse(v4, sizeof(v4) - 1, &rec));
}

/*
 * In a network namespace of its own: a connection closed first by the
 * side that accepted it lingers in TIME_WAIT on the listener's port. A
 * listener recorded without SO_REUSEADDR waits for it and is refused
 * past the deadline; one with it (the flag absent) goes on at once.
 */
static int time_wait_case(const char *dir)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(4712),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char path[128], err[512], c;
	int ls, cs, as, fd;

	if (unshare(CLONE_NEWNET) || ip_lo("link set lo up"))
		return 10;
	ls = socket(AF_INET, SOCK_STREAM, 0);
	cs = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || cs < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
	    connect(cs, (struct sockaddr *)&a, sizeof(a)))
		return 11;
	as = accept(ls, NULL, NULL);
	if (as < 0)
		return 11;
	close(ls);
	close(as);			/* the accepted side closes first ... */
	if (read(cs, &c, 1) != 0)	/* ... the peer reads the FIN and closes */
		return 12;
	close(cs);
	usleep(100 * 1000);
	snprintf(path, sizeof(path), "%s/" CRS_LISTEN_PORTS_NAME, dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || dprintf(fd, "crdbg-listen-ports 3\nlisten 4712 no-reuseaddr\n") < 0)
		return 13;
	close(fd);
	if (crs_listen_ports_wait(dir, "H", time(NULL) + 1, err, sizeof(err)) != -EADDRINUSE ||
	    !strstr(err, "TCP port 4712") || !strstr(err, "held by a closed connection"))
		return 14;
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || dprintf(fd, "crdbg-listen-ports 3\nlisten 4712\n") < 0)
		return 15;
	close(fd);
	return crs_listen_ports_wait(dir, "H", time(NULL), err, sizeof(err)) ? 16 : 0;
}

TEST_F(lp, time_wait_held_only_for_a_listener_without_reuseaddr)
{
	if (geteuid())
		SKIP(return, "needs root: a network namespace of its own");
	/* 10-13 set-up, 14 TIME_WAIT not waited for, 15-16 waited for with SO_REUSEADDR */
	EXPECT_EQ(0, in_child(time_wait_case, self->dir));
}

TEST_HARNESS_MAIN
