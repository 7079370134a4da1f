// SPDX-License-Identifier: GPL-2.0
/*
 * Default SDM transport: non-blocking TCP sockets on the shared epoll
 * engine. Each peer has a receive buffer (frames cut with cfg.frame_size,
 * partial reads accumulate) and a bounded send queue (partial writes stay
 * queued and EPOLLOUT is armed until it drains).
 *
 * Handshake (both sides at once, core frames, auth.h):
 *   -> AUTH_CHALLENGE(my nonce)
 *   <- AUTH_CHALLENGE(their nonce)  -> AUTH_RESPONSE(mac(my role, their nonce))
 *   <- AUTH_RESPONSE, verified      -> CONTROL "hello <my id>" + tag
 *   <- CONTROL "hello <id>" + tag   => ready, ->connected()
 * The id is trusted only after the peer proved it knows the secret. A
 * peer that sends anything else, fails the check, announces an unexpected
 * id, or stays silent past handshake_timeout_ms is dropped and logged.
 * From the hello on, every frame each way carries a tag (link.h) keyed
 * from the handshake: a frame that fails it closes the link, logged and
 * reported through ->closed (-EKEYREJECTED, sdm_transport_close_reason()).
 * At most max_pending accepted connections may be authenticating at once;
 * more are closed as soon as they are accepted. A ready link is closed
 * once the peer's node stops answering (watch_liveness()).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sdm/auth.h"
#include "sdm/link.h"
#include "sdm/message.h"
#include "transport.h"

#define RX_CHUNK	65536
#define HANDSHAKE_FRAME_MAX	256	/* challenge, response, hello */
#define CLOSE_WHY_MAX	160
#define HELLO_FMT	"hello %d"

enum peer_state {
	P_CONNECTING,	/* TCP connect in flight */
	P_WAIT_RETRY,	/* between connect attempts */
	P_HANDSHAKE,	/* authenticating, see the top comment */
	P_READY,
	P_DEAD,		/* closed, callback pending or done */
};

struct peer {
	struct sdm_transport *t;
	int handle;
	int fd;
	enum peer_state state;
	bool incoming;
	bool pending;		/* counted in tcp.pending */
	int expect_id, peer_id;
	/* connect retry state */
	char host[256];
	int base_port, port, attempt;
	int timer;		/* retry or handshake timer id, 0 if none */
	int last_err;
	struct sdm_auth_challenge challenge;
	bool got_challenge, verified;
	uint8_t my_nonce[SDM_AUTH_NONCE_LEN], peer_nonce[SDM_AUTH_NONCE_LEN];
	struct sdm_link link;	/* keyed once the peer's response verified */
	char why[CLOSE_WHY_MAX];	/* why the transport closed it, or "" */
	uint8_t *rx;
	size_t rx_len, rx_cap;
	uint8_t *tx;
	size_t tx_head, tx_len, tx_cap;
	bool want_out;
	int in_dispatch;
	int close_err;		/* deferred close requested */
	bool close_pending;
};

struct tcp {
	int listen_fd;
	int pending;		/* accepted peers still authenticating */
	bool refusing;		/* at the cap, and said so */
	struct peer **peers;
	int npeers, cap;
};

static struct tcp *tcp_of(struct sdm_transport *t)
{
	return t->priv;
}

static struct peer *peer_get(struct sdm_transport *t, int h)
{
	struct tcp *c = tcp_of(t);

	if (h < 0 || h >= c->npeers)
		return NULL;
	return c->peers[h];
}

static void log_peer(struct peer *p, const char *what, int err)
{
	fprintf(stderr, "sdm-transport: peer %d (%s:%d, id %d): %s%s%s\n",
		p->handle, p->host[0] ? p->host : "?", p->port, p->peer_id,
		what, err ? ": " : "", err ? strerror(-err) : "");
}

static void peer_fd_cb(void *arg, int fd, uint32_t events);
static void listen_fd_cb(void *arg, int fd, uint32_t events);

static struct peer *peer_new(struct sdm_transport *t)
{
	struct tcp *c = tcp_of(t);
	struct peer *p;

	if (c->npeers == c->cap) {
		int n = c->cap ? c->cap * 2 : 64;
		struct peer **v = realloc(c->peers, n * sizeof(*v));

		if (!v)
			return NULL;
		c->peers = v;
		c->cap = n;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->t = t;
	p->handle = c->npeers;
	p->fd = -1;
	p->peer_id = SDM_TRANSPORT_ID_ANY;
	p->expect_id = SDM_TRANSPORT_ID_ANY;
	c->peers[c->npeers++] = p;
	return p;
}

/* Free the peer slot; the handle is never reused. */
static void peer_free(struct sdm_transport *t, struct peer *p)
{
	struct tcp *c = tcp_of(t);

	c->peers[p->handle] = NULL;
	if (p->pending)
		c->pending--;
	sdm_link_free(&p->link);
	free(p->rx);
	free(p->tx);
	free(p);
}

static void drop_fd(struct sdm_transport *t, struct peer *p)
{
	if (p->fd >= 0) {
		sdm_transport_unwatch_fd(t, p->fd);
		close(p->fd);
		p->fd = -1;
	}
	if (p->timer) {
		sdm_transport_cancel_timer(t, p->timer);
		p->timer = 0;
	}
}

/* Final close: report and free. Never called while dispatching p. */
static void peer_finish(struct sdm_transport *t, struct peer *p, int err)
{
	bool was_known = p->state == P_READY || !p->incoming;

	drop_fd(t, p);
	p->state = P_DEAD;
	/* Incoming connections that never authenticated are not reported. */
	if (was_known && t->cfg.closed)
		t->cfg.closed(t->cfg.arg, p->handle, err);
	peer_free(t, p);
}

static void peer_close(struct sdm_transport *t, struct peer *p, int err)
{
	if (p->in_dispatch) {
		if (!p->close_pending) {
			p->close_pending = true;
			p->close_err = err;
		}
		return;
	}
	peer_finish(t, p, err);
}

static int update_events(struct sdm_transport *t, struct peer *p)
{
	uint32_t ev = EPOLLIN;

	if (p->state == P_CONNECTING || p->tx_len)
		ev |= EPOLLOUT;
	return sdm_transport_watch_fd(t, p->fd, ev, peer_fd_cb, p);
}

/* Write as much of the queue as the socket takes. */
static int flush_tx(struct sdm_transport *t, struct peer *p)
{
	while (p->tx_len) {
		ssize_t n = send(p->fd, p->tx + p->tx_head, p->tx_len,
				 MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p->tx_head += n;
		p->tx_len -= n;
		t->stats.bytes_out += n;
	}
	if (!p->tx_len)
		p->tx_head = 0;
	if (!!p->tx_len != p->want_out) {
		p->want_out = !!p->tx_len;
		return update_events(t, p);
	}
	return 0;
}

/* Room for len more bytes at the queue's end, within the peer's limit. */
static int tx_room(struct sdm_transport *t, struct peer *p, size_t len)
{
	size_t limit = t->cfg.send_queue_max;

	if (limit && p->tx_len + len > limit)
		return -ENOBUFS;
	if (p->tx_head + p->tx_len + len > p->tx_cap) {
		if (p->tx_head) {
			memmove(p->tx, p->tx + p->tx_head, p->tx_len);
			p->tx_head = 0;
		}
		if (p->tx_len + len > p->tx_cap) {
			size_t n = p->tx_cap ? p->tx_cap : 4096;
			uint8_t *v;

			while (n < p->tx_len + len)
				n *= 2;
			v = realloc(p->tx, n);
			if (!v)
				return -ENOMEM;
			p->tx = v;
			p->tx_cap = n;
		}
	}
	return 0;
}

/* Queue buf and then tail (tail_len bytes, may be 0) and write what fits. */
static int queue_bytes_tail(struct sdm_transport *t, struct peer *p,
			    const void *buf, size_t len, const void *tail,
			    size_t tail_len)
{
	int rc = tx_room(t, p, len + tail_len);

	if (rc < 0)
		return rc;
	memcpy(p->tx + p->tx_head + p->tx_len, buf, len);
	if (tail_len)
		memcpy(p->tx + p->tx_head + p->tx_len + len, tail, tail_len);
	p->tx_len += len + tail_len;
	return flush_tx(t, p);
}

static int queue_bytes(struct sdm_transport *t, struct peer *p,
		       const void *buf, size_t len)
{
	return queue_bytes_tail(t, p, buf, len, NULL, 0);
}

/*
 * Queue a whole frame followed by its tag (the link is keyed). The room
 * comes first: a frame refused for room or memory uses up no number.
 */
static int queue_sealed(struct sdm_transport *t, struct peer *p,
			const void *frame, size_t len)
{
	uint8_t tag[SDM_LINK_TAG_LEN];
	int rc = tx_room(t, p, len + sizeof(tag));

	if (rc == 0)
		rc = sdm_link_seal(&p->link, frame, len, tag);
	if (rc < 0)
		return rc;
	return queue_bytes_tail(t, p, frame, len, tag, sizeof(tag));
}

/* Queue one frame of the given type with a raw body (auth frames). */
static int queue_frame(struct sdm_transport *t, struct peer *p,
		       unsigned int type, const void *body, size_t len)
{
	uint8_t buf[SDM_FRAME_HDR_LEN + SDM_AUTH_NONCE_LEN];
	int rc;

	if (len > sizeof(buf) - SDM_FRAME_HDR_LEN)
		return -EMSGSIZE;
	rc = sdm_frame_header_encode(buf, type, len);
	if (rc < 0)
		return rc;
	memcpy(buf + SDM_FRAME_HDR_LEN, body, len);
	return queue_bytes(t, p, buf, SDM_FRAME_HDR_LEN + len);
}

static enum sdm_auth_role my_role(struct peer *p)
{
	return p->incoming ? SDM_AUTH_ACCEPTOR : SDM_AUTH_CONNECTOR;
}

static enum sdm_auth_role their_role(struct peer *p)
{
	return p->incoming ? SDM_AUTH_CONNECTOR : SDM_AUTH_ACCEPTOR;
}

static void handshake_timeout(void *arg);
static void retry_timer(void *arg);

static void arm_timer(struct peer *p, int ms, sdm_timer_cb cb)
{
	if (p->timer)
		sdm_transport_cancel_timer(p->t, p->timer);
	p->timer = sdm_transport_add_timer(p->t, ms, cb, p);
	if (p->timer < 0)
		p->timer = 0;
}

static int start_handshake(struct sdm_transport *t, struct peer *p)
{
	int rc = sdm_auth_challenge_new(&p->challenge);

	if (rc < 0)
		return rc;
	p->state = P_HANDSHAKE;
	p->got_challenge = p->verified = false;
	memcpy(p->my_nonce, p->challenge.nonce, sizeof(p->my_nonce));
	sdm_link_free(&p->link);
	p->link = (struct sdm_link){ 0 };
	p->rx_len = 0;
	arm_timer(p, t->cfg.handshake_timeout_ms > 0 ?
		  t->cfg.handshake_timeout_ms : 10000, handshake_timeout);
	return queue_frame(t, p, SDM_FRAME_AUTH_CHALLENGE, p->challenge.nonce,
			   SDM_AUTH_NONCE_LEN);
}

static void connect_attempt(struct sdm_transport *t, struct peer *p);

/* A connect attempt failed: try the next port or again after a delay. */
static void connect_failed(struct sdm_transport *t, struct peer *p, int err)
{
	int tries = t->cfg.connect_tries > 0 ? t->cfg.connect_tries : 1;
	int span = t->cfg.connect_port_span > 0 ? t->cfg.connect_port_span : 1;
	int delay = t->cfg.connect_backoff_ms > 0 ? t->cfg.connect_backoff_ms : 10;

	drop_fd(t, p);
	p->tx_len = p->tx_head = 0;
	p->want_out = false;
	p->rx_len = 0;
	p->last_err = err;
	if (++p->attempt >= tries) {
		log_peer(p, "giving up connecting", err);
		peer_close(t, p, err);
		return;
	}
	/* Next port up to span, then the first again after a delay. */
	p->port = p->base_port + p->attempt % span;
	if (p->port != p->base_port) {
		delay = 0;
	} else {
		for (int i = 1; i < p->attempt / span && delay < 500; i++)
			delay *= 2;
		if (delay > 500)
			delay = 500;
	}
	p->state = P_WAIT_RETRY;
	arm_timer(p, delay, retry_timer);
}

static void handshake_timeout(void *arg)
{
	struct peer *p = arg;
	struct sdm_transport *t = p->t;

	p->timer = 0;
	if (p->state != P_HANDSHAKE)
		return;
	log_peer(p, "handshake timed out", -ETIMEDOUT);
	if (!p->incoming)
		connect_failed(t, p, -ETIMEDOUT);
	else
		peer_close(t, p, -ETIMEDOUT);
}

static void retry_timer(void *arg)
{
	struct peer *p = arg;

	p->timer = 0;
	if (p->state == P_WAIT_RETRY)
		connect_attempt(p->t, p);
}

static int resolve(const char *host, int port, struct sockaddr_storage *ss,
		   socklen_t *len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char svc[16];
	int rc;

	snprintf(svc, sizeof(svc), "%d", port);
	rc = getaddrinfo(host && *host ? host : "127.0.0.1", svc, &hints, &res);
	if (rc)
		return -EHOSTUNREACH;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void tune_socket(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void connect_attempt(struct sdm_transport *t, struct peer *p)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, rc;

	rc = resolve(p->host, p->port, &ss, &len);
	if (rc < 0) {
		connect_failed(t, p, rc);
		return;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0) {
		connect_failed(t, p, -errno);
		return;
	}
	tune_socket(fd);
	p->fd = fd;
	p->state = P_CONNECTING;
	if (connect(fd, (struct sockaddr *)&ss, len) < 0 &&
	    errno != EINPROGRESS) {
		connect_failed(t, p, -errno);
		return;
	}
	rc = update_events(t, p);
	if (rc < 0)
		connect_failed(t, p, rc);
}

/* The TCP connection is up: check it and start the handshake. */
static void connect_done(struct sdm_transport *t, struct peer *p)
{
	int err = 0;
	socklen_t len = sizeof(err);
	int rc;

	if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err) {
		connect_failed(t, p, -err);
		return;
	}
	rc = start_handshake(t, p);
	if (rc == 0)
		rc = update_events(t, p);
	if (rc < 0)
		connect_failed(t, p, rc);
}

/*
 * A node powered off or cut off sends no FIN and no RST: its links would
 * stay open, a child's ranks unanswered and a server left behind on the
 * node, holding its ranks under gdb. Liveness is asked of the peer's
 * kernel, which answers for its node even while the SDM process there is
 * busy (a server waiting on gdb reads no socket): keepalive probes on an
 * idle link, and TCP_USER_TIMEOUT on one with data unacknowledged; either
 * closes the link with ETIMEDOUT after cfg.peer_timeout_ms of silence.
 * A link to the front end gets no user timeout: a console stopped with ^Z
 * reads nothing, its window closes, and Linux counts a zero window against
 * TCP_USER_TIMEOUT even while the peer answers every probe
 * (tcp_probe_timer()), which would end a session the user only suspended.
 */
static void watch_liveness(struct sdm_transport *t, struct peer *p)
{
	int ms = t->cfg.peer_timeout_ms, on = 1, probes = 4, idle, gap;
	unsigned int user = ms;

	if (ms <= 0)
		return;
	/* idle + probes * gap = ms: the same bound when only keepalive acts */
	idle = ms / 3000 > 0 ? ms / 3000 : 1;
	gap = ms / 6000 > 0 ? ms / 6000 : 1;
	if (setsockopt(p->fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) < 0 ||
	    setsockopt(p->fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) < 0 ||
	    setsockopt(p->fd, IPPROTO_TCP, TCP_KEEPINTVL, &gap, sizeof(gap)) < 0 ||
	    setsockopt(p->fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes)) < 0 ||
	    (p->peer_id != SDM_TRANSPORT_ID_FRONTEND &&
	     setsockopt(p->fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user, sizeof(user)) < 0))
		log_peer(p, "cannot watch the link's liveness", -errno);
}

static int send_hello(struct sdm_transport *t, struct peer *p)
{
	char text[32];
	struct sdm_message *m;
	void *buf;
	size_t len;
	int rc;

	snprintf(text, sizeof(text), HELLO_FMT, t->cfg.my_id);
	m = sdm_message_new(SDM_MSG_CONTROL, text, strlen(text));
	if (!m)
		return -ENOMEM;
	rc = sdm_message_encode_alloc(m, &buf, &len);
	sdm_message_free(m);
	if (rc < 0)
		return rc;
	rc = queue_sealed(t, p, buf, len);
	free(buf);
	return rc;
}

static int on_hello(struct sdm_transport *t, struct peer *p, const void *frame,
		    size_t len)
{
	struct sdm_message *m;
	char text[32];
	int id, rc;

	rc = sdm_message_decode(frame, len, &m);
	if (rc < 0)
		return rc;
	rc = -EPROTO;
	if (m->type == SDM_MSG_CONTROL && m->len < sizeof(text)) {
		memcpy(text, m->payload, m->len);
		text[m->len] = 0;
		if (sscanf(text, HELLO_FMT, &id) == 1)
			rc = 0;
	}
	sdm_message_free(m);
	if (rc < 0)
		return rc;
	p->peer_id = id;
	if (p->expect_id != SDM_TRANSPORT_ID_ANY && id != p->expect_id) {
		log_peer(p, "peer announced an unexpected id", -ESRCH);
		return -ESRCH;
	}
	if (p->timer) {
		sdm_transport_cancel_timer(t, p->timer);
		p->timer = 0;
	}
	if (p->pending) {
		p->pending = false;
		tcp_of(t)->pending--;
	}
	p->state = P_READY;
	watch_liveness(t, p);
	if (t->cfg.connected)
		t->cfg.connected(t->cfg.arg, p->handle, p->peer_id,
				 p->incoming);
	return 0;
}

/* One frame received during the handshake. */
static int on_handshake_frame(struct sdm_transport *t, struct peer *p,
			      const struct sdm_frame_hdr *h, const uint8_t *frame,
			      size_t len)
{
	const uint8_t *body = frame + SDM_FRAME_HDR_LEN;
	uint8_t mac[SDM_AUTH_MAC_LEN];
	int rc;

	if (h->type == SDM_FRAME_AUTH_CHALLENGE && !p->got_challenge &&
	    h->body_len == SDM_AUTH_NONCE_LEN) {
		p->got_challenge = true;
		memcpy(p->peer_nonce, body, sizeof(p->peer_nonce));
		rc = sdm_auth_respond(t->cfg.secret, my_role(p), body, mac);
		if (rc < 0)
			return rc;
		return queue_frame(t, p, SDM_FRAME_AUTH_RESPONSE, mac,
				   sizeof(mac));
	}
	/* A peer challenges before it answers: both nonces key the link. */
	if (h->type == SDM_FRAME_AUTH_RESPONSE && !p->verified &&
	    p->got_challenge && h->body_len == SDM_AUTH_MAC_LEN) {
		rc = sdm_auth_verify(t->cfg.secret, &p->challenge,
				     their_role(p), body);
		if (rc < 0) {
			t->stats.auth_failures++;
			log_peer(p, "authentication failed (wrong session secret?)",
				 -EACCES);
			return -EACCES;
		}
		rc = sdm_link_init(&p->link, t->cfg.secret, my_role(p),
				   p->my_nonce, p->peer_nonce);
		if (rc < 0)
			return rc;
		p->verified = true;
		return send_hello(t, p);
	}
	if (h->type == SDM_MSG_CONTROL && p->verified)
		return on_hello(t, p, frame, len);
	t->stats.auth_failures++;
	log_peer(p, "unexpected frame during authentication, dropping peer",
		 -EACCES);
	return -EACCES;
}

/* Consume whole frames from the receive buffer. */
static int parse_rx(struct sdm_transport *t, struct peer *p)
{
	size_t off = 0;
	int rc = 0;

	while (!p->close_pending &&
	       (p->state == P_HANDSHAKE || p->state == P_READY)) {
		size_t avail = p->rx_len - off;
		const uint8_t *b = p->rx + off;
		size_t max = t->cfg.max_frame, need, used;
		struct sdm_frame_hdr h;

		/* Nobody unauthenticated makes us buffer a large frame. */
		if (p->state == P_HANDSHAKE)
			max = HANDSHAKE_FRAME_MAX;
		if (p->verified) {
			rc = sdm_link_open(&p->link, b, avail, max, &h, &need);
			used = need + SDM_LINK_TAG_LEN;
		} else {
			rc = sdm_frame_header_decode(b, avail, &h);
			need = used = SDM_FRAME_HDR_LEN + (size_t)h.body_len;
			if (rc == 0 && max && need > max)
				rc = -EMSGSIZE;
			if (rc == 0 && avail < need)
				rc = -EAGAIN;
		}
		if (rc == -EAGAIN) {
			rc = 0;
			break;
		}
		if (rc == -EKEYREJECTED) {
			t->stats.dropped_frames++;
			t->stats.auth_failures++;
			snprintf(p->why, sizeof(p->why),
				 "frame %" PRIu64 " failed authentication: closed",
				 sdm_link_rx_seq(&p->link));
			log_peer(p, p->why, 0);
			break;
		}
		if (rc < 0) {
			t->stats.dropped_frames++;
			snprintf(p->why, sizeof(p->why), "malformed frame header: closed");
			log_peer(p, "malformed frame header, closing", rc);
			break;
		}
		if (p->state == P_HANDSHAKE) {
			rc = on_handshake_frame(t, p, &h, b, need);
		} else {
			t->stats.frames_in++;
			if (t->cfg.frame)
				t->cfg.frame(t->cfg.arg, p->handle, b, need);
		}
		off += used;
		if (rc < 0)
			break;
	}
	if (off) {
		memmove(p->rx, p->rx + off, p->rx_len - off);
		p->rx_len -= off;
	}
	return rc;
}

static int read_some(struct sdm_transport *t, struct peer *p)
{
	ssize_t n;

	if (p->rx_cap - p->rx_len < RX_CHUNK) {
		size_t cap = p->rx_len + RX_CHUNK;
		uint8_t *v = realloc(p->rx, cap);

		if (!v)
			return -ENOMEM;
		p->rx = v;
		p->rx_cap = cap;
	}
	n = recv(p->fd, p->rx + p->rx_len, p->rx_cap - p->rx_len, 0);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ECONNRESET;
	p->rx_len += n;
	t->stats.bytes_in += n;
	return parse_rx(t, p);
}

static void peer_event(struct sdm_transport *t, struct peer *p, uint32_t ev)
{
	int rc = 0;

	if (p->close_pending && !p->in_dispatch) {
		peer_finish(t, p, p->close_err);
		return;
	}
	if (p->state == P_CONNECTING) {
		if (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			connect_done(t, p);
		return;
	}
	p->in_dispatch++;
	if (ev & EPOLLOUT)
		rc = flush_tx(t, p);
	if (rc == 0 && (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		rc = read_some(t, p);
	p->in_dispatch--;
	if (p->close_pending) {
		peer_finish(t, p, p->close_err);
		return;
	}
	if (rc == 0)
		return;
	if (rc == -ECONNRESET && p->state == P_READY)
		peer_close(t, p, 0);
	else if (!p->incoming && p->state != P_READY && rc != -EACCES &&
		 rc != -EKEYREJECTED)
		connect_failed(t, p, rc);	/* e.g. wrong id: next port */
	else
		peer_close(t, p, rc);
}

static int max_pending(struct sdm_transport *t)
{
	return t->cfg.max_pending > 0 ? t->cfg.max_pending :
	       SDM_TRANSPORT_MAX_PENDING;
}

static void accept_ready(struct sdm_transport *t)
{
	struct tcp *c = tcp_of(t);

	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		struct peer *p;
		int fd;

		fd = accept4(c->listen_fd, (struct sockaddr *)&ss, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				fprintf(stderr, "sdm-transport: accept: %s\n",
					strerror(errno));
			return;
		}
		if (c->pending >= max_pending(t)) {
			/* Closed at once: a flood holds no more than the cap. */
			close(fd);
			t->stats.refused_pending++;
			if (!c->refusing)
				fprintf(stderr, "sdm-transport: %d connections are "
					"authenticating, the most allowed: closing new ones\n",
					c->pending);
			c->refusing = true;
			continue;
		}
		c->refusing = false;
		tune_socket(fd);
		p = peer_new(t);
		if (!p) {
			close(fd);
			continue;
		}
		p->fd = fd;
		p->incoming = true;
		p->pending = true;
		c->pending++;
		getnameinfo((struct sockaddr *)&ss, len, p->host,
			    sizeof(p->host), NULL, 0, NI_NUMERICHOST);
		p->port = ntohs(ss.ss_family == AF_INET6 ?
				((struct sockaddr_in6 *)&ss)->sin6_port :
				((struct sockaddr_in *)&ss)->sin_port);
		if (start_handshake(t, p) < 0 || update_events(t, p) < 0)
			peer_close(t, p, -EIO);
	}
}

static void listen_fd_cb(void *arg, int fd, uint32_t events)
{
	(void)fd;
	(void)events;
	accept_ready(arg);
}

static void peer_fd_cb(void *arg, int fd, uint32_t events)
{
	struct peer *p = arg;

	(void)fd;
	peer_event(p->t, p, events);
}

static void close_timer(void *arg)
{
	struct peer *p = arg;

	p->timer = 0;
	peer_finish(p->t, p, p->close_err);
}

static int tcp_init(struct sdm_transport *t)
{
	struct tcp *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->listen_fd = -1;
	t->priv = c;
	return 0;
}

static void tcp_finalize(struct sdm_transport *t)
{
	struct tcp *c = tcp_of(t);

	if (!c)
		return;
	for (int h = 0; h < c->npeers; h++) {
		if (c->peers[h]) {
			drop_fd(t, c->peers[h]);
			peer_free(t, c->peers[h]);
		}
	}
	if (c->listen_fd >= 0) {
		sdm_transport_unwatch_fd(t, c->listen_fd);
		close(c->listen_fd);
	}
	free(c->peers);
	free(c);
	t->priv = NULL;
}

static int tcp_listen(struct sdm_transport *t, const char *host, int port,
		      int span, int *ret_port)
{
	struct tcp *c = tcp_of(t);
	int last = -EADDRINUSE;

	if (c->listen_fd >= 0)
		return -EBUSY;
	if (span <= 0)
		span = 1;
	for (int i = 0; i < span && port + i <= 65535; i++) {
		struct sockaddr_storage ss;
		socklen_t len;
		int one = 1, fd, rc;

		rc = resolve(host && *host ? host : "0.0.0.0", port + i, &ss,
			     &len);
		if (rc < 0)
			return rc;
		fd = socket(ss.ss_family,
			    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		/* SO_REUSEADDR allows TIME_WAIT reuse, never a live listener. */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
		    listen(fd, 1024) < 0) {
			last = -errno;
			close(fd);
			if (last == -EADDRINUSE || last == -EACCES)
				continue;
			return last;
		}
		rc = sdm_transport_watch_fd(t, fd, EPOLLIN, listen_fd_cb, t);
		if (rc < 0) {
			close(fd);
			return rc;
		}
		c->listen_fd = fd;
		if (port == 0) {
			struct sockaddr_in sin;

			len = sizeof(sin);
			getsockname(fd, (struct sockaddr *)&sin, &len);
			*ret_port = ntohs(sin.sin_port);
		} else {
			*ret_port = port + i;
		}
		return 0;
	}
	return last;
}

static int tcp_connect(struct sdm_transport *t, const char *host, int port,
		       int expect_id)
{
	struct peer *p = peer_new(t);

	if (!p)
		return -ENOMEM;
	snprintf(p->host, sizeof(p->host), "%s", host ? host : "127.0.0.1");
	p->base_port = p->port = port;
	p->expect_id = expect_id;
	/* Start from the engine so every failure is reported asynchronously. */
	p->state = P_WAIT_RETRY;
	arm_timer(p, 0, retry_timer);
	return p->handle;
}

static int tcp_send(struct sdm_transport *t, int h, const void *buf,
		    size_t len)
{
	struct peer *p = peer_get(t, h);
	int rc;

	if (!p || p->state != P_READY || p->close_pending)
		return -ENOTCONN;
	rc = queue_sealed(t, p, buf, len);
	if (rc == -ENOBUFS || rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		/* Report the broken peer from the engine, not from here. */
		if (!p->close_pending) {
			p->close_pending = true;
			p->close_err = rc;
			if (!p->in_dispatch)
				arm_timer(p, 0, close_timer);
		}
		return rc;
	}
	t->stats.frames_out++;
	return 0;
}

static void tcp_close_peer(struct sdm_transport *t, int h)
{
	struct peer *p = peer_get(t, h);

	if (!p)
		return;
	if (p->in_dispatch) {
		p->close_pending = true;
		p->close_err = 0;
		return;
	}
	/* A close asked for by the owner is not reported back to it. */
	drop_fd(t, p);
	peer_free(t, p);
}

const char *sdm_transport_close_reason(struct sdm_transport *t, int h)
{
	struct peer *p = peer_get(t, h);

	return p && p->why[0] ? p->why : NULL;
}

size_t sdm_transport_queued(struct sdm_transport *t, int h)
{
	struct peer *p = peer_get(t, h);

	return p ? p->tx_len : 0;
}

const struct sdm_transport_ops sdm_transport_tcp_ops = {
	.name = "tcp",
	.init = tcp_init,
	.listen = tcp_listen,
	.connect = tcp_connect,
	.send = tcp_send,
	.close_peer = tcp_close_peer,
	.finalize = tcp_finalize,
};
