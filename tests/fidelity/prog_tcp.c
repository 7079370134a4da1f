// SPDX-License-Identifier: GPL-2.0
/*
 * TCP inside the tree: a listener on 127.0.0.1, a child connected to it
 * with data queued in both directions (and a second, IPv6 loopback
 * connection within the process), TCP_NODELAY set on one end. After the
 * word all queued bytes arrive in order, the connections carry more,
 * addresses and options are as they were. Sockets close with an RST so
 * no TIME_WAIT keeps their ports from a restart of a continued image.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "fidelity.h"

static void close_rst(int fd)
{
	struct linger l = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

static int listener(int family, struct sockaddr_storage *ss, socklen_t *len)
{
	int fd = socket(family, SOCK_STREAM, 0), one = 1;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (void *)ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (void *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		*len = sizeof(*a);
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (void *)ss, *len) || listen(fd, 4) || getsockname(fd, (void *)ss, len))
		fid_die("listen (family %d): %s", family, strerror(errno));
	return fd;
}

static bool recv_is(int fd, const char *want, int flags)
{
	char buf[64] = "";
	size_t n = strlen(want);

	return recv(fd, buf, n, MSG_WAITALL | flags) == (ssize_t)n && !memcmp(buf, want, n);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage a4, a6, peer;
	socklen_t l4, l6, pl = sizeof(peer);
	int lis4, lis6, acc4, c6, acc6, st, one = 1, v = 0;
	socklen_t vl = sizeof(v);
	pid_t kid;

	fid_init(argc, argv);
	lis4 = listener(AF_INET, &a4, &l4);
	kid = fork();
	if (kid == 0) {
		int c = socket(AF_INET, SOCK_STREAM, 0);

		if (connect(c, (void *)&a4, l4) || send(c, "hello parent", 12, 0) != 12)
			_exit(2);
		/* Blocked in recv across the checkpoint. */
		if (!recv_is(c, "queued", 0) || !recv_is(c, "ping", 0))
			_exit(3);
		if (send(c, "pong", 4, 0) != 4)
			_exit(4);
		close_rst(c);
		_exit(0);
	}
	acc4 = accept(lis4, NULL, NULL);
	if (acc4 < 0 || send(acc4, "queued", 6, 0) != 6)
		fid_die("accept: %s", strerror(errno));
	setsockopt(acc4, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	lis6 = listener(AF_INET6, &a6, &l6);
	c6 = socket(AF_INET6, SOCK_STREAM, 0);
	if (connect(c6, (void *)&a6, l6) || (acc6 = accept(lis6, NULL, NULL)) < 0)
		fid_die("ipv6 loopback: %s", strerror(errno));
	if (send(c6, "six to acc", 10, 0) != 10 || send(acc6, "acc to six", 10, 0) != 10)
		fid_die("send: %s", strerror(errno));
	fid_nap_ms(100);
	fid_ready_wait();

	FID_CHECK(recv_is(acc4, "hello parent", MSG_DONTWAIT), "ipv4: queued data from the child");
	FID_CHECK(!getsockopt(acc4, IPPROTO_TCP, TCP_NODELAY, &v, &vl) && v, "TCP_NODELAY lost");
	FID_CHECK(send(acc4, "ping", 4, 0) == 4 && recv_is(acc4, "pong", 0), "ipv4: no pong from the child");
	FID_CHECK(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && !WEXITSTATUS(st),
		  "child exited with %d", WEXITSTATUS(st));
	FID_CHECK(recv_is(acc6, "six to acc", MSG_DONTWAIT) && recv_is(c6, "acc to six", MSG_DONTWAIT),
		  "ipv6: queued data");
	FID_CHECK(send(c6, "more", 4, 0) == 4 && recv_is(acc6, "more", 0), "ipv6: connection broken");
	FID_CHECK(!getpeername(c6, (void *)&peer, &pl) && pl == l6 &&
		  ((struct sockaddr_in6 *)&peer)->sin6_port == ((struct sockaddr_in6 *)&a6)->sin6_port,
		  "ipv6: peer address changed");
	close_rst(acc4);
	close_rst(c6);
	close_rst(acc6);
	close(lis4);
	close(lis6);
	fid_finish();
}
