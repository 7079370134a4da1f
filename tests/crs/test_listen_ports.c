// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP ports a tree listens on (usr/crs/listen-ports.c), without CRIU:
 * a real child listens on a loopback port, crdbg records it, and the wait
 * a restart runs refuses while the port is held and passes once it is not.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

TEST_HARNESS_MAIN
