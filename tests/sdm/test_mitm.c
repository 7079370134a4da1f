// SPDX-License-Identifier: GPL-2.0
/*
 * A man in the middle on an SDM link (Documentation/sdm.md, "Frame
 * integrity"). Two SDM nodes, a parent (id 1) and a server (id 2), each
 * a transport of its own; the parent connects to a relay on loopback that
 * passes the handshake through untouched and then:
 *
 *   parent (1) --- relay (this test) --- server (2)
 *
 *  - passes everything: messages arrive both ways (the relay is sound);
 *  - flips one byte of the parent's first message: the server delivers
 *    nothing, closes the link and reports "frame N failed authentication";
 *  - replays the parent's first message after the server took it: the
 *    copy is refused in the same way;
 *  - injects a command of its own making: refused in the same way;
 *  - at a session's scale (a front end, its master behind the relay, two
 *    servers), alters the master's reply to a command: the front end's
 *    command ends with the one line that says so.
 *
 * The relay cuts each direction into frames (header, body and, from a
 * side's third frame, after its challenge and its response, a tag of
 * SDM_LINK_TAG_LEN bytes) so that it can alter, record and inject whole
 * frames.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "sdm/auth.h"
#include "sdm/engine.h"
#include "sdm/frontend.h"
#include "sdm/link.h"
#include "sdm/message.h"
#include "startup.h"
#include "transport.h"

#define WAIT_MS		5000
#define RELAY_BUF	(1 << 16)

struct end {
	struct sdm_transport *t;
	bool connected;
	int peer;
	int closed_err;		/* 1 while open */
	char why[160];		/* the transport's reason, as the node reports it */
	unsigned int frames;
	char last[64];		/* payload of the last message delivered */
};

/* One direction of the relay. */
struct pipe_dir {
	int from, to;
	uint8_t buf[RELAY_BUF];
	size_t len;
	unsigned int nframes;	/* frames passed on so far */
	bool flip_next;		/* alter the next message passed on */
	const char *flip_reply;	/* or the first REPLY that contains this */
	uint8_t kept[RELAY_BUF];	/* a copy of the first message passed on */
	size_t kept_len;
};

struct relay {
	int lfd;
	int port;
	struct pipe_dir down, up;	/* parent to server, server to parent */
	bool eof;
};

static void end_connected(void *arg, int peer, int id, bool incoming)
{
	struct end *e = arg;

	e->connected = true;
	e->peer = peer;
}

static void end_frame(void *arg, int peer, const void *buf, size_t len)
{
	struct end *e = arg;
	struct sdm_message *m;

	e->frames++;
	if (sdm_message_decode(buf, len, &m) == 0) {
		snprintf(e->last, sizeof(e->last), "%.*s", (int)m->len,
			 (const char *)m->payload);
		sdm_message_free(m);
	}
}

static void end_closed(void *arg, int peer, int err)
{
	struct end *e = arg;
	const char *why = sdm_transport_close_reason(e->t, peer);

	e->closed_err = err;
	snprintf(e->why, sizeof(e->why), "%s", why ? why : "");
}

static int relay_listen(struct relay *r)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);

	r->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->lfd < 0 || bind(r->lfd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(r->lfd, 1) < 0 || getsockname(r->lfd, (struct sockaddr *)&sin, &len) < 0)
		return -1;
	r->port = ntohs(sin.sin_port);
	r->down.from = r->down.to = r->up.from = r->up.to = -1;
	return 0;
}

/* Accept the parent and connect to the server (blocking, loopback). */
static int relay_join(struct relay *r, int server_port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(server_port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int cfd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC);
	int sfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (cfd < 0 || sfd < 0 || connect(sfd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		return -1;
	r->down.from = r->up.to = cfd;
	r->down.to = r->up.from = sfd;
	return 0;
}

static size_t frame_len(const struct pipe_dir *d)
{
	struct sdm_frame_hdr h;

	if (sdm_frame_header_decode(d->buf, d->len, &h) < 0)
		return 0;
	/* challenge and response, then tagged frames */
	return SDM_FRAME_HDR_LEN + h.body_len + (d->nframes >= 2 ? SDM_LINK_TAG_LEN : 0);
}

static int send_all(int fd, const void *buf, size_t len)
{
	return send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

static bool is_reply_with(const struct pipe_dir *d, size_t f)
{
	return d->flip_reply && d->buf[3] == SDM_MSG_REPLY &&
	       memmem(d->buf + SDM_FRAME_HDR_LEN, f - SDM_FRAME_HDR_LEN,
		      d->flip_reply, strlen(d->flip_reply));
}

/* Take what one side sent and pass whole frames on. */
static void relay_dir(struct relay *r, struct pipe_dir *d)
{
	ssize_t n = recv(d->from, d->buf + d->len, sizeof(d->buf) - d->len, MSG_DONTWAIT);
	size_t f;

	if (n == 0 || (n < 0 && errno != EAGAIN)) {
		r->eof = true;
		return;
	}
	if (n > 0)
		d->len += n;
	while ((f = frame_len(d)) && f <= d->len) {
		/* the third frame is the hello, the fourth the first message */
		if (d->nframes == 3) {
			memcpy(d->kept, d->buf, f);
			d->kept_len = f;
		}
		if (d->nframes >= 3 && (d->flip_next || is_reply_with(d, f))) {
			d->buf[f - SDM_LINK_TAG_LEN - 1] ^= 0x20;	/* the payload's last byte */
			d->flip_next = false;
			d->flip_reply = NULL;
		}
		if (send_all(d->to, d->buf, f) < 0)
			r->eof = true;
		d->nframes++;
		memmove(d->buf, d->buf + f, d->len - f);
		d->len -= f;
	}
}

static void relay_run(struct relay *r)
{
	struct pollfd p[2] = { { .fd = r->down.from, .events = POLLIN },
			       { .fd = r->up.from, .events = POLLIN } };

	if (r->eof || poll(p, 2, 0) <= 0)
		return;
	if (p[0].revents)
		relay_dir(r, &r->down);
	if (p[1].revents && !r->eof)
		relay_dir(r, &r->up);
	if (r->eof) {
		/* one side went: so does the other, as a cut connection would */
		shutdown(r->down.from, SHUT_RDWR);
		shutdown(r->up.from, SHUT_RDWR);
	}
}

static void relay_close(struct relay *r)
{
	if (r->down.from >= 0)
		close(r->down.from);
	if (r->up.from >= 0)
		close(r->up.from);
	close(r->lfd);
}

FIXTURE(mitm) {
	struct sdm_auth_secret secret;
	struct end parent, server;
	struct relay relay;
};

static void spin(struct __test_metadata *_metadata, FIXTURE_DATA(mitm) *self,
		 bool (*done)(FIXTURE_DATA(mitm) *self))
{
	uint64_t until = sdm_now_ms() + WAIT_MS;

	while (!done(self) && sdm_now_ms() < until) {
		sdm_transport_progress(self->parent.t, 2);
		relay_run(&self->relay);
		sdm_transport_progress(self->server.t, 2);
		relay_run(&self->relay);
	}
}

static bool both_up(FIXTURE_DATA(mitm) *self)
{
	return self->parent.connected && self->server.connected;
}

static bool server_closed(FIXTURE_DATA(mitm) *self)
{
	return self->server.closed_err != 1 && self->parent.closed_err != 1;
}

FIXTURE_SETUP(mitm)
{
	struct sdm_transport_config c = { 0 }, d;
	int port;

	ASSERT_EQ(0, sdm_auth_secret_generate(&self->secret));
	ASSERT_EQ(0, sdm_startup_transport_defaults(&c, NULL, 0));
	c.secret = &self->secret;
	c.connected = end_connected;
	c.frame = end_frame;
	c.closed = end_closed;
	c.connect_tries = 1;
	d = c;
	c.my_id = 1;
	c.arg = &self->parent;
	d.my_id = 2;
	d.arg = &self->server;
	self->parent.closed_err = self->server.closed_err = 1;
	self->parent.t = sdm_transport_new(NULL, &c);
	self->server.t = sdm_transport_new(NULL, &d);
	ASSERT_NE(NULL, self->parent.t);
	ASSERT_NE(NULL, self->server.t);
	ASSERT_EQ(0, sdm_transport_listen(self->server.t, "127.0.0.1", 0, 1, &port));
	ASSERT_EQ(0, relay_listen(&self->relay));
	ASSERT_LE(0, sdm_transport_connect(self->parent.t, "127.0.0.1",
					   self->relay.port, 2));
	/* the parent's connect starts from its engine */
	for (int i = 0; i < 50 && self->relay.down.from < 0; i++) {
		sdm_transport_progress(self->parent.t, 2);
		if (poll(&(struct pollfd){ .fd = self->relay.lfd, .events = POLLIN }, 1, 10) > 0)
			ASSERT_EQ(0, relay_join(&self->relay, port));
	}
	ASSERT_LE(0, self->relay.down.from);
	spin(_metadata, self, both_up);
	ASSERT_TRUE(both_up(self));
}

FIXTURE_TEARDOWN(mitm)
{
	sdm_transport_free(self->parent.t);
	sdm_transport_free(self->server.t);
	relay_close(&self->relay);
}

static int send_text(struct end *e, unsigned int type, const char *text)
{
	struct sdm_message *m = sdm_message_new(type, text, strlen(text));
	void *buf;
	size_t len;
	int rc;

	if (!m)
		return -ENOMEM;
	rc = sdm_message_encode_alloc(m, &buf, &len);
	sdm_message_free(m);
	if (rc < 0)
		return rc;
	rc = sdm_transport_send(e->t, e->peer, buf, len);
	free(buf);
	return rc;
}

static bool server_got_one(FIXTURE_DATA(mitm) *self)
{
	return self->server.frames >= 1 || self->server.closed_err != 1;
}

static bool traffic_done(FIXTURE_DATA(mitm) *self)
{
	return self->server.frames == 100 && self->parent.frames == 100;
}

/* The relay itself passes a link's traffic untouched. */
TEST_F(mitm, untouched_relay_passes_everything)
{
	char text[32];

	for (int i = 0; i < 100; i++) {
		snprintf(text, sizeof(text), "echo %d", i);
		ASSERT_EQ(0, send_text(&self->parent, SDM_MSG_COMMAND, text));
		ASSERT_EQ(0, send_text(&self->server, SDM_MSG_REPLY, text));
	}
	spin(_metadata, self, traffic_done);
	EXPECT_EQ(100, self->server.frames);
	EXPECT_EQ(100, self->parent.frames);
	EXPECT_STREQ("echo 99", self->server.last);
	EXPECT_EQ(1, self->server.closed_err);
	EXPECT_EQ(1, self->parent.closed_err);
}

/* One byte of the parent's command changed on the way: never delivered. */
TEST_F(mitm, altered_frame_closes_the_link)
{
	self->relay.down.flip_next = true;
	ASSERT_EQ(0, send_text(&self->parent, SDM_MSG_COMMAND, "echo safe"));
	spin(_metadata, self, server_closed);
	EXPECT_EQ(0, self->server.frames) TH_LOG("delivered: %s", self->server.last);
	EXPECT_EQ(-EKEYREJECTED, self->server.closed_err);
	EXPECT_STREQ("frame 1 failed authentication: closed", self->server.why);
	/* the parent's end goes too, and the node there reports the loss */
	EXPECT_NE(1, self->parent.closed_err);
}

/* The parent's command again, byte for byte, once the server took it. */
TEST_F(mitm, replayed_frame_closes_the_link)
{
	ASSERT_EQ(0, send_text(&self->parent, SDM_MSG_COMMAND, "echo once"));
	spin(_metadata, self, server_got_one);
	ASSERT_EQ(1, self->server.frames);
	ASSERT_NE(0, self->relay.down.kept_len);
	ASSERT_EQ(0, send_all(self->relay.down.to, self->relay.down.kept,
			      self->relay.down.kept_len));
	spin(_metadata, self, server_closed);
	EXPECT_EQ(1, self->server.frames);
	EXPECT_EQ(-EKEYREJECTED, self->server.closed_err);
	EXPECT_STREQ("frame 2 failed authentication: closed", self->server.why);
}

/* A command the relay built itself (with a tag it had to guess): refused. */
TEST_F(mitm, injected_frame_is_refused)
{
	struct sdm_message *m = sdm_message_new(SDM_MSG_COMMAND, "cli shell id", 12);
	uint8_t tag[SDM_LINK_TAG_LEN + 1];
	void *buf;
	size_t len;

	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, sdm_message_encode_alloc(m, &buf, &len));
	sdm_message_free(m);
	ASSERT_EQ(sizeof(tag), getrandom(tag, sizeof(tag), 0));
	ASSERT_EQ(0, send_all(self->relay.down.to, buf, len));
	if (SDM_LINK_TAG_LEN)
		ASSERT_EQ(0, send_all(self->relay.down.to, tag, SDM_LINK_TAG_LEN));
	free(buf);
	spin(_metadata, self, server_closed);
	EXPECT_EQ(0, self->server.frames) TH_LOG("delivered: %s", self->server.last);
	EXPECT_EQ(-EKEYREJECTED, self->server.closed_err);
	EXPECT_STREQ("frame 1 failed authentication: closed", self->server.why);
}

#ifndef SDM_BINDIR
#define SDM_BINDIR "build/sdm"
#endif

/*
 * The relay, in a child: the master connects to it (its sdm-master is a
 * script that notes the front end's address and runs the real one with
 * the relay's), it connects on to the front end.
 */
static void relay_child(struct relay *r, const char *addr_file)
{
	char addr[64] = "";
	FILE *f;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (poll(&(struct pollfd){ .fd = r->lfd, .events = POLLIN }, 1, 30000) <= 0)
		_exit(1);
	f = fopen(addr_file, "r");
	if (!f || !fgets(addr, sizeof(addr), f) || !strchr(addr, ':') ||
	    relay_join(r, atoi(strchr(addr, ':') + 1)) < 0)
		_exit(1);
	fclose(f);
	while (!r->eof) {
		struct pollfd p[2] = { { .fd = r->down.from, .events = POLLIN },
				       { .fd = r->up.from, .events = POLLIN } };

		poll(p, 2, 1000);
		relay_run(r);
	}
	_exit(0);
}

static const struct sdm_fe_event *find_event(const struct sdm_fe_result *res,
					     unsigned int type, const char *text)
{
	for (unsigned int i = 0; i < res->nev; i++)
		if (res->ev[i].type == type &&
		    memmem(res->ev[i].payload, res->ev[i].len, text, strlen(text)))
			return &res->ev[i];
	return NULL;
}

TEST(session_reports_an_altered_reply)
{
	char dir[] = "/tmp/sdm-mitm-XXXXXX", path[PATH_MAX], bindir[PATH_MAX];
	char script[3 * PATH_MAX], err[256] = "";
	struct sdm_fe_config c = { .nservers = 2 };
	const struct sdm_fe_event *ev;
	struct sdm_fe_result res = { 0 };
	struct relay r = { 0 };
	struct sdm_idset *all;
	struct sdm_fe *fe;
	pid_t pid;
	FILE *f;
	int st;

	ASSERT_NE(NULL, realpath(SDM_BINDIR, bindir));
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, relay_listen(&r));
	snprintf(script, sizeof(script),
		 "#!/bin/sh\necho \"$1\" >%s/fe-addr\nexec %s/sdm-master 127.0.0.1:%d\n",
		 dir, bindir, r.port);
	snprintf(path, sizeof(path), "%s/sdm-master", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs(script, f);
	ASSERT_EQ(0, fclose(f));
	ASSERT_EQ(0, chmod(path, 0755));
	snprintf(path, sizeof(path), "%s/sdm-server", dir);
	snprintf(script, sizeof(script), "%s/sdm-server", bindir);
	ASSERT_EQ(0, symlink(script, path));
	snprintf(path, sizeof(path), "%s/fe-addr", dir);

	r.down.flip_reply = "MARK";	/* master to front end */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		relay_child(&r, path);
	close(r.lfd);

	c.bindir = dir;
	ASSERT_EQ(0, sdm_fe_start(&c, &fe, err, sizeof(err))) TH_LOG("%s", err);
	all = sdm_set_new();
	ASSERT_NE(NULL, all);
	ASSERT_EQ(0, sdm_set_add_range(all, 0, 1));
	sdm_fe_command(fe, all, "echo MARK", 3000, &res);
	EXPECT_EQ(NULL, find_event(&res, SDM_MSG_REPLY, "MAR"));
	ev = find_event(&res, SDM_MSG_ERROR, "failed authentication");
	ASSERT_NE(NULL, ev);
	TH_LOG("%.*s", (int)ev->len, (char *)ev->payload);
	EXPECT_NE(NULL, find_event(&res, SDM_MSG_ERROR,
				   "front end: link to the master: frame "));
	sdm_fe_result_free(&res);
	sdm_set_free(all);
	sdm_fe_stop(fe);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sdm-master", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sdm-server", dir);
	unlink(path);
	EXPECT_EQ(0, rmdir(dir));
}

TEST_HARNESS_MAIN
