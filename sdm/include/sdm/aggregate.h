/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Changes since first published (additions only): sdm_aggregate_set_hash_fn()
 * for tests; max_bytes now also counts SDM_AGG_GROUP_OVERHEAD per group.
 *
 * Upstream aggregation (sdm_aggregate_*), as pure logic: a
 * table of outstanding requests, with no clock and no I/O. The caller
 * passes the current time (any monotonic milliseconds) to each call and
 * sends what the table hands back.
 *
 * Use, at every node (master and servers):
 *   1. a command with aggregate id R goes down: sdm_aggregate_start(t, R,
 *      expect, now + timeout) where expect = sdm_route_reachable(dest),
 *      i.e. every id this node must hear from (its own id included if the
 *      command is also for it);
 *   2. every REPLY or ERROR message with aggregate id R that comes up (from
 *      a child, or made locally for this node's own id) goes to
 *      sdm_aggregate_add(): replies with byte-identical payloads (and the
 *      same type) are merged into one group whose source set is the union
 *      of their sources. Payloads are hashed, then compared in full, so a
 *      hash collision never merges different replies;
 *   3. a peer that died: sdm_aggregate_fail(t, ids_below_it, reason);
 *   4. periodically (e.g. each poll wakeup; sdm_aggregate_next_deadline()
 *      tells when) sdm_aggregate_expire(t, now);
 *   5. sdm_aggregate_pop() hands out finished messages, to send upstream.
 *
 * A request completes when every expected id answered (reply or error), or
 * when its deadline passes: then it yields one message per distinct
 * payload, plus one SDM_MSG_ERROR whose source set names the ids that never
 * answered (payload "timeout"). Messages of one request come out together
 * and carry its aggregate id.
 *
 * Bounds: at most max_requests outstanding requests, at most max_bytes
 * held over the whole table, counting each distinct payload's bytes plus a
 * fixed overhead per group. A reply whose new group would go over the
 * bound is not kept: its ids are answered with an SDM_MSG_ERROR "reply
 * dropped: aggregation limit". Every reply must bring at least one id not
 * yet answered, so a request holds at most |expect| groups.
 */
#ifndef SDM_AGGREGATE_H
#define SDM_AGGREGATE_H

#include "sdm/common.h"
#include "sdm/idset.h"
#include "sdm/message.h"

struct sdm_agg_table;

#define SDM_AGG_DEFAULT_MAX_REQUESTS	1024
#define SDM_AGG_DEFAULT_MAX_BYTES	(64u << 20)

/* Charged per distinct payload on top of its bytes: the group and a small set. */
#define SDM_AGG_GROUP_OVERHEAD		192

/* Payloads of the error events the table makes itself. */
#define SDM_AGG_REASON_TIMEOUT		"timeout"
#define SDM_AGG_REASON_DROPPED		"reply dropped: aggregation limit"

/* NULL on ENOMEM or a zero bound. */
struct sdm_agg_table *sdm_aggregate_table_new(unsigned int max_requests, size_t max_bytes);
/* Frees outstanding requests and unread messages. Accepts NULL. */
void sdm_aggregate_table_free(struct sdm_agg_table *t);

/*
 * Register request id (non-zero) expecting an answer from every id in
 * expect, due at deadline. An empty expect completes at once (no
 * message). Returns 0, -EEXIST (id outstanding), -ENOBUFS (max_requests
 * reached), -EINVAL (id 0) or -ENOMEM.
 */
int sdm_aggregate_start(struct sdm_agg_table *t, uint32_t id,
			const struct sdm_idset *expect, uint64_t deadline);

/*
 * Feed one upstream REPLY or ERROR message (msg->agg.id names the request,
 * msg->src the ids it answers for). The table never takes msg: the caller
 * still frees it. Only src ids that are expected and not yet answered
 * count. Returns 1 if the request completed (pop its messages), 0 if it
 * is still waiting (or is complete but ran out of memory building its
 * messages: the next sdm_aggregate_expire() finishes it), -ENOENT for an
 * unknown (or already finished) request, -EALREADY if no id of src was
 * still pending, -EINVAL for another message type, -ENOMEM.
 */
int sdm_aggregate_add(struct sdm_agg_table *t, const struct sdm_message *msg);

/*
 * Ids that will never answer (a child connection died: pass its subtree):
 * in every outstanding request they are answered with an SDM_MSG_ERROR
 * whose payload is reason. Returns the number of requests that completed,
 * or -ENOMEM.
 */
int sdm_aggregate_fail(struct sdm_agg_table *t, const struct sdm_idset *ids,
		       const char *reason);

/*
 * Finish every request whose deadline is <= now. Returns how many
 * completed, or -ENOMEM (the table stays consistent; call again).
 */
int sdm_aggregate_expire(struct sdm_agg_table *t, uint64_t now);

/* Earliest deadline of the outstanding requests, UINT64_MAX if none. */
uint64_t sdm_aggregate_next_deadline(const struct sdm_agg_table *t);

/* Number of outstanding (unfinished) requests. */
unsigned int sdm_aggregate_outstanding(const struct sdm_agg_table *t);

/*
 * Next finished message (REPLY or ERROR, agg.id = its request, src = the
 * ids it speaks for, dest empty), or NULL. The caller owns and frees it.
 */
struct sdm_message *sdm_aggregate_pop(struct sdm_agg_table *t);

/* Ids of request id still pending (copied into *ret). -ENOENT, -ENOMEM. */
int sdm_aggregate_pending(const struct sdm_agg_table *t, uint32_t id,
			  struct sdm_idset *ret);

/* 64-bit hash of a payload (exposed for tests and benchmarks). */
uint64_t sdm_aggregate_hash(const void *buf, size_t len);

/*
 * For tests: replace the payload hash of a table (NULL restores the
 * default), e.g. with a constant to show that colliding payloads are kept
 * apart. Call before the first sdm_aggregate_start().
 */
void sdm_aggregate_set_hash_fn(struct sdm_agg_table *t,
			       uint64_t (*fn)(const void *buf, size_t len));

#endif /* SDM_AGGREGATE_H */
