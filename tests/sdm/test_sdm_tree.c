// SPDX-License-Identifier: GPL-2.0
/*
 * Integration tests of the SDM tree on loopback: a front end, the master
 * and N servers (echo backend) started with the front-end library.
 *
 *   front end ── master ── 0 ─┬─ 1
 *                             ├─ 2 ── 3
 *                             └─ 4 ─┬─ 5      (binomial tree, N = 7)
 *                                   └─ 6
 *
 * Daemons' stderr goes to build/tests/sdm/test_sdm_tree.log.
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "sdm/auth.h"
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "sdm/iof.h"
#include "startup.h"
#include "transport.h"

#ifndef SDM_BINDIR
#define SDM_BINDIR "build/sdm"
#endif
#define LOG_PATH	SDM_BINDIR "/../tests/sdm/test_sdm_tree.log"
#define CMD_TIMEOUT	10000

/* Room for 1024 servers' processes and the front end's descriptors. */
static void raise_limits(void)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

/* Can this user run n more processes? (Raise the soft limit first.) */
static bool enough_processes(rlim_t n)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NPROC, &r) < 0 || r.rlim_cur == RLIM_INFINITY)
		return true;
	if (r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NPROC, &r);
	}
	return r.rlim_cur == RLIM_INFINITY || r.rlim_cur >= n + 256;
}

static struct sdm_fe_config base_config(uint32_t n)
{
	struct sdm_fe_config c = {
		.nservers = n,
		.bindir = SDM_BINDIR,
		.log_path = LOG_PATH,
		.init_timeout_ms = 40000,
	};

	return c;
}

static struct sdm_idset *range_set(sdm_id first, sdm_id last)
{
	struct sdm_idset *s = sdm_set_new();

	if (s && sdm_set_add_range(s, first, last) < 0) {
		sdm_set_free(s);
		return NULL;
	}
	return s;
}

/* True if the file at path contains needle. */
static bool log_contains(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

FIXTURE(tree) {
	struct sdm_fe *fe;
	struct sdm_idset *all;
	uint32_t n;
};

FIXTURE_VARIANT(tree) {
	uint32_t n;
};

FIXTURE_VARIANT_ADD(tree, n1) { .n = 1 };
FIXTURE_VARIANT_ADD(tree, n2) { .n = 2 };
FIXTURE_VARIANT_ADD(tree, n7) { .n = 7 };
FIXTURE_VARIANT_ADD(tree, n64) { .n = 64 };

/* A tree of n servers, "all n initialised" as one acknowledgement. */
static void tree_start(struct __test_metadata *_metadata, FIXTURE_DATA(tree) *self,
		       uint32_t n)
{
	struct sdm_fe_config c = base_config(n);
	const struct sdm_fe_result *init;
	char err[256] = "";
	int rc;

	raise_limits();
	if (!enough_processes(n + 8))
		SKIP(return, "RLIMIT_NPROC is below the %u processes this needs", n + 8);
	self->n = n;
	rc = sdm_fe_start(&c, &self->fe, err, sizeof(err));
	ASSERT_EQ(0, rc) TH_LOG("start of %u servers: %s (%s)", n, strerror(-rc), err);
	self->all = range_set(0, n - 1);
	ASSERT_NE(NULL, self->all);
	init = sdm_fe_init_result(self->fe);
	ASSERT_EQ(1, init->nev);
	ASSERT_EQ(SDM_MSG_REPLY, init->ev[0].type);
	ASSERT_TRUE(sdm_set_equal(init->ev[0].src, self->all));
}

FIXTURE_SETUP(tree)
{
	tree_start(_metadata, self, variant->n);
}

FIXTURE_TEARDOWN(tree)
{
	sdm_fe_stop(self->fe);
	sdm_set_free(self->all);
}

/* Identical replies reach the front end as exactly one event for all N. */
static void identical_replies_aggregate(struct __test_metadata *_metadata,
					FIXTURE_DATA(tree) *self)
{
	struct sdm_fe_result r;
	uint64_t frames, bytes;

	sdm_fe_counters_reset(self->fe);
	ASSERT_EQ(0, sdm_fe_command(self->fe, self->all, "echo hello",
				    CMD_TIMEOUT, &r));
	sdm_fe_counters(self->fe, &frames, &bytes);
	EXPECT_TRUE(r.complete);
	ASSERT_EQ(1, r.nev);
	EXPECT_EQ(SDM_MSG_REPLY, r.ev[0].type);
	EXPECT_STREQ("hello", (char *)r.ev[0].payload);
	EXPECT_TRUE(sdm_set_equal(r.ev[0].src, self->all));
	EXPECT_EQ(1, frames);
	sdm_fe_result_free(&r);

	/* Ids outside the session are refused, not waited for. */
	{
		struct sdm_idset *bad = range_set(0, self->n);
		uint32_t req;

		ASSERT_NE(NULL, bad);
		EXPECT_EQ(-EINVAL, sdm_fe_submit(self->fe, bad, "echo x", 6,
						 CMD_TIMEOUT, &req));
		sdm_set_free(bad);
	}

	/* A subset: only the addressed ids answer. */
	if (self->n > 2) {
		struct sdm_idset *some = range_set(1, self->n - 1);

		ASSERT_NE(NULL, some);
		ASSERT_EQ(0, sdm_fe_command(self->fe, some, "echo sub",
					    CMD_TIMEOUT, &r));
		ASSERT_EQ(1, r.nev);
		EXPECT_TRUE(sdm_set_equal(r.ev[0].src, some));
		sdm_fe_result_free(&r);
		sdm_set_free(some);
	}
}

/* k distinct payloads: k events whose source sets partition the N ids. */
static void distinct_replies_partition(struct __test_metadata *_metadata,
				       FIXTURE_DATA(tree) *self)
{
	uint32_t k = self->n < 3 ? self->n : 3;
	struct sdm_idset *seen = sdm_set_new();
	struct sdm_fe_result r;
	char cmd[32];

	ASSERT_NE(NULL, seen);
	snprintf(cmd, sizeof(cmd), "mod %u", k);
	ASSERT_EQ(0, sdm_fe_command(self->fe, self->all, cmd, CMD_TIMEOUT,
				    &r));
	EXPECT_TRUE(r.complete);
	ASSERT_EQ(k, r.nev);
	for (unsigned int i = 0; i < r.nev; i++) {
		unsigned int rem;
		sdm_id id;

		ASSERT_EQ(SDM_MSG_REPLY, r.ev[i].type);
		ASSERT_EQ(1, sscanf((char *)r.ev[i].payload, "mod %u", &rem));
		/* Disjoint from the others, and exactly the ids = rem mod k. */
		EXPECT_FALSE(sdm_set_intersects(seen, r.ev[i].src));
		sdm_set_union(seen, r.ev[i].src);
		sdm_set_for_each(id, r.ev[i].src)
			ASSERT_EQ(rem, id % k);
	}
	EXPECT_TRUE(sdm_set_equal(seen, self->all));
	sdm_fe_result_free(&r);

	/* Every id distinct: N events of one id each. */
	if (self->n <= 64) {
		ASSERT_EQ(0, sdm_fe_command(self->fe, self->all, "id",
					    CMD_TIMEOUT, &r));
		EXPECT_EQ(self->n, r.nev);
		for (unsigned int i = 0; i < r.nev; i++)
			EXPECT_EQ(1, sdm_set_size(r.ev[i].src));
		sdm_fe_result_free(&r);
	}
	sdm_set_free(seen);
}

/* A server killed while a command is pending: an error event names it. */
static void killed_server_reported(struct __test_metadata *_metadata,
				   FIXTURE_DATA(tree) *self)
{
	sdm_id victim = self->n - 1;	/* a leaf of the binomial tree */
	unsigned int want = self->n > 1 ? 2 : 1;	/* error (+ reply) */
	struct sdm_idset *rest = sdm_set_new();
	struct sdm_fe_result r;
	bool named = false, rest_ok = self->n == 1;
	uint32_t req;

	ASSERT_NE(NULL, rest);
	if (self->n > 1)
		ASSERT_EQ(0, sdm_set_add_range(rest, 0, self->n - 2));
	ASSERT_EQ(0, sdm_fe_submit(self->fe, self->all, "sleep 1500 late", 15,
				   20000, &req));
	ASSERT_EQ(0, kill(sdm_fe_server_pid(self->fe, victim), SIGKILL));
	ASSERT_EQ(0, sdm_fe_collect(self->fe, req, &r));
	EXPECT_TRUE(r.complete);
	for (unsigned int i = 0; i < r.nev; i++) {
		if (r.ev[i].type == SDM_MSG_ERROR &&
		    sdm_set_size(r.ev[i].src) == 1 &&
		    sdm_set_contains(r.ev[i].src, victim))
			named = true;
		if (r.ev[i].type == SDM_MSG_REPLY &&
		    sdm_set_equal(r.ev[i].src, rest) &&
		    !strcmp((char *)r.ev[i].payload, "late"))
			rest_ok = true;
	}
	EXPECT_TRUE(named) TH_LOG("no error event naming server %u", victim);
	EXPECT_TRUE(rest_ok) TH_LOG("the other servers' reply is missing");
	EXPECT_EQ(want, r.nev);
	sdm_fe_result_free(&r);

	/* The tree still serves the survivors; the dead id errors at once. */
	ASSERT_EQ(0, sdm_fe_command(self->fe, self->all, "echo again",
				    CMD_TIMEOUT, &r));
	EXPECT_EQ(want, r.nev);
	sdm_fe_result_free(&r);
	sdm_set_free(rest);
}

TEST_F_TIMEOUT(tree, identical_replies_aggregate, 120)
{
	identical_replies_aggregate(_metadata, self);
}

TEST_F_TIMEOUT(tree, distinct_replies_partition, 120)
{
	distinct_replies_partition(_metadata, self);
}

TEST_F_TIMEOUT(tree, killed_server_reported, 120)
{
	killed_server_reported(_metadata, self);
}

/*
 * The same three on 1024 servers, in one tree: starting a tree of 1024
 * processes is most of its time (three trees took 42 of the test's 60 s
 * when each check started its own), and the checks leave it serving
 * (the kill comes last).
 */
FIXTURE(large) {
	FIXTURE_DATA(tree) tree;
};

FIXTURE_SETUP(large)
{
}

FIXTURE_TEARDOWN(large)
{
	sdm_fe_stop(self->tree.fe);
	sdm_set_free(self->tree.all);
}

TEST_F_TIMEOUT(large, tree_of_1024_servers, 300)
{
	tree_start(_metadata, &self->tree, 1024);
	identical_replies_aggregate(_metadata, &self->tree);
	distinct_replies_partition(_metadata, &self->tree);
	killed_server_reported(_metadata, &self->tree);
}

/*
 * Servers that own several ranks (one server per node): commands and
 * replies speak of ranks; a server's per-rank replies merge in it.
 */
FIXTURE(ranks) {
	struct sdm_fe *fe;
	struct sdm_idset *all;
};

FIXTURE_VARIANT(ranks) {
	uint32_t n;
	const char *const *sets;
	sdm_id last;		/* the highest rank */
};

static const char *const two_each[] = { "0-1", "2-3", "4-5" };
static const char *const uneven[] = { "0-4", "5", "6-8", "9", "10", "11-17", "18-19" };
static const char *const cyclic[] = { "0,3,6", "1,4,7", "2,5" };
static const char *const one_server[] = { "0-99" };

FIXTURE_VARIANT_ADD(ranks, two_each) { .n = 3, .sets = two_each, .last = 5 };
FIXTURE_VARIANT_ADD(ranks, uneven) { .n = 7, .sets = uneven, .last = 19 };
FIXTURE_VARIANT_ADD(ranks, cyclic) { .n = 3, .sets = cyclic, .last = 7 };
FIXTURE_VARIANT_ADD(ranks, one_server) { .n = 1, .sets = one_server, .last = 99 };

FIXTURE_SETUP(ranks)
{
	struct sdm_fe_config c = base_config(variant->n);
	const struct sdm_fe_result *init;
	char err[256] = "";
	int rc;

	raise_limits();
	c.ranks = variant->sets;
	rc = sdm_fe_start(&c, &self->fe, err, sizeof(err));
	ASSERT_EQ(0, rc) TH_LOG("start: %s (%s)", strerror(-rc), err);
	self->all = range_set(0, variant->last);
	/* Every rank initialised, in one event. */
	init = sdm_fe_init_result(self->fe);
	ASSERT_EQ(1, init->nev);
	ASSERT_EQ(SDM_MSG_REPLY, init->ev[0].type);
	ASSERT_TRUE(sdm_set_equal(init->ev[0].src, self->all));
}

FIXTURE_TEARDOWN(ranks)
{
	sdm_fe_stop(self->fe);
	sdm_set_free(self->all);
}

/* The servers answer each rank apart; identical answers still arrive once. */
TEST_F_TIMEOUT(ranks, per_rank_replies_aggregate, 120)
{
	struct sdm_idset *seen = sdm_set_new(), *some = sdm_set_new(), *bad;
	struct sdm_fe_result r;
	uint64_t frames, bytes;
	uint32_t req;

	sdm_fe_counters_reset(self->fe);
	ASSERT_EQ(0, sdm_fe_command(self->fe, self->all, "echo hello",
				    CMD_TIMEOUT, &r));
	sdm_fe_counters(self->fe, &frames, &bytes);
	EXPECT_TRUE(r.complete);
	ASSERT_EQ(1, r.nev);
	EXPECT_STREQ("hello", (char *)r.ev[0].payload);
	EXPECT_TRUE(sdm_set_equal(r.ev[0].src, self->all));
	EXPECT_EQ(1, frames);
	sdm_fe_result_free(&r);

	/* Distinct per rank: one event per rank. */
	ASSERT_EQ(0, sdm_fe_command(self->fe, self->all, "id", CMD_TIMEOUT, &r));
	EXPECT_EQ(variant->last + 1, r.nev);
	for (unsigned int i = 0; i < r.nev; i++) {
		unsigned int id;

		ASSERT_EQ(1, sscanf((char *)r.ev[i].payload, "id %u", &id));
		EXPECT_EQ(1, sdm_set_size(r.ev[i].src));
		EXPECT_TRUE(sdm_set_contains(r.ev[i].src, id));
	}
	sdm_fe_result_free(&r);

	/* One answer per server, for exactly the ranks it owns. */
	ASSERT_EQ(0, sdm_fe_command(self->fe, self->all, "server", CMD_TIMEOUT, &r));
	EXPECT_EQ(variant->n, r.nev);
	for (unsigned int i = 0; i < r.nev; i++) {
		struct sdm_idset *want = sdm_set_new();
		unsigned int srv = 0;

		ASSERT_EQ(1, sscanf((char *)r.ev[i].payload, "server %u", &srv));
		ASSERT_LT(srv, variant->n);
		ASSERT_EQ(0, sdm_set_parse(want, variant->sets[srv], NULL));
		EXPECT_TRUE(sdm_set_equal(want, r.ev[i].src)) TH_LOG("server %u", srv);
		EXPECT_FALSE(sdm_set_intersects(seen, r.ev[i].src));
		sdm_set_union(seen, r.ev[i].src);
		sdm_set_free(want);
	}
	EXPECT_TRUE(sdm_set_equal(seen, self->all));
	sdm_fe_result_free(&r);

	/* Some ranks only (the odd ones): only they answer. */
	for (sdm_id id = 1; id <= variant->last; id += 2)
		sdm_set_add_element(some, id);
	ASSERT_EQ(0, sdm_fe_command(self->fe, some, "echo odd", CMD_TIMEOUT, &r));
	ASSERT_EQ(1, r.nev);
	EXPECT_TRUE(sdm_set_equal(r.ev[0].src, some));
	sdm_fe_result_free(&r);

	/* A rank no server owns is refused. */
	bad = range_set(0, variant->last + 1);
	EXPECT_EQ(-EINVAL, sdm_fe_submit(self->fe, bad, "echo x", 6, CMD_TIMEOUT, &req));
	sdm_set_free(bad);
	sdm_set_free(some);
	sdm_set_free(seen);
}

/* A server killed mid-command: its ranks, exactly, are answered by an error. */
TEST_F_TIMEOUT(ranks, killed_server_names_its_ranks, 120)
{
	sdm_id victim = variant->n - 1;	/* a leaf */
	struct sdm_idset *lost = sdm_set_new();
	struct sdm_fe_result r;
	bool named = false;
	uint32_t req;

	ASSERT_EQ(0, sdm_set_parse(lost, variant->sets[victim], NULL));
	ASSERT_EQ(0, sdm_fe_submit(self->fe, self->all, "sleep 1500 late", 15,
				   20000, &req));
	ASSERT_EQ(0, kill(sdm_fe_server_pid(self->fe, victim), SIGKILL));
	ASSERT_EQ(0, sdm_fe_collect(self->fe, req, &r));
	EXPECT_TRUE(r.complete);
	for (unsigned int i = 0; i < r.nev; i++) {
		if (r.ev[i].type == SDM_MSG_ERROR)
			named = sdm_set_equal(r.ev[i].src, lost);
		else
			EXPECT_FALSE(sdm_set_intersects(r.ev[i].src, lost));
	}
	EXPECT_TRUE(named) TH_LOG("no error event for exactly %s", variant->sets[victim]);
	EXPECT_EQ(variant->n > 1 ? 2 : 1, r.nev);
	sdm_fe_result_free(&r);
	sdm_set_free(lost);
}

TEST(rank_sets_checked)
{
	static const char *const overlap[] = { "0-2", "2-3" };
	static const char *const empty[] = { "0-2", "" };
	struct sdm_fe_config c = base_config(2);
	struct sdm_fe *fe = NULL;
	char err[256] = "";

	c.ranks = overlap;
	EXPECT_EQ(-EINVAL, sdm_fe_start(&c, &fe, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "rank sets")) TH_LOG("%s", err);
	c.ranks = empty;
	EXPECT_EQ(-EINVAL, sdm_fe_start(&c, &fe, err, sizeof(err)));
}

/* Tests that run one session; the teardown stops it whatever happened. */
FIXTURE(session) {
	struct sdm_fe *fe;
};

FIXTURE_SETUP(session)
{
	raise_limits();
}

FIXTURE_TEARDOWN(session)
{
	sdm_fe_stop(self->fe);
}

/* A port already in use: the server binds the next one. */
TEST_F_TIMEOUT(session, port_in_use, 60)
{
	struct sdm_fe_config c = base_config(3);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char err[256] = "";
	int fd, one = 1, rc;
	socklen_t len = sizeof(sin);

	/* Take a port, then ask the servers to start from it. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, fd);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	sin.sin_port = htons(10000 + (getpid() % 20000));
	while (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		sin.sin_port = htons(ntohs(sin.sin_port) + 7);
	ASSERT_EQ(0, listen(fd, 1));
	getsockname(fd, (struct sockaddr *)&sin, &len);
	c.base_port = ntohs(sin.sin_port);
	rc = sdm_fe_start(&c, &self->fe, err, sizeof(err));
	ASSERT_EQ(0, rc) TH_LOG("%s", err);
	EXPECT_NE(c.base_port, sdm_fe_server_port(self->fe, 0));
	EXPECT_LT(c.base_port, sdm_fe_server_port(self->fe, 0));
	for (sdm_id i = 0; i < 3; i++)
		for (sdm_id j = i + 1; j < 3; j++)
			EXPECT_NE(sdm_fe_server_port(self->fe, i),
				  sdm_fe_server_port(self->fe, j));
	sdm_fe_stop(self->fe);
	self->fe = NULL;
	close(fd);
}

/* A server with the wrong secret is rejected, named and logged. */
TEST_F_TIMEOUT(session, wrong_secret_rejected, 60)
{
	struct sdm_fe_config c = base_config(4);
	const struct sdm_fe_result *init;
	struct sdm_idset *good = range_set(0, 2);
	bool named = false, others = false;
	char err[256] = "";
	int rc;

	c.bad_secret = true;
	c.bad_secret_id = 3;
	c.init_timeout_ms = 10000;
	rc = sdm_fe_start(&c, &self->fe, err, sizeof(err));
	ASSERT_EQ(-EHOSTDOWN, rc) TH_LOG("%s", err);
	init = sdm_fe_init_result(self->fe);
	for (unsigned int i = 0; i < init->nev; i++) {
		if (init->ev[i].type == SDM_MSG_ERROR &&
		    sdm_set_size(init->ev[i].src) == 1 &&
		    sdm_set_contains(init->ev[i].src, 3) &&
		    strstr((char *)init->ev[i].payload, "authentication failed"))
			named = true;
		if (init->ev[i].type == SDM_MSG_REPLY &&
		    sdm_set_equal(init->ev[i].src, good))
			others = true;
	}
	EXPECT_TRUE(named) TH_LOG("%s", err);
	EXPECT_TRUE(others);
	EXPECT_NE(NULL, strstr(err, "3"));
	sdm_fe_stop(self->fe);
	self->fe = NULL;
	EXPECT_TRUE(log_contains(LOG_PATH, "authentication failed"));
	sdm_set_free(good);
}

struct probe {
	bool connected;
	int closed_err;
	bool closed;
};

static void probe_connected(void *arg, int peer, int id, bool incoming)
{
	(void)peer;
	(void)id;
	(void)incoming;
	((struct probe *)arg)->connected = true;
}

static void probe_closed(void *arg, int peer, int err)
{
	(void)peer;
	((struct probe *)arg)->closed = true;
	((struct probe *)arg)->closed_err = err;
}

/* Malformed frames from an authenticated peer: dropped, daemon lives on. */
TEST_F_TIMEOUT(session, malformed_frame_dropped, 60)
{
	struct sdm_fe_config c = base_config(2);
	struct sdm_transport_config tc = { 0 };
	struct sdm_auth_secret secret;
	struct sdm_transport *t;
	struct sdm_fe_result r;
	struct probe pr = { 0 };
	struct sdm_idset *all = range_set(0, 1);
	uint8_t frame[SDM_FRAME_HDR_LEN + 6];
	char err[256] = "";
	uint64_t until;
	int peer;

	ASSERT_EQ(0, sdm_fe_start(&c, &self->fe, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, sdm_auth_secret_load(&secret, sdm_fe_secret_path(self->fe)));
	ASSERT_EQ(0, sdm_startup_transport_defaults(&tc, NULL, 0));
	tc.my_id = 1000;
	tc.secret = &secret;
	tc.arg = &pr;
	tc.connected = probe_connected;
	tc.closed = probe_closed;
	t = sdm_transport_new(NULL, &tc);
	ASSERT_NE(NULL, t);
	peer = sdm_transport_connect(t, "127.0.0.1",
				     sdm_fe_server_port(self->fe, 1), 1);
	ASSERT_LE(0, peer);
	until = sdm_now_ms() + 10000;
	while (!pr.connected && !pr.closed && sdm_now_ms() < until)
		sdm_transport_progress(t, 100);
	ASSERT_TRUE(pr.connected);

	/* A well-framed message whose body is garbage: dropped. */
	ASSERT_EQ(0, sdm_frame_header_encode(frame, SDM_MSG_COMMAND, 6));
	memcpy(frame + SDM_FRAME_HDR_LEN, "\xff\xff\xff\xff\xff\xff", 6);
	ASSERT_EQ(0, sdm_transport_send(t, peer, frame, sizeof(frame)));
	/* A bad magic: the stream is unusable, the server hangs up. */
	memset(frame, 0xee, sizeof(frame));
	ASSERT_EQ(0, sdm_transport_send(t, peer, frame, sizeof(frame)));
	until = sdm_now_ms() + 10000;
	while (!pr.closed && sdm_now_ms() < until)
		sdm_transport_progress(t, 100);
	EXPECT_TRUE(pr.closed);
	sdm_transport_free(t);

	/* Not even authenticated: a raw socket speaking something else. */
	{
		struct sockaddr_in sin = { .sin_family = AF_INET };
		char junk[64];
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		ASSERT_LE(0, fd);
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons(sdm_fe_server_port(self->fe, 1));
		ASSERT_EQ(0, connect(fd, (struct sockaddr *)&sin, sizeof(sin)));
		ASSERT_LT(0, write(fd, "GET / HTTP/1.0\r\n\r\n", 18));
		/* The server hangs up: read drains its challenge, then EOF. */
		while (read(fd, junk, sizeof(junk)) > 0)
			;
		close(fd);
	}

	/* The server is still alive and the tree still answers. */
	EXPECT_EQ(0, kill(sdm_fe_server_pid(self->fe, 1), 0));
	ASSERT_EQ(0, sdm_fe_command(self->fe, all, "echo still here", CMD_TIMEOUT,
				    &r));
	ASSERT_EQ(1, r.nev);
	EXPECT_TRUE(sdm_set_equal(r.ev[0].src, all));
	sdm_fe_result_free(&r);
	sdm_fe_stop(self->fe);
	self->fe = NULL;
	EXPECT_TRUE(log_contains(LOG_PATH, "dropping malformed frame"));
	EXPECT_TRUE(log_contains(LOG_PATH, "malformed frame header"));
	sdm_set_free(all);
}

struct sink {
	bool connected;
	int peer;
	unsigned int frames;
	size_t bytes;
	bool content_ok;
};

static void sink_connected(void *arg, int peer, int id, bool incoming)
{
	struct sink *k = arg;

	k->connected = true;
	k->peer = peer;
}

static void sink_frame(void *arg, int peer, const void *buf, size_t len)
{
	struct sink *k = arg;
	struct sdm_message *m;

	if (sdm_message_decode(buf, len, &m) < 0) {
		k->content_ok = false;
		return;
	}
	for (size_t i = 0; i < m->len; i++) {
		if (m->payload[i] != (uint8_t)(i * 7 + k->frames)) {
			k->content_ok = false;
			break;
		}
	}
	k->frames++;
	k->bytes += m->len;
	sdm_message_free(m);
}

static void *big_frame(size_t payload, unsigned int seed, size_t *ret_len)
{
	uint8_t *p = malloc(payload);
	struct sdm_message *m;
	void *buf = NULL;

	for (size_t i = 0; p && i < payload; i++)
		p[i] = i * 7 + seed;
	m = p ? sdm_message_new(SDM_MSG_COMMAND, p, payload) : NULL;
	if (m && sdm_message_encode_alloc(m, &buf, ret_len) < 0)
		buf = NULL;
	sdm_message_free(m);
	free(p);
	return buf;
}

/*
 * The TCP transport on its own: frames much larger than the socket
 * buffers go through partial writes and reads intact, and a peer's send
 * queue stops at its bound with -ENOBUFS.
 */
TEST(transport_partial_io_and_queue_bound)
{
	struct sdm_transport_config a = { 0 }, b = { 0 };
	struct sink ka = { .content_ok = true }, kb = { .content_ok = true };
	struct sdm_auth_secret secret;
	struct sdm_transport *ta, *tb;
	size_t len, len2;
	void *f0, *f1;
	int port, peer;
	uint64_t until;

	ASSERT_EQ(0, sdm_auth_secret_generate(&secret));
	ASSERT_EQ(0, sdm_startup_transport_defaults(&a, NULL, 0));
	b = a;
	a.my_id = 1;
	b.my_id = 2;
	a.secret = b.secret = &secret;
	a.arg = &ka;
	b.arg = &kb;
	a.connected = b.connected = sink_connected;
	a.frame = b.frame = sink_frame;
	a.send_queue_max = 8u << 20;
	ta = sdm_transport_new(NULL, &a);
	tb = sdm_transport_new(NULL, &b);
	ASSERT_NE(NULL, ta);
	ASSERT_NE(NULL, tb);
	ASSERT_EQ(0, sdm_transport_listen(tb, "127.0.0.1", 0, 1, &port));
	peer = sdm_transport_connect(ta, "127.0.0.1", port, 2);
	ASSERT_LE(0, peer);
	until = sdm_now_ms() + 10000;
	while ((!ka.connected || !kb.connected) && sdm_now_ms() < until) {
		sdm_transport_progress(ta, 5);
		sdm_transport_progress(tb, 5);
	}
	ASSERT_TRUE(ka.connected && kb.connected);

	/*
	 * 7 MiB is more than the sockets hold while the receiver is not
	 * reading: part of it waits in the queue; a second one would take
	 * the queue over its 8 MiB bound.
	 */
	f0 = big_frame(7u << 20, 0, &len);
	f1 = big_frame(7u << 20, 1, &len2);
	ASSERT_NE(NULL, f0);
	ASSERT_NE(NULL, f1);
	ASSERT_EQ(0, sdm_transport_send(ta, peer, f0, len));
	EXPECT_LT(0, sdm_transport_queued(ta, peer));	/* a partial write */
	EXPECT_EQ(-ENOBUFS, sdm_transport_send(ta, peer, f1, len2));
	until = sdm_now_ms() + 20000;
	while (kb.frames < 1 && sdm_now_ms() < until) {
		sdm_transport_progress(ta, 1);
		sdm_transport_progress(tb, 1);
	}
	EXPECT_EQ(1, kb.frames);
	EXPECT_EQ(0, sdm_transport_queued(ta, peer));
	/* Drained: the frame refused before goes now. */
	ASSERT_EQ(0, sdm_transport_send(ta, peer, f1, len2));
	until = sdm_now_ms() + 20000;
	while (kb.frames < 2 && sdm_now_ms() < until) {
		sdm_transport_progress(ta, 1);
		sdm_transport_progress(tb, 1);
	}
	EXPECT_EQ(2, kb.frames);
	EXPECT_EQ(2 * (7u << 20), kb.bytes);
	EXPECT_TRUE(kb.content_ok);
	free(f0);
	free(f1);
	sdm_transport_free(ta);
	sdm_transport_free(tb);
}

/* Output of programs run by the servers, stdin to selected ids. */
TEST_F_TIMEOUT(session, io_forwarding, 60)
{
	struct sdm_fe_config c = base_config(4);
	struct sdm_idset *all = range_set(0, 3), *sel = sdm_set_new();
	char got[4][64] = { { 0 } }, err_seen[4] = { 0 };
	struct sdm_fe_result r;
	char err[256] = "", buf[256];
	ssize_t n;
	int stream;
	sdm_id id;

	ASSERT_EQ(0, sdm_fe_start(&c, &self->fe, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, sdm_fe_command(self->fe, all, "spawn cat", CMD_TIMEOUT, &r));
	ASSERT_EQ(1, r.nev);
	EXPECT_STREQ("spawned", (char *)r.ev[0].payload);
	sdm_fe_result_free(&r);
	sdm_set_add_element(sel, 1);
	sdm_set_add_element(sel, 3);
	ASSERT_EQ(0, sdm_fe_stdin(self->fe, sel, "hello\n", 6));
	/* cat echoes stdin back on stdout; only 1 and 3 got any. */
	while (strlen(got[1]) < 6 || strlen(got[3]) < 6) {
		n = sdm_fe_read_output(self->fe, 10000, &id, &stream, buf,
				       sizeof(buf) - 1);
		ASSERT_LT(0, n) TH_LOG("no output from 1 and 3");
		ASSERT_LT(id, 4);
		EXPECT_EQ(SDM_IOF_STDOUT, stream);
		buf[n] = 0;
		snprintf(got[id] + strlen(got[id]),
			 sizeof(got[id]) - strlen(got[id]), "%.60s", buf);
	}
	EXPECT_STREQ("hello\n", got[1]);
	EXPECT_STREQ("hello\n", got[3]);
	EXPECT_STREQ("", got[0]);
	EXPECT_STREQ("", got[2]);

	/* stderr is forwarded apart from stdout, tagged with the id. */
	ASSERT_EQ(0, sdm_fe_command(self->fe, all, "spawn sh -c echo${IFS}oops>&2",
				    CMD_TIMEOUT, &r));
	ASSERT_EQ(1, r.nev);
	EXPECT_STREQ("spawned", (char *)r.ev[0].payload);
	sdm_fe_result_free(&r);
	while (!err_seen[0] || !err_seen[1] || !err_seen[2] || !err_seen[3]) {
		n = sdm_fe_read_output(self->fe, 10000, &id, &stream, buf,
				       sizeof(buf) - 1);
		ASSERT_LT(0, n) TH_LOG("no stderr from every server");
		ASSERT_LT(id, 4);
		buf[n] = 0;
		if (stream == SDM_IOF_STDERR) {
			EXPECT_STREQ("oops\n", buf);
			err_seen[id] = 1;
		}
	}
	sdm_fe_stop(self->fe);
	self->fe = NULL;
	sdm_set_free(all);
	sdm_set_free(sel);
}

/* Servers started by a launcher template, ids from a rank variable. */
TEST_F_TIMEOUT(session, launcher_template, 60)
{
	struct sdm_fe_config c = base_config(7);
	struct sdm_idset *all = range_set(0, 6);
	struct sdm_fe_result r;
	char err[256] = "";

	/* What mpirun does: n copies, each with its rank in PMI_RANK. */
	c.launcher = "i=0; while [ $i -lt {n} ]; do PMI_RANK=$i {cmd} & "
		     "i=$((i+1)); done; wait";
	ASSERT_EQ(0, sdm_fe_start(&c, &self->fe, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, sdm_fe_command(self->fe, all, "id", CMD_TIMEOUT, &r));
	EXPECT_EQ(7, r.nev);
	EXPECT_TRUE(r.complete);
	sdm_fe_result_free(&r);
	sdm_fe_stop(self->fe);
	self->fe = NULL;
	sdm_set_free(all);
}

/*
 * A server whose launcher fails never announces itself: the start gives
 * up then, with one error naming its rank, its host and the launcher's
 * last line, not at the initialization timeout (ten times this test's).
 */
TEST_F_TIMEOUT(session, launcher_failure_ends_the_wait, 60)
{
	struct sdm_fe_config c = base_config(3);
	char err[512] = "";

	c.launcher = "if [ {id} = 2 ]; then echo 'no such node' >&2; exit 3; fi; {cmd}";
	c.hosts = "h0,h1,h2";
	c.log_path = NULL;	/* the launchers' stderr in the session's own log */
	c.init_timeout_ms = 600000;
	ASSERT_EQ(-ETIMEDOUT, sdm_fe_start(&c, &self->fe, err, sizeof(err)));
	self->fe = NULL;	/* stopped by the failed start */
	EXPECT_NE(NULL, strstr(err, "only 2 of 3 servers")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "missing: 2 on h2; launcher: no such node"))
		TH_LOG("%s", err);
}

/* The master gives up on an unreachable front end with a clear error. */
TEST(master_unreachable_frontend)
{
	char path[] = SDM_BINDIR "/sdm-master";
	int pfd[2], status, fd, one = 1;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	char out[512] = "";
	struct sdm_auth_secret s;
	char hex[65], addr[32];
	pid_t pid;

	/* A port nobody listens on: bind one and close it. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	getsockname(fd, (struct sockaddr *)&sin, &len);
	close(fd);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", ntohs(sin.sin_port));
	ASSERT_EQ(0, sdm_auth_secret_generate(&s));
	sdm_auth_secret_to_hex(&s, hex);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		dup2(pfd[1], 2);
		setenv(SDM_AUTH_ENV_HEX, hex, 1);
		unsetenv(SDM_AUTH_ENV_FILE);
		execl(path, "sdm-master", "--tries", "3", addr, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	for (size_t off = 0;;) {
		ssize_t n = read(pfd[0], out + off, sizeof(out) - 1 - off);

		if (n <= 0)
			break;
		off += n;
	}
	close(pfd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(1, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(out, "could not reach the front end"))
		TH_LOG("stderr: %s", out);
}

/* Ids come from any of the launchers' variables. */
TEST(id_from_environment)
{
	const char *var;
	sdm_id id;

	for (int i = 0; sdm_startup_id_vars[i]; i++)
		unsetenv(sdm_startup_id_vars[i]);
	EXPECT_EQ(-ENOENT, sdm_startup_id_from_env(&id, &var));
	setenv("SLURM_PROCID", "17", 1);
	ASSERT_EQ(0, sdm_startup_id_from_env(&id, &var));
	EXPECT_EQ(17, id);
	EXPECT_STREQ("SLURM_PROCID", var);
	setenv("OMPI_COMM_WORLD_RANK", "5", 1);
	ASSERT_EQ(0, sdm_startup_id_from_env(&id, &var));
	EXPECT_EQ(5, id);
	setenv("SDM_ID", "x1", 1);
	EXPECT_EQ(-EINVAL, sdm_startup_id_from_env(&id, &var));
	for (int i = 0; sdm_startup_id_vars[i]; i++)
		unsetenv(sdm_startup_id_vars[i]);
}

/* The routing table survives its text form; garbage is refused. */
TEST(routing_table_codec)
{
	struct sdm_table t, u;
	char *buf;
	size_t len;

	ASSERT_EQ(0, sdm_table_alloc(&t, 3));
	for (int i = 0; i < 3; i++) {
		snprintf(t.e[i].host, sizeof(t.e[i].host), "node%d", i);
		t.e[i].port = 20000 + i;
	}
	t.span = 4;
	ASSERT_EQ(0, sdm_table_encode(&t, &buf, &len));
	ASSERT_EQ(0, sdm_table_parse(&u, buf, len));
	EXPECT_EQ(3, u.n);
	EXPECT_EQ(4, u.span);
	EXPECT_STREQ("node2", u.e[2].host);
	EXPECT_EQ(20002, u.e[2].port);
	sdm_table_free(&u);
	EXPECT_EQ(-EBADMSG, sdm_table_parse(&u, buf, len - 1));
	buf[len - 3] = 'x';
	EXPECT_EQ(-EBADMSG, sdm_table_parse(&u, buf, len));
	EXPECT_EQ(-EBADMSG, sdm_table_parse(&u, "sdm-init 1 n=99999999 span=1 star=0\n", 36));
	free(buf);

	/* Rank sets: "id host port ranks", absent for a server's own id. */
	{
		struct sdm_idset *a = sdm_set_new();
		char *text;

		ASSERT_EQ(0, sdm_set_parse(a, "0-3,9", NULL));
		ASSERT_EQ(0, sdm_table_set_ranks(&t, 0, a));
		ASSERT_EQ(0, sdm_table_encode(&t, &buf, &len));
		text = strndup(buf, len);
		EXPECT_NE(NULL, strstr(text, "\n0 node0 20000 0-3,9\n1 node1 20001\n"))
			TH_LOG("%s", text);
		ASSERT_EQ(0, sdm_table_parse(&u, buf, len));
		ASSERT_NE(NULL, u.ranks);
		EXPECT_TRUE(sdm_set_equal(a, u.ranks[0]));
		EXPECT_EQ(NULL, u.ranks[1]);
		sdm_table_free(&u);
		free(buf);
		free(text);
		EXPECT_EQ(-EBADMSG, sdm_table_parse(&u,
			"sdm-init 1 n=1 span=1 star=0\n0 h 1 3-x\n", 39));
		EXPECT_EQ(-EBADMSG, sdm_table_parse(&u,
			"sdm-init 1 n=1 span=1 star=0\n0 h 1 \n", 36));
		sdm_set_free(a);
	}
	sdm_table_free(&t);
}

int main(int argc, char **argv)
{
	FILE *f = fopen(LOG_PATH, "w");	/* a fresh log per run */

	if (f)
		fclose(f);
	signal(SIGPIPE, SIG_IGN);
	return test_harness_run(argc, argv);
}
