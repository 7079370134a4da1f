// SPDX-License-Identifier: GPL-2.0
/*
 * A tree connected to its parent, which is not checkpointed with it
 * (usr/crs/parent-link.c), as an MPI rank under srun --mpi=pmix is to its
 * slurmstepd: this test is the parent. A child connected to it over TCP
 * on the loopback, or by a unix socket pair, is refused in one line that
 * names both; a child connected over TCP to another process, a child
 * with no connection, and a unix link with CRIU's --ext-unix-sk are not.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "parent-link.h"

/*
 * A child that connects (unless fd >= 0: it holds that one, and closes
 * other, the parent's end), says so, and waits.
 */
static pid_t child_linked(const struct sockaddr_in *to, int fd, int other)
{
	int go[2];
	char c;
	pid_t p;

	if (pipe(go))
		return -1;
	p = fork();
	if (!p) {
		int s = fd;

		if (other >= 0)
			close(other);
		if (s < 0) {
			s = socket(AF_INET, SOCK_STREAM, 0);
			if (s < 0 || connect(s, (const struct sockaddr *)to, sizeof(*to)))
				_exit(1);
		}
		if (write(go[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(go[1]);
	if (p < 0 || read(go[0], &c, 1) != 1)
		p = -1;
	close(go[0]);
	return p;
}

static void end(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

/* A listener on a loopback port of its own: its address in *a. */
static int listener(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)a, sizeof(*a)) || listen(s, 4) ||
	    getsockname(s, (struct sockaddr *)a, &len))
		return -1;
	return s;
}

TEST(a_tcp_connection_to_the_parent_is_refused_naming_both)
{
	struct sockaddr_in a;
	int ls = listener(&a), as;
	char err[1024] = "", want[64];
	pid_t c;

	ASSERT_LE(0, ls);
	c = child_linked(&a, -1, -1);
	ASSERT_LT(0, c);
	as = accept(ls, NULL, NULL);	/* the parent holds the other end */
	ASSERT_LE(0, as);
	EXPECT_EQ(-EXDEV, crs_parent_link_check(c, &c, 1, false, err, sizeof(err)));
	snprintf(want, sizeof(want), "pid %d (", c);
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("%s", err);
	snprintf(want, sizeof(want), "tree's parent, pid %d (", getpid());
	EXPECT_NE(NULL, strstr(err, want)) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "nothing was frozen")) TH_LOG("%s", err);
	EXPECT_EQ(NULL, strchr(err, '\n'));
	end(c);
	close(as);
	close(ls);
}

TEST(a_tcp_connection_to_another_process_is_not)
{
	struct sockaddr_in a;
	char err[1024] = "";
	int ls = listener(&a), go[2];
	pid_t server, c;

	ASSERT_LE(0, ls);
	ASSERT_EQ(0, pipe(go));
	server = fork();	/* the listener and its accepted end in a sibling */
	ASSERT_LE(0, server);
	if (!server) {
		int as = accept(ls, NULL, NULL);

		if (as < 0 || write(go[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ls);	/* none of it is the parent's */
	c = child_linked(&a, -1, -1);
	ASSERT_LT(0, c);
	char x;

	ASSERT_EQ(1, read(go[0], &x, 1));
	EXPECT_EQ(0, crs_parent_link_check(c, &c, 1, false, err, sizeof(err))) TH_LOG("%s", err);
	end(c);
	end(server);
}

TEST(a_unix_pair_with_the_parent_is_refused_unless_ext_unix_sk)
{
	char err[1024] = "";
	int sv[2];
	pid_t c;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	c = child_linked(NULL, sv[1], sv[0]);
	ASSERT_LT(0, c);
	close(sv[1]);
	EXPECT_EQ(-EXDEV, crs_parent_link_check(c, &c, 1, false, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "is connected to its tree's parent")) TH_LOG("%s", err);
	EXPECT_EQ(0, crs_parent_link_check(c, &c, 1, true, err, sizeof(err))) TH_LOG("%s", err);
	end(c);
	close(sv[0]);
}

TEST(a_child_without_connections_is_not)
{
	char err[1024] = "";
	pid_t c = fork();

	ASSERT_LE(0, c);
	if (!c) {
		pause();
		_exit(0);
	}
	EXPECT_EQ(0, crs_parent_link_check(c, &c, 1, false, err, sizeof(err))) TH_LOG("%s", err);
	end(c);
}

TEST_HARNESS_MAIN
