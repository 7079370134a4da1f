// SPDX-License-Identifier: GPL-2.0
/*
 * A checkpointed tree's TCP connections aborted before its kill
 * (usr/crs/tcp-abort.c), without CRIU, each case in a network namespace
 * of its own (root): a "tree" listens on a loopback port without
 * SO_REUSEADDR and holds a connection a process outside it made. Killed
 * as it is, the connection's close leaves the port held and a new
 * listener cannot bind it; aborted first, the peer reads a reset, no
 * socket of the port is left in TIME_WAIT and the port binds at once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "meta.h"
#include "tcp-abort.h"

#define PORT	4713

static struct sockaddr_in here = { .sin_family = AF_INET };

/* A socket of the port in TIME_WAIT (06) in this namespace's table. */
static bool time_wait_on_port(void)
{
	char line[512], want[16];
	FILE *f = fopen("/proc/net/tcp", "re");
	bool found = false;

	snprintf(want, sizeof(want), ":%04X ", PORT);
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, want) && strstr(line, want) < line + 20 &&
			strstr(line, " 06 ");
	if (f)
		fclose(f);
	return found;
}

static int bind_again(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r = bind(s, (const struct sockaddr *)&here, sizeof(here)) ? -errno : 0;

	close(s);
	return r;
}

/*
 * One case in its own network namespace: its exit code names the step
 * that failed (0: as expected).
 */
static int tcp_case(bool abort_first)
{
	int ls, peer, go[2], aborted = 0;
	struct crs_proc p = { 0 };
	struct crs_meta m;
	char c = 0;
	pid_t tree;

	here.sin_port = htons(PORT);
	here.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (unshare(CLONE_NEWNET) || system("ip link set lo up >/dev/null 2>&1"))
		return 10;
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0 || bind(ls, (const struct sockaddr *)&here, sizeof(here)) || listen(ls, 1))
		return 11;
	if (pipe(go))
		return 11;
	tree = fork();
	if (!tree) {
		int conn = accept(ls, NULL, NULL);

		if (conn < 0 || write(go[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ls);
	peer = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (peer < 0 || connect(peer, (const struct sockaddr *)&here, sizeof(here)) ||
	    read(go[0], &c, 1) != 1)
		return 12;
	crs_meta_init(&m);
	p.pid = tree;
	if (crs_meta_add_proc(&m, &p))
		return 12;
	if (abort_first)
		aborted = crs_tcp_abort_tree(&m);
	kill(tree, SIGKILL);
	waitpid(tree, NULL, 0);
	crs_meta_free(&m);
	if (abort_first) {
		/* the listener and the accepted connection */
		if (aborted != 2)
			return 13;
		if (read(peer, &c, 1) != -1 || errno != ECONNRESET)
			return 14;
		close(peer);
		if (time_wait_on_port())
			return 15;
		return bind_again() ? 16 : 0;
	}
	/* the control: the peer reads the tree's FIN, closes, and the port stays held */
	if (read(peer, &c, 1) != 0)
		return 17;
	close(peer);
	return bind_again() == -EADDRINUSE ? 0 : 18;
}

static int run_case(bool abort_first)
{
	int st;
	pid_t c = fork();

	if (c < 0)
		return -1;
	if (!c)
		_exit(tcp_case(abort_first));
	if (waitpid(c, &st, 0) != c || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

TEST(killed_as_it_is_the_port_stays_held)
{
	if (geteuid())
		SKIP(return, "needs root: a network namespace of its own");
	/* 10-12 set-up, 17 no FIN, 18 the port bound again though a close holds it */
	EXPECT_EQ(0, run_case(false));
}

TEST(aborted_first_the_peer_is_reset_and_the_port_is_free)
{
	if (geteuid())
		SKIP(return, "needs root: a network namespace of its own");
	/* 13 not both sockets aborted, 14 no reset, 15 TIME_WAIT left, 16 the port held */
	EXPECT_EQ(0, run_case(true));
}

TEST(a_tree_without_sockets_aborts_nothing)
{
	struct crs_proc p = { .pid = getpid() };
	struct crs_meta m;
	pid_t c;
	int st;

	/* a child with no socket at all: nothing to abort, and no error */
	c = fork();
	ASSERT_GE(c, 0);
	if (!c) {
		pause();
		_exit(0);
	}
	p.pid = c;
	crs_meta_init(&m);
	ASSERT_EQ(0, crs_meta_add_proc(&m, &p));
	EXPECT_EQ(0, crs_tcp_abort_tree(&m));
	kill(c, SIGKILL);
	waitpid(c, &st, 0);
	crs_meta_free(&m);
}

TEST_HARNESS_MAIN
