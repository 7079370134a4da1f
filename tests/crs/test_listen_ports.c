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
	snprintf(want, sizeof(want), "\nlisten %u\n", self->port);
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
		    !memmem(buf, len, "\naddr 10.77.0.1\n", 16) || !memmem(buf, len, "\nlisten 4711\n", 13)))
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

TEST_F(lp, a_node_address_is_recorded_and_a_restart_without_it_refused)
{
	int st;
	pid_t c;

	if (geteuid())
		SKIP(return, "needs root: a network namespace of its own");
	c = fork();
	ASSERT_GE(c, 0);
	if (!c)
		_exit(addr_case(self->dir));
	ASSERT_EQ(c, waitpid(c, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	/* 10-11 set-up, 12-13 the record, 14 a false refusal, 15-16 no refusal */
	EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("step %d failed", WEXITSTATUS(st));
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

TEST_HARNESS_MAIN
