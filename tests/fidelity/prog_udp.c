// SPDX-License-Identifier: GPL-2.0
/*
 * UDP: a socket bound to 127.0.0.1, one connected to it, an IPv6 one
 * bound to ::1, SO_RCVBUF and SO_BROADCAST set. After the word the
 * addresses, the connection and the options are as set, and datagrams
 * go both ways with their boundaries.
 */
#include <netinet/in.h>
#include <sys/socket.h>

#include "fidelity.h"

static int bound(int family, struct sockaddr_storage *ss, socklen_t *len)
{
	int fd = socket(family, SOCK_DGRAM, 0);

	memset(ss, 0, sizeof(*ss));
	ss->ss_family = family;
	if (family == AF_INET) {
		((struct sockaddr_in *)ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(struct sockaddr_in);
	} else {
		((struct sockaddr_in6 *)ss)->sin6_addr = in6addr_loopback;
		*len = sizeof(struct sockaddr_in6);
	}
	if (fd < 0 || bind(fd, (void *)ss, *len) || getsockname(fd, (void *)ss, len))
		fid_die("bind (family %d): %s", family, strerror(errno));
	return fd;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage sa, sc, s6, got;
	socklen_t la, lc = sizeof(sc), l6, lg = sizeof(got);
	int srv, cli, six, v = 0, one = 1, rcv = 96 * 1024;
	socklen_t vl = sizeof(v);
	char buf[64] = "";

	fid_init(argc, argv);
	srv = bound(AF_INET, &sa, &la);
	six = bound(AF_INET6, &s6, &l6);
	cli = socket(AF_INET, SOCK_DGRAM, 0);
	if (cli < 0 || connect(cli, (void *)&sa, la) || getsockname(cli, (void *)&sc, &lc))
		fid_die("connect: %s", strerror(errno));
	setsockopt(srv, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	setsockopt(srv, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one));
	fid_ready_wait();

	FID_CHECK(!getsockname(srv, (void *)&got, &lg) && lg == la && !memcmp(&got, &sa, la),
		  "bound address changed");
	lg = sizeof(got);
	FID_CHECK(!getpeername(cli, (void *)&got, &lg) && lg == la && !memcmp(&got, &sa, la),
		  "connected peer changed");
	lg = sizeof(got);
	FID_CHECK(!getsockname(six, (void *)&got, &lg) && lg == l6 && !memcmp(&got, &s6, l6),
		  "ipv6 bound address changed");
	FID_CHECK(!getsockopt(srv, SOL_SOCKET, SO_RCVBUF, &v, &vl) && v == 2 * rcv,
		  "SO_RCVBUF %d, want %d", v, 2 * rcv);
	vl = sizeof(v);
	FID_CHECK(!getsockopt(srv, SOL_SOCKET, SO_BROADCAST, &v, &vl) && v, "SO_BROADCAST lost");
	FID_CHECK(send(cli, "one", 3, 0) == 3 && send(cli, "two!", 4, 0) == 4, "send: %s", strerror(errno));
	lg = sizeof(got);
	FID_CHECK(recvfrom(srv, buf, sizeof(buf), 0, (void *)&got, &lg) == 3 && !memcmp(buf, "one", 3) &&
		  lg == lc && !memcmp(&got, &sc, lc), "first datagram or its sender");
	FID_CHECK(recv(srv, buf, sizeof(buf), 0) == 4 && !memcmp(buf, "two!", 4), "second datagram");
	FID_CHECK(sendto(srv, "back", 4, 0, (void *)&sc, lc) == 4 &&
		  recv(cli, buf, sizeof(buf), 0) == 4 && !memcmp(buf, "back", 4), "reply datagram");
	FID_CHECK(sendto(six, "6", 1, 0, (void *)&s6, l6) == 1 && recv(six, buf, sizeof(buf), 0) == 1,
		  "ipv6 datagram to itself");
	fid_finish();
}
