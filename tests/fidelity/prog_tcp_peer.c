// SPDX-License-Identifier: GPL-2.0
/*
 * TCP to a peer outside the checkpointed tree.
 *
 *   prog_tcp_peer DIR peer   the peer (the test starts it, never checkpointed):
 *                            listens on 127.0.0.1, writes its port to
 *                            DIR/port, serves one connection: "ping N" ->
 *                            "pong N" until "bye", then expects EOF.
 *                            Writes DIR/peer-result ("pass" or "fail: ...").
 *   prog_tcp_peer DIR        the program: connects, exchanges one ping, has
 *                            a "queued" line from the peer unread; after the
 *                            word reads it, pings twice, says bye.
 * The peer sends "queued" after the first pong; the program leaves it in
 * its receive queue across the checkpoint.
 */
#include <netinet/in.h>
#include <sys/socket.h>

#include "fidelity.h"

static bool recv_line(int fd, char *buf, size_t len)
{
	size_t i = 0;

	while (i + 1 < len) {
		if (recv(fd, buf + i, 1, 0) != 1)
			return false;
		if (buf[i] == '\n')
			break;
		i++;
	}
	buf[i] = '\0';
	return true;
}

static bool send_str(int fd, const char *s)
{
	return send(fd, s, strlen(s), MSG_NOSIGNAL) == (ssize_t)strlen(s);
}

static void peer(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	char line[64], want[64], out[64];
	int lis, c, n = 0;
	FILE *f;

	lis = socket(AF_INET, SOCK_STREAM, 0);
	if (lis < 0 || bind(lis, (void *)&a, len) || listen(lis, 1) || getsockname(lis, (void *)&a, &len))
		fid_die("peer: listen: %s", strerror(errno));
	f = fopen(fid_path("port.tmp"), "we");
	if (!f)
		fid_die("peer: port file");
	fprintf(f, "%d\n", ntohs(a.sin_port));
	fclose(f);
	snprintf(line, sizeof(line), "%s", fid_path("port.tmp"));
	rename(line, fid_path("port"));
	c = accept(lis, NULL, NULL);
	if (c < 0)
		fid_die("peer: accept: %s", strerror(errno));
	for (;;) {
		if (!recv_line(c, line, sizeof(line))) {
			fid_fail("peer: connection lost after %d pings (%s)", n, strerror(errno));
			break;
		}
		if (!strcmp(line, "bye"))
			break;
		snprintf(want, sizeof(want), "ping %d", n);
		if (strcmp(line, want)) {
			fid_fail("peer: got '%s', want '%s'", line, want);
			break;
		}
		snprintf(out, sizeof(out), "pong %d\n", n);
		if (!send_str(c, out) || (n == 0 && !send_str(c, "queued\n"))) {
			fid_fail("peer: send: %s", strerror(errno));
			break;
		}
		n++;
	}
	FID_CHECK(fid_why[0] || recv(c, line, 1, 0) == 0, "peer: no EOF after bye");
	FID_CHECK(fid_why[0] || n == 3, "peer: %d pings, want 3", n);
	/* The peer's result has its own name. */
	{
		FILE *r = fopen(fid_path("peer-result"), "we");

		if (r) {
			fprintf(r, fid_why[0] ? "fail: %s\n" : "pass\n", fid_why);
			fclose(r);
		}
	}
	exit(fid_why[0] ? 1 : 0);
}

static bool ping(int fd, int n)
{
	char out[32], want[32], line[64];

	snprintf(out, sizeof(out), "ping %d\n", n);
	snprintf(want, sizeof(want), "pong %d", n);
	return send_str(fd, out) && recv_line(fd, line, sizeof(line)) && !strcmp(line, want);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char line[64];
	int c, port = 0;
	FILE *f;

	fid_init(argc, argv);
	if (argc > 2 && !strcmp(argv[2], "peer"))
		peer();
	f = fopen(fid_path("port"), "re");
	if (!f || fscanf(f, "%d", &port) != 1)
		fid_die("no port from the peer");
	fclose(f);
	a.sin_port = htons(port);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (void *)&a, sizeof(a)) || !ping(c, 0))
		fid_die("connect/first ping: %s", strerror(errno));
	fid_nap_ms(100);	/* "queued" has arrived, unread */
	fid_ready_wait();

	FID_CHECK(recv_line(c, line, sizeof(line)) && !strcmp(line, "queued"),
		  "the queued line: '%s'", line);
	FID_CHECK(ping(c, 1), "ping 1: %s", strerror(errno));
	FID_CHECK(ping(c, 2), "ping 2: %s", strerror(errno));
	FID_CHECK(send_str(c, "bye\n"), "bye: %s", strerror(errno));
	shutdown(c, SHUT_WR);
	FID_CHECK(recv(c, line, 1, 0) == 0, "no EOF from the peer");
	close(c);
	fid_finish();
}
