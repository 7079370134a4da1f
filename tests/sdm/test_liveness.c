// SPDX-License-Identifier: GPL-2.0
/*
 * Liveness of the TCP transport's links (transport-tcp.c,
 * watch_liveness(); Documentation/sdm.md, "A lost node"), with two
 * transports in one process and a two-second peer timeout:
 *  - a link whose peer's node goes silent (packets to it dropped by a
 *    blackhole rule in a network namespace of the test's own: no FIN, no
 *    RST) is closed with ETIMEDOUT on both sides, the side with data in
 *    flight and the idle side;
 *  - a peer that is alive but reads nothing (its window closed) ends a
 *    link to a server, which is how Linux counts TCP_USER_TIMEOUT, but
 *    not a link to the front end (a console stopped with ^Z), which
 *    delivers everything once the reader reads again;
 *  - SDM_PEER_TIMEOUT is checked: seconds from 1 to 3600, by the front
 *    end's code and by sdm-master and sdm-server started by hand.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "sdm/auth.h"
#include "sdm/engine.h"
#include "sdm/message.h"
#include "startup.h"
#include "transport.h"

#define PEER_TIMEOUT_MS	2000
#define FRAME_BYTES	(1u << 20)

struct end {
	struct sdm_transport *t;
	bool connected;
	int peer;
	int closed_err;		/* 1 while open */
	unsigned int frames;
};

static void end_connected(void *arg, int peer, int id, bool incoming)
{
	struct end *e = arg;

	(void)id;
	(void)incoming;
	e->connected = true;
	e->peer = peer;
}

static void end_frame(void *arg, int peer, const void *buf, size_t len)
{
	struct end *e = arg;

	(void)peer;
	(void)buf;
	(void)len;
	e->frames++;
}

static void end_closed(void *arg, int peer, int err)
{
	struct end *e = arg;

	(void)peer;
	e->closed_err = err;
}

/* a (id a_id) connects to b (a server, id 2) at host; both ready on return. */
static int link_up(struct sdm_auth_secret *secret, const char *host, int a_id,
		   struct end *a, struct end *b)
{
	struct sdm_transport_config c = { 0 }, d;
	uint64_t until;
	int port;

	if (sdm_startup_transport_defaults(&c, NULL, 0) < 0)
		return -1;
	c.peer_timeout_ms = PEER_TIMEOUT_MS;
	c.secret = secret;
	c.connected = end_connected;
	c.frame = end_frame;
	c.closed = end_closed;
	d = c;
	c.my_id = a_id;
	c.arg = a;
	d.my_id = 2;
	d.arg = b;
	a->closed_err = b->closed_err = 1;
	a->t = sdm_transport_new(NULL, &c);
	b->t = sdm_transport_new(NULL, &d);
	if (!a->t || !b->t || sdm_transport_listen(b->t, host, 0, 1, &port) < 0 ||
	    sdm_transport_connect(a->t, host, port, 2) < 0)
		return -1;
	until = sdm_now_ms() + 10000;
	while ((!a->connected || !b->connected) && sdm_now_ms() < until) {
		sdm_transport_progress(a->t, 5);
		sdm_transport_progress(b->t, 5);
	}
	return a->connected && b->connected ? 0 : -1;
}

static void *frame_of(size_t payload, size_t *ret_len)
{
	void *p = calloc(1, payload), *buf = NULL;
	struct sdm_message *m = p ? sdm_message_new(SDM_MSG_IOF, p, payload) : NULL;

	if (m && sdm_message_encode_alloc(m, &buf, ret_len) < 0)
		buf = NULL;
	sdm_message_free(m);
	free(p);
	return buf;
}

/* Run only b's engine (a reads nothing) for ms; b sends frames to a all along. */
static unsigned int flood(struct end *a, struct end *b, int ms)
{
	uint64_t until = sdm_now_ms() + ms;
	unsigned int sent = 0;
	size_t len;
	void *f = frame_of(FRAME_BYTES, &len);

	while (f && b->closed_err == 1 && sdm_now_ms() < until) {
		if (sdm_transport_send(b->t, b->peer, f, len) == 0)
			sent++;
		sdm_transport_progress(b->t, 10);
	}
	(void)a;
	free(f);
	return sent;
}

static int run(const char *cmd)
{
	int rc = system(cmd);

	return rc == 0 ? 0 : -1;
}

/*
 * A node cut off: the test's own network namespace, an address on lo, and
 * once the link is up a blackhole rule ahead of the local table for it.
 * The connector has a frame in flight, the acceptor is idle: both links
 * close with ETIMEDOUT, the idle one through keepalive probes.
 */
TEST(silent_node_closes_both_ends)
{
	struct sdm_auth_secret secret;
	struct end a = { 0 }, b = { 0 };
	uint64_t start, until;
	size_t len;
	void *f;

	if (unshare(CLONE_NEWNET) < 0)
		SKIP(return, "needs root for a network namespace of its own: %s",
		     strerror(errno));
	ASSERT_EQ(0, run("ip link set lo up && ip addr add 10.99.0.2/32 dev lo"));
	ASSERT_EQ(0, sdm_auth_secret_generate(&secret));
	ASSERT_EQ(0, link_up(&secret, "10.99.0.2", 1, &a, &b));
	ASSERT_EQ(0, run("ip link add cut0 type bridge && ip link set cut0 up && "
			 "ip route add 10.99.0.2 dev cut0 table 100 && "
			 "ip rule add pref 10 to 10.99.0.2 lookup 100 && "
			 "ip rule del pref 0 && ip rule add pref 100 lookup local"));
	f = frame_of(64, &len);
	ASSERT_NE(NULL, f);
	start = sdm_now_ms();
	ASSERT_EQ(0, sdm_transport_send(a.t, a.peer, f, len));
	free(f);
	until = start + 5 * PEER_TIMEOUT_MS;
	while ((a.closed_err == 1 || b.closed_err == 1) && sdm_now_ms() < until) {
		sdm_transport_progress(a.t, 10);
		sdm_transport_progress(b.t, 10);
	}
	TH_LOG("closed after %llu ms", (unsigned long long)(sdm_now_ms() - start));
	EXPECT_EQ(-ETIMEDOUT, a.closed_err);
	EXPECT_EQ(-ETIMEDOUT, b.closed_err);
	EXPECT_EQ(0, b.frames);
	sdm_transport_free(a.t);
	sdm_transport_free(b.t);
}

/* A server that reads nothing while its window is closed: the link ends. */
TEST(closed_window_to_a_server_times_out)
{
	struct sdm_auth_secret secret;
	struct end a = { 0 }, b = { 0 };
	unsigned int sent;

	ASSERT_EQ(0, sdm_auth_secret_generate(&secret));
	ASSERT_EQ(0, link_up(&secret, "127.0.0.1", 1, &a, &b));
	sent = flood(&a, &b, 6 * PEER_TIMEOUT_MS);
	TH_LOG("%u frames of %u KiB sent before the end", sent, FRAME_BYTES >> 10);
	EXPECT_EQ(-ETIMEDOUT, b.closed_err);
	sdm_transport_free(a.t);
	sdm_transport_free(b.t);
}

/* The front end stopped (^Z) for three peer timeouts: nothing is lost. */
TEST(closed_window_to_the_front_end_stays_open)
{
	struct sdm_auth_secret secret;
	struct end a = { 0 }, b = { 0 };
	unsigned int sent;
	uint64_t until;

	ASSERT_EQ(0, sdm_auth_secret_generate(&secret));
	ASSERT_EQ(0, link_up(&secret, "127.0.0.1", SDM_TRANSPORT_ID_FRONTEND, &a, &b));
	sent = flood(&a, &b, 3 * PEER_TIMEOUT_MS);
	EXPECT_EQ(1, b.closed_err);
	ASSERT_LT(4u, sent);	/* more than the sockets hold */
	until = sdm_now_ms() + 30000;
	while (a.frames < sent && sdm_now_ms() < until) {
		sdm_transport_progress(a.t, 1);
		sdm_transport_progress(b.t, 1);
	}
	EXPECT_EQ(sent, a.frames);
	EXPECT_EQ(1, a.closed_err);
	EXPECT_EQ(1, b.closed_err);
	sdm_transport_free(a.t);
	sdm_transport_free(b.t);
}

TEST(peer_timeout_from_the_environment)
{
	static const char *const bad[] = { "0", "abc", "3601", "", "-5", "20s" };
	struct sdm_transport_config c;
	char why[96];

	unsetenv(SDM_PEER_TIMEOUT_VAR);
	ASSERT_EQ(0, sdm_startup_transport_defaults(&c, why, sizeof(why)));
	EXPECT_EQ(SDM_PEER_TIMEOUT_S * 1000, c.peer_timeout_ms);
	setenv(SDM_PEER_TIMEOUT_VAR, "20", 1);
	ASSERT_EQ(0, sdm_startup_transport_defaults(&c, why, sizeof(why)));
	EXPECT_EQ(20000, c.peer_timeout_ms);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv(SDM_PEER_TIMEOUT_VAR, bad[i], 1);
		c.peer_timeout_ms = 1;
		EXPECT_EQ(-EINVAL, sdm_startup_transport_defaults(&c, why, sizeof(why)));
		EXPECT_NE(NULL, strstr(why, "SDM_PEER_TIMEOUT='")) TH_LOG("%s", why);
		EXPECT_NE(NULL, strstr(why, "want seconds, 1 to 3600"));
		/* The rest is set either way, the timeout to its default. */
		EXPECT_EQ(SDM_PEER_TIMEOUT_S * 1000, c.peer_timeout_ms);
		EXPECT_EQ(SDM_MSG_MAX, c.max_frame);
	}
	unsetenv(SDM_PEER_TIMEOUT_VAR);
}

/* A daemon started by hand with a bad value: one line naming it, exit 2. */
TEST(daemons_refuse_a_bad_peer_timeout)
{
	static const char *const cmd[] = {
		SDM_BINDIR "/sdm-master 127.0.0.1:1",
		SDM_BINDIR "/sdm-server 7000",
	};
	char line[256], out[1024];

	for (size_t i = 0; i < sizeof(cmd) / sizeof(cmd[0]); i++) {
		FILE *p;
		size_t n;
		int lines = 0;

		snprintf(line, sizeof(line),
			 "SDM_ID=0 SDM_SECRET=%064d SDM_PEER_TIMEOUT=10m %s 2>&1", 7, cmd[i]);
		p = popen(line, "r");
		ASSERT_NE(NULL, p);
		n = fread(out, 1, sizeof(out) - 1, p);
		out[n] = 0;
		EXPECT_EQ(2, WEXITSTATUS(pclose(p))) TH_LOG("%s: %s", cmd[i], out);
		for (size_t j = 0; j < n; j++)
			lines += out[j] == '\n';
		EXPECT_EQ(1, lines) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, ": SDM_PEER_TIMEOUT='10m': want seconds, 1 to 3600"));
	}
}

TEST_HARNESS_MAIN
