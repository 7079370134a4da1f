// SPDX-License-Identifier: GPL-2.0
/*
 * Unauthenticated connections are bounded (transport-tcp.c; sdm.md,
 * "Transport"): a flood of raw TCP connections that never send a byte
 * leaves exactly max_pending of them open, the others closed as soon as
 * they were accepted; those held are dropped once the handshake's bound
 * passes; and a peer that knows the secret gets in all the same. A
 * server listens on the address it advertises, not on every address.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "sdm/auth.h"
#include "sdm/engine.h"
#include "startup.h"
#include "transport.h"

#define CAP		8
#define FLOOD		64
#define HANDSHAKE_MS	1500

struct end {
	struct sdm_transport *t;
	int connected;
};

static void end_connected(void *arg, int peer, int id, bool incoming)
{
	((struct end *)arg)->connected++;
}

static int raw_connect(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Still open: the server has not closed it (it may have sent its challenge). */
static bool is_open(int fd)
{
	uint8_t buf[256];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		;
	return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

static int count_open(const int *fds, int n)
{
	int open = 0;

	for (int i = 0; i < n; i++)
		open += is_open(fds[i]);
	return open;
}

static void run_for(struct end *a, struct end *b, int ms)
{
	uint64_t until = sdm_now_ms() + ms;

	while (sdm_now_ms() < until) {
		sdm_transport_progress(a->t, 5);
		if (b)
			sdm_transport_progress(b->t, 5);
	}
}

TEST(pending_connections_are_capped)
{
	struct sdm_transport_config c = { 0 }, d;
	struct sdm_auth_secret secret;
	struct end server = { 0 }, peer = { 0 };
	const struct sdm_transport_stats *st;
	int fds[FLOOD], port, open;
	uint64_t start;

	ASSERT_EQ(0, sdm_auth_secret_generate(&secret));
	ASSERT_EQ(0, sdm_startup_transport_defaults(&c, NULL, 0));
	c.secret = &secret;
	c.connected = end_connected;
	c.handshake_timeout_ms = HANDSHAKE_MS;
	d = c;
	c.my_id = 2;
	c.max_pending = CAP;
	c.arg = &server;
	d.my_id = 1;
	d.arg = &peer;
	d.connect_tries = 40;
	server.t = sdm_transport_new(NULL, &c);
	peer.t = sdm_transport_new(NULL, &d);
	ASSERT_NE(NULL, server.t);
	ASSERT_NE(NULL, peer.t);
	ASSERT_EQ(0, sdm_transport_listen(server.t, "127.0.0.1", 0, 1, &port));

	for (int i = 0; i < FLOOD; i++) {
		fds[i] = raw_connect(port);
		ASSERT_LE(0, fds[i]);
	}
	start = sdm_now_ms();
	run_for(&server, NULL, 300);
	open = count_open(fds, FLOOD);
	st = sdm_transport_stats(server.t);
	EXPECT_EQ(CAP, open);
	EXPECT_EQ(FLOOD - CAP, st->refused_pending);

	/* A peer with the secret, while the flood holds every place. */
	ASSERT_LE(0, sdm_transport_connect(peer.t, "127.0.0.1", port, 2));
	while (!(server.connected && peer.connected) &&
	       sdm_now_ms() < start + 4 * HANDSHAKE_MS) {
		run_for(&server, &peer, 20);
		/* Never more than the cap: the count of open raw ones only falls. */
		ASSERT_GE(CAP, count_open(fds, FLOOD));
	}
	EXPECT_EQ(1, server.connected);
	EXPECT_EQ(1, peer.connected);
	/* It got in once the handshake's bound dropped the silent ones. */
	EXPECT_EQ(0, count_open(fds, FLOOD));
	EXPECT_LE(start + HANDSHAKE_MS - 100, sdm_now_ms());

	for (int i = 0; i < FLOOD; i++)
		close(fds[i]);
	sdm_transport_free(server.t);
	sdm_transport_free(peer.t);
}

#ifndef SDM_BINDIR
#define SDM_BINDIR "build/sdm"
#endif

/* The local address of the IPv4 listener on port, from /proc/net/tcp (hex). */
static int listen_addr(int port, char *buf, size_t size)
{
	char line[512], local[64];
	unsigned int st;
	FILE *f = fopen("/proc/net/tcp", "r");
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *colon;

		if (sscanf(line, "%*d: %63s %*s %x", local, &st) != 2 || st != 0x0a)
			continue;
		colon = strchr(local, ':');
		if (!colon || strtol(colon + 1, NULL, 16) != port)
			continue;
		*colon = '\0';
		snprintf(buf, size, "%s", local);
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* sdm-server --advertise adv: the address it listens on. */
static int server_listens_on(const char *adv, char *buf, size_t size)
{
	char line[256] = "", secret[80];
	struct sdm_auth_secret s;
	int out[2], port = 0, rc;
	unsigned int id;
	ssize_t n, got = 0;
	pid_t pid;

	if (sdm_auth_secret_generate(&s) || pipe(out))
		return -EIO;
	sdm_auth_secret_to_hex(&s, secret);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(out[1], STDOUT_FILENO);
		setenv("SDM_ID", "0", 1);
		setenv(SDM_AUTH_ENV_HEX, secret, 1);
		execl(SDM_BINDIR "/sdm-server", "sdm-server", "--advertise", adv,
		      "20100", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	while (!strchr(line, '\n') && got < (ssize_t)sizeof(line) - 1 &&
	       poll(&(struct pollfd){ .fd = out[0], .events = POLLIN }, 1, 10000) > 0 &&
	       (n = read(out[0], line + got, sizeof(line) - 1 - got)) > 0)
		got += n;
	close(out[0]);
	rc = sscanf(line, SDM_STARTUP_READY_SCAN, &id, secret, &port) == 3 ?
	     listen_addr(port, buf, size) : -EPROTO;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return rc;
}

TEST(server_listens_on_its_advertised_address)
{
	char addr[64];

	ASSERT_EQ(0, server_listens_on("127.0.0.1", addr, sizeof(addr)));
	EXPECT_STREQ("0100007F", addr);		/* 127.0.0.1, not 0.0.0.0 */
	ASSERT_EQ(0, server_listens_on("localhost", addr, sizeof(addr)));
	EXPECT_STREQ("0100007F", addr);
}

TEST_HARNESS_MAIN
