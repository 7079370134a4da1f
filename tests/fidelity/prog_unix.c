// SPDX-License-Identifier: GPL-2.0
/*
 * Unix sockets: stream, datagram and seqpacket socketpairs with data
 * queued both ways (message boundaries for dgram and seqpacket), and a
 * listening stream socket bound in DIR whose connection from a child was
 * accepted, data queued on it. After the word everything arrives, in
 * order, with its boundaries and names.
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "fidelity.h"

static int sp[3][2];
static const int types[3] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET };
static const char *const names[3] = { "stream", "dgram", "seqpacket" };

static void check_pair(int k)
{
	char buf[64];
	ssize_t n;

	memset(buf, 0, sizeof(buf));
	if (types[k] == SOCK_STREAM) {
		n = recv(sp[k][1], buf, sizeof(buf), MSG_DONTWAIT);
		FID_CHECK(n == 10 && !memcmp(buf, "firstsecnd", 10), "%s: got %zd bytes '%s'",
			  names[k], n, buf);
	} else {
		n = recv(sp[k][1], buf, sizeof(buf), MSG_DONTWAIT);
		FID_CHECK(n == 5 && !memcmp(buf, "first", 5), "%s: first message %zd '%s'",
			  names[k], n, buf);
		n = recv(sp[k][1], buf, sizeof(buf), MSG_DONTWAIT);
		FID_CHECK(n == 5 && !memcmp(buf, "secnd", 5), "%s: second message %zd", names[k], n);
	}
	n = recv(sp[k][0], buf, sizeof(buf), MSG_DONTWAIT);
	FID_CHECK(n == 4 && !memcmp(buf, "back", 4), "%s: reverse direction %zd", names[k], n);
	FID_CHECK(recv(sp[k][1], buf, sizeof(buf), MSG_DONTWAIT) < 0 && errno == EAGAIN,
		  "%s: extra data", names[k]);
	FID_CHECK(send(sp[k][0], "again", 5, 0) == 5 && recv(sp[k][1], buf, 5, 0) == 5,
		  "%s: pair no longer connected", names[k]);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX }, got;
	socklen_t len = sizeof(got);
	int k, lis, acc, st;
	char buf[64] = "";
	pid_t kid;

	fid_init(argc, argv);
	for (k = 0; k < 3; k++) {
		if (socketpair(AF_UNIX, types[k], 0, sp[k]))
			fid_die("socketpair: %s", strerror(errno));
		if (send(sp[k][0], "first", 5, 0) != 5 || send(sp[k][0], "secnd", 5, 0) != 5 ||
		    send(sp[k][1], "back", 4, 0) != 4)
			fid_die("send: %s", strerror(errno));
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", fid_path("sock"));
	lis = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lis < 0 || bind(lis, (void *)&sa, sizeof(sa)) || listen(lis, 4))
		fid_die("listen: %s", strerror(errno));
	kid = fork();
	if (kid == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);

		if (connect(c, (void *)&sa, sizeof(sa)) || send(c, "from the child", 14, 0) != 14)
			_exit(2);
		/* Blocked in recv across the checkpoint; answers after the word. */
		if (recv(c, buf, 4, MSG_WAITALL) != 4 || memcmp(buf, "ping", 4))
			_exit(3);
		_exit(send(c, "pong", 4, 0) == 4 ? 0 : 4);
	}
	acc = accept(lis, NULL, NULL);
	if (acc < 0)
		fid_die("accept: %s", strerror(errno));
	fid_nap_ms(50);
	fid_ready_wait();

	for (k = 0; k < 3; k++)
		check_pair(k);
	FID_CHECK(!getsockname(lis, (void *)&got, &len) && !strcmp(got.sun_path, sa.sun_path),
		  "listening socket's name changed");
	FID_CHECK(recv(acc, buf, sizeof(buf), MSG_DONTWAIT) == 14 && !memcmp(buf, "from the child", 14),
		  "queued data from the child");
	FID_CHECK(send(acc, "ping", 4, 0) == 4 && recv(acc, buf, 4, MSG_WAITALL) == 4 &&
		  !memcmp(buf, "pong", 4), "no answer from the child");
	FID_CHECK(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && !WEXITSTATUS(st),
		  "child exited with %d", WEXITSTATUS(st));
	fid_finish();
}
