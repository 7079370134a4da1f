// SPDX-License-Identifier: GPL-2.0
/*
 * Upstream aggregation: a table of outstanding requests, each with the set
 * of ids it still waits for and its replies grouped by payload (see
 * sdm/include/sdm/aggregate.h). No clock, no I/O.
 *
 * Requests live in a fixed array of hash buckets chained by request id.
 * Within a request, groups (one per distinct payload) sit in a chained hash
 * table keyed by a 64-bit payload hash that doubles as it fills, and in a
 * list in arrival order so results come out in a stable order. A group is
 * matched by hash, type, length and then memcmp of the payload.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sdm/aggregate.h"

#define REQ_BUCKETS	256	/* power of two */
#define GROUP_BUCKETS0	8	/* power of two */
#define GROUP_OVERHEAD	SDM_AGG_GROUP_OVERHEAD

struct agg_group {
	struct agg_group *hnext;	/* hash chain */
	struct agg_group *onext;	/* arrival order */
	uint64_t hash;
	uint8_t type;			/* SDM_MSG_REPLY or SDM_MSG_ERROR */
	size_t cost;			/* charged against max_bytes (0: exempt) */
	struct sdm_idset *src;
	uint8_t *payload;
	size_t len;
};

struct agg_req {
	struct agg_req *next;		/* bucket chain */
	uint32_t id;
	uint64_t deadline;
	struct sdm_idset *pending;	/* expected, not yet answered */
	struct agg_group **buckets;
	uint32_t nbuckets, ngroups;
	struct agg_group *first, **tail;
};

struct sdm_agg_table {
	struct agg_req *buckets[REQ_BUCKETS];
	unsigned int nreq, max_requests;
	size_t bytes, max_bytes;
	uint64_t (*hash)(const void *buf, size_t len);
	/* Finished messages, a FIFO in an array: [head, count). */
	struct sdm_message **ready;
	size_t head, count, cap;
};

uint64_t sdm_aggregate_hash(const void *buf, size_t len)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	const uint8_t *p = buf;
	uint64_t h = len * k, v;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&v, p, 8);
		h = (h ^ v) * k;
		h ^= h >> 32;
	}
	v = 0;
	memcpy(&v, p, len);
	h = (h ^ v ^ (uint64_t)len << 59) * k;
	/* Final avalanche (murmur3's fmix64). */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

void sdm_aggregate_set_hash_fn(struct sdm_agg_table *t,
			       uint64_t (*fn)(const void *buf, size_t len))
{
	t->hash = fn ? fn : sdm_aggregate_hash;
}

struct sdm_agg_table *sdm_aggregate_table_new(unsigned int max_requests, size_t max_bytes)
{
	struct sdm_agg_table *t;

	if (!max_requests || !max_bytes)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->max_requests = max_requests;
	t->max_bytes = max_bytes;
	t->hash = sdm_aggregate_hash;
	return t;
}

static void group_free(struct sdm_agg_table *t, struct agg_group *g)
{
	t->bytes -= g->cost;
	sdm_set_free(g->src);
	free(g->payload);
	free(g);
}

static void req_free(struct sdm_agg_table *t, struct agg_req *req)
{
	struct agg_group *g, *next;

	for (g = req->first; g; g = next) {
		next = g->onext;
		group_free(t, g);
	}
	sdm_set_free(req->pending);
	free(req->buckets);
	free(req);
}

void sdm_aggregate_table_free(struct sdm_agg_table *t)
{
	if (!t)
		return;
	for (unsigned int b = 0; b < REQ_BUCKETS; b++) {
		struct agg_req *req, *next;

		for (req = t->buckets[b]; req; req = next) {
			next = req->next;
			req_free(t, req);
		}
	}
	for (size_t i = t->head; i < t->count; i++)
		sdm_message_free(t->ready[i]);
	free(t->ready);
	free(t);
}

static struct agg_req **req_slot(const struct sdm_agg_table *t, uint32_t id)
{
	struct agg_req *const *slot = &t->buckets[id & (REQ_BUCKETS - 1)];

	while (*slot && (*slot)->id != id)
		slot = &(*slot)->next;
	return (struct agg_req **)slot;
}

int sdm_aggregate_start(struct sdm_agg_table *t, uint32_t id,
			const struct sdm_idset *expect, uint64_t deadline)
{
	struct agg_req **slot = req_slot(t, id), *req;

	if (!id)
		return -EINVAL;
	if (*slot)
		return -EEXIST;
	if (t->nreq >= t->max_requests)
		return -ENOBUFS;
	if (sdm_set_is_empty(expect))
		return 0;
	req = calloc(1, sizeof(*req));
	if (!req)
		return -ENOMEM;
	req->pending = sdm_set_copy(expect);
	if (!req->pending) {
		free(req);
		return -ENOMEM;
	}
	req->id = id;
	req->deadline = deadline;
	req->tail = &req->first;
	*slot = req;
	t->nreq++;
	return 0;
}

/* Double the group hash table; on ENOMEM chains just get longer. */
static void groups_grow(struct agg_req *req)
{
	uint32_t n = req->nbuckets ? req->nbuckets * 2 : GROUP_BUCKETS0;
	struct agg_group **b = calloc(n, sizeof(*b));

	if (!b)
		return;
	for (struct agg_group *g = req->first; g; g = g->onext) {
		g->hnext = b[g->hash & (n - 1)];
		b[g->hash & (n - 1)] = g;
	}
	free(req->buckets);
	req->buckets = b;
	req->nbuckets = n;
}

/* The group of this exact payload, or NULL. */
static struct agg_group *group_find(const struct agg_req *req, uint64_t hash,
				    uint8_t type, const void *payload, size_t len)
{
	struct agg_group *g;

	if (!req->nbuckets)
		return NULL;
	for (g = req->buckets[hash & (req->nbuckets - 1)]; g; g = g->hnext)
		if (g->hash == hash && g->type == type && g->len == len &&
		    (!len || !memcmp(g->payload, payload, len)))
			return g;
	return NULL;
}

/*
 * The group of this exact payload; a new one (payload copied) if there is
 * none and counted payloads still fit in the table's byte bound.
 */
static struct agg_group *group_get(struct sdm_agg_table *t, struct agg_req *req,
				   uint8_t type, const void *payload, size_t len,
				   bool counted)
{
	uint64_t hash = t->hash(payload, len);
	struct agg_group *g = group_find(req, hash, type, payload, len);
	size_t cost = counted ? len + GROUP_OVERHEAD : 0;

	if (g)
		return g;
	if (counted && (len > t->max_bytes || cost > t->max_bytes - t->bytes))
		return NULL;
	if (req->ngroups >= req->nbuckets)
		groups_grow(req);
	if (!req->nbuckets)
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->src = sdm_set_new();
	g->payload = len ? malloc(len) : NULL;
	if (!g->src || (len && !g->payload)) {
		sdm_set_free(g->src);
		free(g->payload);
		free(g);
		return NULL;
	}
	if (len)
		memcpy(g->payload, payload, len);
	g->hash = hash;
	g->type = type;
	g->len = len;
	g->cost = cost;
	t->bytes += cost;
	g->hnext = req->buckets[hash & (req->nbuckets - 1)];
	req->buckets[hash & (req->nbuckets - 1)] = g;
	*req->tail = g;
	req->tail = &g->onext;
	req->ngroups++;
	return g;
}

/* Record that ids (all pending in req) answered with this payload. */
static int req_answer(struct sdm_agg_table *t, struct agg_req *req, uint8_t type,
		      const void *payload, size_t len, const struct sdm_idset *ids)
{
	struct agg_group *g;
	int err;

	g = group_get(t, req, type, payload, len, true);
	if (!g)	/* over the byte bound, or no memory for the payload */
		g = group_get(t, req, SDM_MSG_ERROR, SDM_AGG_REASON_DROPPED,
			      strlen(SDM_AGG_REASON_DROPPED), false);
	if (!g)
		return -ENOMEM;
	err = sdm_set_union(g->src, ids);
	if (!err)
		err = sdm_set_diff(req->pending, ids);
	return err;
}

static int ready_reserve(struct sdm_agg_table *t, size_t more)
{
	struct sdm_message **r;
	size_t cap;

	if (t->head == t->count)
		t->head = t->count = 0;
	if (t->count + more <= t->cap)
		return 0;
	if (t->head) {		/* slide the unread part to the front first */
		memmove(t->ready, t->ready + t->head, (t->count - t->head) * sizeof(*r));
		t->count -= t->head;
		t->head = 0;
		if (t->count + more <= t->cap)
			return 0;
	}
	cap = t->cap ? t->cap : 16;
	while (cap < t->count + more)
		cap *= 2;
	r = realloc(t->ready, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	t->ready = r;
	t->cap = cap;
	return 0;
}

/*
 * Turn req into messages (one per non-empty group, then one error for the
 * ids still pending, payload reason) and drop it. All or nothing: on
 * ENOMEM the request stays as it was.
 */
static int req_finish(struct sdm_agg_table *t, struct agg_req *req, const char *reason)
{
	size_t n = 0, i = 0;
	struct sdm_message **out;
	struct agg_group *g;
	bool missing = !sdm_set_is_empty(req->pending);

	if (ready_reserve(t, req->ngroups + 1))
		return -ENOMEM;
	out = t->ready + t->count;
	for (g = req->first; g; g = g->onext) {
		if (sdm_set_is_empty(g->src))
			continue;
		out[n] = sdm_message_new(g->type, NULL, 0);
		if (!out[n++])
			goto nomem;
	}
	if (missing) {
		out[n] = sdm_message_new(SDM_MSG_ERROR, reason, strlen(reason));
		if (!out[n++])
			goto nomem;
	}
	/* Nothing can fail from here on: move payloads and sets over. */
	for (g = req->first; g; g = g->onext) {
		struct sdm_idset *empty;

		if (sdm_set_is_empty(g->src))
			continue;
		empty = out[i]->src;
		out[i]->src = g->src;
		g->src = empty;
		out[i]->payload = g->payload;
		out[i]->len = g->len;
		out[i]->agg.id = req->id;
		g->payload = NULL;
		g->len = 0;
		i++;
	}
	if (missing) {
		struct sdm_idset *empty = out[i]->src;

		out[i]->src = req->pending;
		req->pending = empty;
		out[i]->agg.id = req->id;
	}
	t->count += n;
	*req_slot(t, req->id) = req->next;
	t->nreq--;
	req_free(t, req);
	return 0;
nomem:
	while (n)
		sdm_message_free(out[--n]);
	return -ENOMEM;
}

int sdm_aggregate_add(struct sdm_agg_table *t, const struct sdm_message *msg)
{
	struct agg_req *req;
	struct sdm_idset *ids;
	int err;

	if (msg->type != SDM_MSG_REPLY && msg->type != SDM_MSG_ERROR)
		return -EINVAL;
	req = *req_slot(t, msg->agg.id);
	if (!req)
		return -ENOENT;
	if (sdm_set_is_empty(msg->src))
		return -EALREADY;
	if (sdm_set_is_subset(msg->src, req->pending)) {
		/* The usual case: no copy needed. */
		err = req_answer(t, req, msg->type, msg->payload, msg->len, msg->src);
	} else {
		/* Count only the ids still pending. */
		ids = sdm_set_copy(msg->src);
		if (!ids)
			return -ENOMEM;
		err = sdm_set_intersect(ids, req->pending);
		if (!err && sdm_set_is_empty(ids))
			err = -EALREADY;
		if (!err)
			err = req_answer(t, req, msg->type, msg->payload, msg->len, ids);
		sdm_set_free(ids);
	}
	if (err)
		return err;
	if (!sdm_set_is_empty(req->pending))
		return 0;
	/* On ENOMEM the request stays complete; sdm_aggregate_expire() retries. */
	return req_finish(t, req, SDM_AGG_REASON_TIMEOUT) ? 0 : 1;
}

int sdm_aggregate_fail(struct sdm_agg_table *t, const struct sdm_idset *ids,
		       const char *reason)
{
	struct sdm_idset *dead = sdm_set_new();
	int done = 0, err = 0;

	if (!dead)
		return -ENOMEM;
	for (unsigned int b = 0; b < REQ_BUCKETS && !err; b++) {
		struct agg_req *req = t->buckets[b], *next;

		for (; req && !err; req = next) {
			next = req->next;
			err = sdm_set_assign(dead, ids);
			if (!err)
				err = sdm_set_intersect(dead, req->pending);
			if (err || sdm_set_is_empty(dead))
				continue;
			err = req_answer(t, req, SDM_MSG_ERROR, reason, strlen(reason), dead);
			if (!err && sdm_set_is_empty(req->pending) &&
			    !req_finish(t, req, SDM_AGG_REASON_TIMEOUT))
				done++;
		}
	}
	sdm_set_free(dead);
	return err ? err : done;
}

int sdm_aggregate_expire(struct sdm_agg_table *t, uint64_t now)
{
	int done = 0;

	for (unsigned int b = 0; b < REQ_BUCKETS; b++) {
		struct agg_req *req = t->buckets[b], *next;

		for (; req; req = next) {
			next = req->next;
			if (req->deadline > now && !sdm_set_is_empty(req->pending))
				continue;
			if (req_finish(t, req, SDM_AGG_REASON_TIMEOUT))
				return -ENOMEM;
			done++;
		}
	}
	return done;
}

uint64_t sdm_aggregate_next_deadline(const struct sdm_agg_table *t)
{
	uint64_t min = UINT64_MAX;

	for (unsigned int b = 0; b < REQ_BUCKETS; b++)
		for (const struct agg_req *req = t->buckets[b]; req; req = req->next)
			if (req->deadline < min)
				min = req->deadline;
	return min;
}

unsigned int sdm_aggregate_outstanding(const struct sdm_agg_table *t)
{
	return t->nreq;
}

struct sdm_message *sdm_aggregate_pop(struct sdm_agg_table *t)
{
	if (t->head == t->count)
		return NULL;
	return t->ready[t->head++];
}

int sdm_aggregate_pending(const struct sdm_agg_table *t, uint32_t id, struct sdm_idset *ret)
{
	const struct agg_req *req = *req_slot(t, id);

	return req ? sdm_set_assign(ret, req->pending) : -ENOENT;
}
