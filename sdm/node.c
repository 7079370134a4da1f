// SPDX-License-Identifier: GPL-2.0
/*
 * The tree logic shared by the master and the servers (node.h): startup
 * (routing table, connecting the children, forwarding INIT), command
 * forwarding, upstream aggregation and failure handling.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdm/aggregate.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "sdm/iof.h"
#include "node.h"
#include "transport.h"

#define NODE_DRAIN_MS	2000

static const char *node_name(struct sdm_node *n, char *buf, size_t size)
{
	if (n->id == SDM_MASTER)
		snprintf(buf, size, "sdm-master");
	else
		snprintf(buf, size, "sdm-server %u", n->id);
	return buf;
}

#define node_log(n, fmt, ...) do {					\
	char __nm[32];							\
	fprintf(stderr, "%s: " fmt "\n",				\
		node_name((n), __nm, sizeof(__nm)), ##__VA_ARGS__);	\
} while (0)

int sdm_node_send(struct sdm_transport *t, int peer,
		  const struct sdm_message *m)
{
	void *buf;
	size_t len;
	int rc;

	rc = sdm_message_encode_alloc(m, &buf, &len);
	if (rc < 0)
		return rc;
	rc = sdm_transport_send(t, peer, buf, len);
	free(buf);
	return rc;
}

/* Time a child gets: a little less than ours, so it answers first. */
static uint32_t child_timeout(uint32_t ms)
{
	uint32_t margin = ms / 16 > 20 ? ms / 16 : 20;

	return ms > 2 * margin ? ms - margin : ms / 2;
}

static void agg_timer_fire(void *arg);

/* Send every finished aggregate upstream and re-arm the deadline timer. */
static void flush(struct sdm_node *n)
{
	struct sdm_message *m;
	uint64_t next, now;

	while ((m = sdm_aggregate_pop(n->agg))) {
		if (n->parent >= 0 && sdm_node_send(n->t, n->parent, m) < 0)
			node_log(n, "cannot send %s upstream",
				 sdm_frame_type_name(m->type));
		sdm_message_free(m);
	}
	if (n->agg_timer)
		sdm_transport_cancel_timer(n->t, n->agg_timer);
	n->agg_timer = 0;
	next = sdm_aggregate_next_deadline(n->agg);
	if (next == UINT64_MAX)
		return;
	now = sdm_now_ms();
	n->agg_timer = sdm_transport_add_timer(n->t,
					       next > now ? next - now : 0,
					       agg_timer_fire, n);
	if (n->agg_timer < 0)
		n->agg_timer = 0;
}

static void agg_timer_fire(void *arg)
{
	struct sdm_node *n = arg;

	n->agg_timer = 0;
	sdm_aggregate_expire(n->agg, sdm_now_ms());
	flush(n);
}

static int child_index(struct sdm_node *n, int peer)
{
	for (unsigned int i = 0; i < n->nchildren; i++)
		if (n->child_peer[i] == peer)
			return i;
	return -1;
}

/* Every rank below child i will never answer. */
static void fail_child(struct sdm_node *n, unsigned int i, const char *why)
{
	char reason[128];

	if (n->child_peer[i] >= 0)
		sdm_transport_close_peer(n->t, n->child_peer[i]);
	n->child_peer[i] = -1;
	n->child_ready[i] = false;
	snprintf(reason, sizeof(reason), "server %u: %s", n->child_id[i], why);
	/* Children leave after a shutdown: that is no news. */
	if (!n->quit)
		node_log(n, "%s", reason);
	sdm_aggregate_fail(n->agg, n->rr.child_ranks[i], reason);
	flush(n);
}

/* The ids a request must hear from at this node. */
static int expected_ids(struct sdm_node *n, const struct sdm_idset *dest,
			struct sdm_idset *ret)
{
	if (n->table.star)
		return sdm_rank_route_local(&n->rr, dest, ret);
	return sdm_rank_route_reachable(&n->rr, dest, ret);
}

static int start_request(struct sdm_node *n, const struct sdm_message *m)
{
	struct sdm_idset *expect = sdm_set_new();
	int rc;

	if (!expect)
		return -ENOMEM;
	rc = expected_ids(n, m->dest, expect);
	if (rc == 0)
		rc = sdm_aggregate_start(n->agg, m->agg.id, expect,
					 sdm_now_ms() + m->agg.timeout_ms);
	sdm_set_free(expect);
	return rc;
}

static bool is_local(struct sdm_node *n, const struct sdm_message *m)
{
	return n->id != SDM_MASTER && n->rr.own &&
	       sdm_set_intersects(m->dest, n->rr.own);
}

void sdm_node_local_reply(struct sdm_node *n, uint32_t req,
			  const struct sdm_idset *ranks, int error,
			  const void *buf, size_t len)
{
	struct sdm_message *m;

	if (!n->rr.own)
		return;		/* not initialised: nothing was asked */
	m = sdm_message_new(error ? SDM_MSG_ERROR : SDM_MSG_REPLY, buf, len);
	if (!m || sdm_set_assign(m->src, ranks ? ranks : n->rr.own) < 0 ||
	    sdm_set_intersect(m->src, n->rr.own) < 0 ||
	    sdm_set_is_empty(m->src)) {
		sdm_message_free(m);
		return;
	}
	m->agg.id = req;
	if (req == 0) {
		/* An unsolicited event: straight up, no aggregation. */
		if (n->parent >= 0)
			sdm_node_send(n->t, n->parent, m);
	} else if (sdm_aggregate_add(n->agg, m) >= 0) {
		flush(n);
	}
	sdm_message_free(m);
}

void sdm_node_local_output(struct sdm_node *n, sdm_id rank, int stream,
			   const void *buf, size_t len)
{
	struct sdm_message *m = sdm_message_new(SDM_MSG_IOF, NULL, 0);
	uint8_t *p = malloc(len + 1);

	if (m && p && sdm_set_add_element(m->src, rank) == 0) {
		p[0] = stream;
		memcpy(p + 1, buf, len);
		if (sdm_message_set_payload(m, p, len + 1) == 0 &&
		    n->parent >= 0)
			sdm_node_send(n->t, n->parent, m);
	}
	free(p);
	sdm_message_free(m);
}

/* Send m (already re-encoded for children) to the children on its route. */
static void forward_down(struct sdm_node *n, const struct sdm_message *m,
			 const void *frame, size_t len)
{
	struct sdm_idset *via;

	if (!n->nchildren)
		return;
	via = sdm_set_new();
	if (!via || sdm_rank_route_get_route(&n->rr, m->dest, via) < 0) {
		sdm_set_free(via);
		return;
	}
	for (unsigned int i = 0; i < n->nchildren; i++) {
		int rc;

		if (!sdm_set_contains(via, n->child_id[i]))
			continue;
		if (n->child_peer[i] < 0 || !n->child_ready[i])
			rc = -ENOTCONN;
		else
			rc = sdm_transport_send(n->t, n->child_peer[i], frame,
						len);
		if (rc < 0 && m->type != SDM_MSG_IOF)
			fail_child(n, i, rc == -ENOTCONN ? "not connected" :
				   strerror(-rc));
	}
	sdm_set_free(via);
}

/* Re-encode m with the child's (shorter) timeout and send it down. */
static void forward_message(struct sdm_node *n, struct sdm_message *m)
{
	void *buf;
	size_t len;
	uint32_t saved = m->agg.timeout_ms;

	m->agg.timeout_ms = child_timeout(saved);
	if (sdm_message_encode_alloc(m, &buf, &len) == 0) {
		forward_down(n, m, buf, len);
		free(buf);
	}
	m->agg.timeout_ms = saved;
}

static void on_init(struct sdm_node *n, int peer, struct sdm_message *m)
{
	int rc;

	if (n->initialised) {
		node_log(n, "dropping a second initialization command");
		return;
	}
	rc = sdm_table_parse(&n->table, m->payload, m->len);
	if (rc == 0 && n->id != SDM_MASTER && n->id >= n->table.n)
		rc = -ERANGE;
	if (rc == 0)
		rc = sdm_rank_route_init(&n->rr, n->id, n->table.n,
					 (const struct sdm_idset *const *)
					 n->table.ranks);
	if (rc < 0) {
		node_log(n, "bad initialization command: %s", strerror(-rc));
		sdm_table_free(&n->table);
		return;
	}
	n->parent = peer;
	n->initialised = true;
	rc = start_request(n, m);
	if (rc < 0)
		node_log(n, "cannot track initialization: %s", strerror(-rc));
	n->nchildren = n->table.star ? 0 : n->rr.nchildren;
	n->t->cfg.connect_port_span = n->table.span;
	n->init_msg = sdm_message_dup(m);
	if (n->init_msg)
		n->init_msg->agg.timeout_ms = child_timeout(m->agg.timeout_ms);
	for (unsigned int i = 0; i < n->nchildren; i++) {
		sdm_id kid = n->rr.child[i];
		const struct sdm_table_entry *e = &n->table.e[kid];

		n->child_id[i] = kid;
		n->child_ready[i] = false;
		n->child_peer[i] = sdm_transport_connect(n->t, e->host,
							 e->port, kid);
		if (n->child_peer[i] < 0)
			fail_child(n, i, "cannot connect");
	}
	if (is_local(n, m))
		sdm_node_local_reply(n, m->agg.id, m->dest, 0, "init ok", 7);
	flush(n);
}

/* The command's ranks that live here go to the backend. */
static void deliver_local(struct sdm_node *n, struct sdm_message *m)
{
	struct sdm_idset *mine = sdm_set_new();
	int rc = mine ? sdm_rank_route_local(&n->rr, m->dest, mine) : -ENOMEM;

	if (rc == 0)
		rc = n->deliver(n, m, mine);
	if (rc < 0) {
		char why[96];

		snprintf(why, sizeof(why), "backend: %s", strerror(-rc));
		sdm_node_local_reply(n, m->agg.id, mine, 1, why, strlen(why));
	}
	sdm_set_free(mine);
}

static void on_command(struct sdm_node *n, struct sdm_message *m)
{
	int rc = start_request(n, m);

	if (rc < 0) {
		node_log(n, "dropping command %u: %s", m->agg.id,
			 strerror(-rc));
		return;
	}
	forward_message(n, m);
	if (is_local(n, m) && n->deliver)
		deliver_local(n, m);
	flush(n);
}

static void on_downstream(struct sdm_node *n, int peer,
			  struct sdm_message *m, const void *frame,
			  size_t len)
{
	switch (m->type) {
	case SDM_MSG_INIT:
		on_init(n, peer, m);
		break;
	case SDM_MSG_COMMAND:
		on_command(n, m);
		break;
	case SDM_MSG_IOF:
		forward_down(n, m, frame, len);
		if (is_local(n, m) && n->deliver_iof && m->len > 1 &&
		    m->payload[0] == SDM_IOF_STDIN)
			n->deliver_iof(n, m->payload + 1, m->len - 1);
		break;
	case SDM_MSG_CONTROL:
		if (m->len == 8 && !memcmp(m->payload, "shutdown", 8)) {
			forward_down(n, m, frame, len);
			n->quit = true;
		}
		break;
	default:
		node_log(n, "dropping %s from the parent",
			 sdm_frame_type_name(m->type));
	}
}

static void on_upstream(struct sdm_node *n, struct sdm_message *m,
			const void *frame, size_t len)
{
	int rc;

	switch (m->type) {
	case SDM_MSG_REPLY:
	case SDM_MSG_ERROR:
		if (m->agg.id == 0) {
			if (n->parent >= 0)
				sdm_transport_send(n->t, n->parent, frame,
						   len);
			break;
		}
		rc = sdm_aggregate_add(n->agg, m);
		if (rc == -ENOENT)
			node_log(n, "late %s for request %u dropped",
				 sdm_frame_type_name(m->type), m->agg.id);
		flush(n);
		break;
	case SDM_MSG_IOF:
		if (n->parent >= 0)
			sdm_transport_send(n->t, n->parent, frame, len);
		break;
	default:
		node_log(n, "dropping %s from a child",
			 sdm_frame_type_name(m->type));
	}
}

static void on_frame(void *arg, int peer, const void *buf, size_t len)
{
	struct sdm_node *n = arg;
	struct sdm_message *m;
	int rc;

	rc = sdm_message_decode(buf, len, &m);
	if (rc < 0) {
		node_log(n, "dropping malformed frame from peer %d: %s", peer,
			 strerror(-rc));
		return;
	}
	if (peer == n->parent ||
	    (n->parent < 0 && m->type == SDM_MSG_INIT))
		on_downstream(n, peer, m, buf, len);
	else if (child_index(n, peer) >= 0)
		on_upstream(n, m, buf, len);
	else
		node_log(n, "dropping %s from peer %d (neither parent nor child)",
			 sdm_frame_type_name(m->type), peer);
	sdm_message_free(m);
}

static void on_connected(void *arg, int peer, int peer_id, bool incoming)
{
	struct sdm_node *n = arg;
	int i = child_index(n, peer);

	(void)peer_id;
	if (incoming || i < 0)
		return;
	n->child_ready[i] = true;
	if (n->init_msg && sdm_node_send(n->t, peer, n->init_msg) < 0)
		fail_child(n, i, "cannot send the initialization command");
}

/* Why a link closed, for a person; was_ready: it had been authenticated. */
static const char *closed_why(const struct sdm_node *n, int peer, int err,
			      bool was_ready, char *buf, size_t size)
{
	const char *reason = sdm_transport_close_reason(n->t, peer);

	if (reason)
		snprintf(buf, size, "%s", reason);
	else if (err == -ETIMEDOUT && was_ready)
		snprintf(buf, size, "its node answered nothing for %d s (lost or cut off)",
			 n->t->cfg.peer_timeout_ms / 1000);
	else
		snprintf(buf, size, "%s", err == -EACCES ? "authentication failed" :
			 err ? strerror(-err) : "connection closed");
	return buf;
}

static void on_closed(void *arg, int peer, int err)
{
	struct sdm_node *n = arg;
	char why[160];
	int i;

	if (peer == n->parent) {
		n->parent = -1;
		n->quit = true;
		if (err && err != -ECONNRESET && n->initialised)
			node_log(n, "parent connection lost: %s",
				 closed_why(n, peer, err, true, why, sizeof(why)));
		return;
	}
	i = child_index(n, peer);
	if (i >= 0) {
		bool was_ready = n->child_ready[i];

		n->child_peer[i] = -1;
		fail_child(n, i, closed_why(n, peer, err, was_ready, why,
					    sizeof(why)));
	}
}

int sdm_node_init(struct sdm_node *n, sdm_id id, char *why, size_t size)
{
	struct sdm_transport_config cfg = { 0 };
	int rc;

	n->id = id;
	n->parent = -1;
	rc = sdm_startup_transport_defaults(&cfg, why, size);
	if (rc < 0)
		return rc;
	rc = sdm_auth_secret_from_env(&n->secret);
	if (rc < 0) {
		snprintf(why, size, "cannot start: %s (the session secret, from "
			 "SDM_SECRET_FILE or SDM_SECRET)", strerror(-rc));
		return rc;
	}
	n->agg = sdm_aggregate_table_new(SDM_AGG_DEFAULT_MAX_REQUESTS,
					 SDM_AGG_DEFAULT_MAX_BYTES);
	if (!n->agg)
		goto nomem;
	cfg.my_id = (int)id;
	cfg.secret = &n->secret;
	cfg.arg = n;
	cfg.connected = on_connected;
	cfg.frame = on_frame;
	cfg.closed = on_closed;
	n->t = sdm_transport_new(NULL, &cfg);
	if (!n->t) {
		sdm_aggregate_table_free(n->agg);
		goto nomem;
	}
	return 0;
nomem:
	sdm_auth_secret_wipe(&n->secret);
	snprintf(why, size, "cannot start: out of memory");
	return -ENOMEM;
}

void sdm_node_finalize(struct sdm_node *n)
{
	sdm_transport_free(n->t);
	sdm_aggregate_table_free(n->agg);
	sdm_message_free(n->init_msg);
	sdm_table_free(&n->table);
	sdm_rank_route_free(&n->rr);
	sdm_auth_secret_wipe(&n->secret);
}

int sdm_node_run(struct sdm_node *n)
{
	uint64_t until;

	while (!n->quit) {
		int rc = sdm_transport_progress(n->t, -1);

		if (rc < 0) {
			node_log(n, "progress: %s", strerror(-rc));
			return 1;
		}
	}
	/* Let queued frames (a shutdown going down) leave before exiting. */
	until = sdm_now_ms() + NODE_DRAIN_MS;
	for (;;) {
		size_t queued = 0;

		for (unsigned int i = 0; i < n->nchildren; i++)
			if (n->child_peer[i] >= 0)
				queued += sdm_transport_queued(n->t,
							       n->child_peer[i]);
		if (!queued || sdm_now_ms() >= until)
			break;
		sdm_transport_progress(n->t, 50);
	}
	return 0;
}
