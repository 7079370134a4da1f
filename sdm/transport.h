/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SDM transport: a pluggable, connection-oriented byte-frame carrier with
 * one progress engine. Implementations fill struct sdm_transport_ops; the
 * TCP one (transport-tcp.c) is the default.
 *
 * A peer is a small integer handle. Every connection starts with a mutual
 * challenge-response handshake (both sides prove knowledge of the session
 * secret, which never crosses the wire); only then is the peer reported
 * through ->connected and are its frames delivered through ->frame.
 * Frames (sdm/message.h framing) are cut from the byte stream; a frame
 * whose header is malformed closes the connection (the stream cannot be
 * resynchronised), a well-framed but undecodable body is the receiver's
 * to drop.
 *
 * Other modules (I/O forwarding, backends) add their own descriptors and
 * timers to the same engine (sdm/engine.h): there is one epoll per process.
 */
#ifndef SDM_TRANSPORT_H
#define SDM_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sdm/engine.h"

/* Id announced in the handshake by a process that is not a server. */
#define SDM_TRANSPORT_ID_MASTER		((int)0xfffffffe)	/* SDM_MASTER */
#define SDM_TRANSPORT_ID_FRONTEND	((int)0xffffffff)	/* SDM_FRONTEND */
#define SDM_TRANSPORT_ID_ANY		(-3)	/* connect: accept any id */

/* Default cap on accepted connections still authenticating. */
#define SDM_TRANSPORT_MAX_PENDING	32

struct sdm_transport;
struct sdm_auth_secret;

struct sdm_transport_config {
	int my_id;			/* announced to peers in the handshake */
	const struct sdm_auth_secret *secret;	/* never sent */
	size_t max_frame;		/* largest frame accepted (0: SDM_MSG_MAX) */
	size_t send_queue_max;		/* bytes queued per peer before -ENOBUFS */
	int connect_tries;		/* attempts before connect gives up */
	int connect_backoff_ms;		/* first delay, doubled up to 0.5 s */
	int connect_port_span;		/* ports tried above the given one */
	int handshake_timeout_ms;
	/*
	 * Accepted connections allowed to be authenticating at once (0:
	 * SDM_TRANSPORT_MAX_PENDING); one more is closed as it is accepted.
	 */
	int max_pending;
	/*
	 * A ready link whose peer's node has acknowledged nothing, neither
	 * data nor a keepalive probe, for this long is closed with
	 * -ETIMEDOUT (transport-tcp.c, watch_liveness()); 0 leaves it to
	 * TCP: never on an idle link, some 15 minutes with data in flight.
	 */
	int peer_timeout_ms;

	/* Callbacks, all optional; arg is passed back. */
	void *arg;
	void (*connected)(void *arg, int peer, int peer_id, bool incoming);
	void (*frame)(void *arg, int peer, const void *buf, size_t len);
	/*
	 * err: 0 orderly close, -errno otherwise (-EACCES: failed handshake,
	 * -EKEYREJECTED: a frame failed authentication, see link.h).
	 */
	void (*closed)(void *arg, int peer, int err);
};

struct sdm_transport_ops {
	const char *name;
	int (*init)(struct sdm_transport *t);
	/* Bind to port, incrementing while in use; *ret_port gets the port. */
	int (*listen)(struct sdm_transport *t, const char *host, int port,
		      int span, int *ret_port);
	/*
	 * Start connecting (asynchronous); returns the peer handle. Retries
	 * and backoff follow the config; ->closed reports final failure.
	 * expect_id: the id the peer must announce, or SDM_TRANSPORT_ID_ANY.
	 */
	int (*connect)(struct sdm_transport *t, const char *host, int port,
		       int expect_id);
	/* Queue a whole frame; -ENOBUFS when the peer's queue is full. */
	int (*send)(struct sdm_transport *t, int peer, const void *buf,
		    size_t len);
	/* Optional: work to do before each engine wait. */
	int (*progress)(struct sdm_transport *t);
	void (*close_peer)(struct sdm_transport *t, int peer);
	void (*finalize)(struct sdm_transport *t);
};

struct sdm_transport_stats {
	uint64_t frames_in, frames_out, bytes_in, bytes_out;
	uint64_t dropped_frames, auth_failures;
	uint64_t refused_pending;	/* accepted over the max_pending cap */
};

/* The default (TCP) implementation. */
extern const struct sdm_transport_ops sdm_transport_tcp_ops;

struct sdm_transport *sdm_transport_new(const struct sdm_transport_ops *ops,
					const struct sdm_transport_config *cfg);
void sdm_transport_free(struct sdm_transport *t);

int sdm_transport_listen(struct sdm_transport *t, const char *host, int port,
			 int span, int *ret_port);
int sdm_transport_connect(struct sdm_transport *t, const char *host, int port,
			  int expect_id);
int sdm_transport_send(struct sdm_transport *t, int peer, const void *buf,
		       size_t len);
int sdm_transport_progress(struct sdm_transport *t, int timeout_ms);
/* Readable when progress has input or a connection to handle (epoll). */
int sdm_transport_poll_fd(struct sdm_transport *t);
void sdm_transport_close_peer(struct sdm_transport *t, int peer);
size_t sdm_transport_queued(struct sdm_transport *t, int peer);
/*
 * Inside ->closed: why the transport itself closed the peer, one line
 * ("frame 42 failed authentication: closed"), or NULL.
 */
const char *sdm_transport_close_reason(struct sdm_transport *t, int peer);
const struct sdm_transport_stats *sdm_transport_stats(struct sdm_transport *t);

/* Internal to implementations. */
struct sdm_engine;
struct sdm_transport {
	const struct sdm_transport_ops *ops;
	struct sdm_transport_config cfg;
	struct sdm_transport_stats stats;
	struct sdm_engine *engine;
	void *priv;
};

#endif /* SDM_TRANSPORT_H */
