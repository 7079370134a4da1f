// SPDX-License-Identifier: GPL-2.0
/*
 * Aggregation logic: identical replies merge into one event whose source
 * is the union; k distinct payloads give k events partitioning the ids;
 * timeouts and dead peers give an error event naming exactly the missing
 * ids; hash collisions never merge different payloads; bounds hold.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "sdm/aggregate.h"

/* A reply for request id from the ids in range text, with a text payload. */
static struct sdm_message *reply(unsigned int type, uint32_t id, const char *ids,
				 const char *payload)
{
	struct sdm_message *m = sdm_message_new(type, payload, strlen(payload));

	if (m) {
		m->agg.id = id;
		if (sdm_set_parse(m->src, ids, NULL)) {
			sdm_message_free(m);
			m = NULL;
		}
	}
	return m;
}

static int feed(struct sdm_agg_table *t, unsigned int type, uint32_t id,
		const char *ids, const char *payload)
{
	struct sdm_message *m = reply(type, id, ids, payload);
	int ret = m ? sdm_aggregate_add(t, m) : -ENOMEM;

	sdm_message_free(m);
	return ret;
}

static bool set_is(const struct sdm_idset *s, const char *text)
{
	struct sdm_idset *want = sdm_set_new();
	bool eq = want && !sdm_set_parse(want, text, NULL) && sdm_set_equal(s, want);

	sdm_set_free(want);
	return eq;
}

static bool payload_is(const struct sdm_message *m, const char *text)
{
	return m->len == strlen(text) && !memcmp(m->payload, text, m->len);
}

TEST(identical_replies_merge)
{
	struct sdm_agg_table *t = sdm_aggregate_table_new(16, 1 << 20);
	struct sdm_idset *expect = sdm_set_new();
	struct sdm_message *m;
	char ids[16];

	ASSERT_EQ(0, sdm_set_add_all(expect, 1023));
	ASSERT_EQ(0, sdm_aggregate_start(t, 7, expect, 1000));
	ASSERT_EQ(1, sdm_aggregate_outstanding(t));
	/* Replies in a scrambled order, one id each. */
	for (uint32_t k = 0; k < 1024; k++) {
		snprintf(ids, sizeof(ids), "%u", (k * 389) % 1024);
		ASSERT_EQ(k == 1023 ? 1 : 0, feed(t, SDM_MSG_REPLY, 7, ids, "stopped at main"));
	}
	m = sdm_aggregate_pop(t);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(SDM_MSG_REPLY, m->type);
	ASSERT_EQ(7, m->agg.id);
	ASSERT_TRUE(sdm_set_equal(expect, m->src));
	ASSERT_TRUE(payload_is(m, "stopped at main"));
	sdm_message_free(m);
	ASSERT_EQ(NULL, sdm_aggregate_pop(t));
	ASSERT_EQ(0, sdm_aggregate_outstanding(t));
	/* A late reply finds nothing. */
	ASSERT_EQ(-ENOENT, feed(t, SDM_MSG_REPLY, 7, "3", "late"));
	sdm_set_free(expect);
	sdm_aggregate_table_free(t);
}

static void distinct_payloads(struct __test_metadata *_metadata, struct sdm_agg_table *t,
			      unsigned int k)
{
	struct sdm_idset *expect = sdm_set_new(), *seen = sdm_set_new();
	struct sdm_message *m;
	unsigned int events = 0;
	char ids[16], payload[16];

	ASSERT_EQ(0, sdm_set_add_all(expect, 999));
	ASSERT_EQ(0, sdm_aggregate_start(t, 42, expect, 1000));
	for (uint32_t i = 0; i < 1000; i++) {
		snprintf(ids, sizeof(ids), "%u", i);
		snprintf(payload, sizeof(payload), "x=%u", i % k);
		ASSERT_EQ(i == 999 ? 1 : 0, feed(t, SDM_MSG_REPLY, 42, ids, payload));
	}
	while ((m = sdm_aggregate_pop(t))) {
		sdm_id id;

		ASSERT_EQ(SDM_MSG_REPLY, m->type);
		ASSERT_FALSE(sdm_set_intersects(seen, m->src));
		/* Every id of the event sent exactly this payload. */
		sdm_set_for_each(id, m->src) {
			snprintf(payload, sizeof(payload), "x=%u", id % k);
			ASSERT_TRUE(payload_is(m, payload));
		}
		ASSERT_EQ(0, sdm_set_union(seen, m->src));
		sdm_message_free(m);
		events++;
	}
	ASSERT_EQ(k, events);
	ASSERT_TRUE(sdm_set_equal(expect, seen));
	sdm_set_free(expect);
	sdm_set_free(seen);
}

TEST(distinct_replies_partition)
{
	static const unsigned int ks[] = { 1, 2, 3, 10, 1000 };

	for (size_t i = 0; i < ARRAY_SIZE(ks); i++) {
		struct sdm_agg_table *t = sdm_aggregate_table_new(16, 1 << 20);

		distinct_payloads(_metadata, t, ks[i]);
		sdm_aggregate_table_free(t);
	}
}

static uint64_t constant_hash(const void *buf, size_t len)
{
	(void)buf;
	(void)len;
	return 1;
}

TEST(hash_collisions_never_merge)
{
	struct sdm_agg_table *t = sdm_aggregate_table_new(16, 1 << 20);

	sdm_aggregate_set_hash_fn(t, constant_hash);
	distinct_payloads(_metadata, t, 10);
	/* Same bytes, different type: two events. */
	{
		struct sdm_idset *expect = sdm_set_new();
		struct sdm_message *a, *b;

		sdm_set_add_all(expect, 1);
		ASSERT_EQ(0, sdm_aggregate_start(t, 1, expect, 10));
		ASSERT_EQ(0, feed(t, SDM_MSG_REPLY, 1, "0", "same"));
		ASSERT_EQ(1, feed(t, SDM_MSG_ERROR, 1, "1", "same"));
		a = sdm_aggregate_pop(t);
		b = sdm_aggregate_pop(t);
		ASSERT_NE(NULL, a);
		ASSERT_NE(NULL, b);
		ASSERT_NE(a->type, b->type);
		sdm_message_free(a);
		sdm_message_free(b);
		sdm_set_free(expect);
	}
	sdm_aggregate_table_free(t);
}

TEST(timeout_names_missing_ids)
{
	struct sdm_agg_table *t = sdm_aggregate_table_new(16, 1 << 20);
	struct sdm_idset *expect = sdm_set_new();
	struct sdm_message *m;

	ASSERT_EQ(UINT64_MAX, sdm_aggregate_next_deadline(t));
	ASSERT_EQ(0, sdm_set_parse(expect, "0-9", NULL));
	ASSERT_EQ(0, sdm_aggregate_start(t, 3, expect, 5000));
	ASSERT_EQ(5000, sdm_aggregate_next_deadline(t));
	/* A child answers for its subtree 0-3, another for 4-6. */
	ASSERT_EQ(0, feed(t, SDM_MSG_REPLY, 3, "0-3", "ok"));
	ASSERT_EQ(0, feed(t, SDM_MSG_REPLY, 3, "4-6", "ok"));
	ASSERT_EQ(-EALREADY, feed(t, SDM_MSG_REPLY, 3, "2-3", "again"));
	ASSERT_EQ(-EALREADY, feed(t, SDM_MSG_REPLY, 3, "50", "stranger"));
	ASSERT_EQ(0, sdm_aggregate_pending(t, 3, expect));
	ASSERT_TRUE(set_is(expect, "7-9"));

	ASSERT_EQ(0, sdm_aggregate_expire(t, 4999));
	ASSERT_EQ(NULL, sdm_aggregate_pop(t));
	ASSERT_EQ(1, sdm_aggregate_expire(t, 5000));
	m = sdm_aggregate_pop(t);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(SDM_MSG_REPLY, m->type);
	ASSERT_TRUE(set_is(m->src, "0-6"));
	sdm_message_free(m);
	m = sdm_aggregate_pop(t);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(SDM_MSG_ERROR, m->type);
	ASSERT_EQ(3, m->agg.id);
	ASSERT_TRUE(set_is(m->src, "7-9"));
	ASSERT_TRUE(payload_is(m, SDM_AGG_REASON_TIMEOUT));
	sdm_message_free(m);
	ASSERT_EQ(NULL, sdm_aggregate_pop(t));
	ASSERT_EQ(-ENOENT, sdm_aggregate_pending(t, 3, expect));
	sdm_set_free(expect);
	sdm_aggregate_table_free(t);
}

TEST(dead_peer_gives_error_event)
{
	struct sdm_agg_table *t = sdm_aggregate_table_new(16, 1 << 20);
	struct sdm_idset *expect = sdm_set_new(), *dead = sdm_set_new();
	struct sdm_message *m;

	ASSERT_EQ(0, sdm_set_parse(expect, "0-15", NULL));
	ASSERT_EQ(0, sdm_aggregate_start(t, 1, expect, 100));
	ASSERT_EQ(0, sdm_aggregate_start(t, 2, expect, 100));
	ASSERT_EQ(0, feed(t, SDM_MSG_REPLY, 1, "0-7", "ok"));
	/* The child at 8 dies: its subtree 8-15 fails in both requests. */
	ASSERT_EQ(0, sdm_set_parse(dead, "8-15", NULL));
	ASSERT_EQ(1, sdm_aggregate_fail(t, dead, "connection to 8 lost"));
	ASSERT_EQ(1, sdm_aggregate_outstanding(t));
	m = sdm_aggregate_pop(t);
	ASSERT_TRUE(set_is(m->src, "0-7"));
	sdm_message_free(m);
	m = sdm_aggregate_pop(t);
	ASSERT_EQ(SDM_MSG_ERROR, m->type);
	ASSERT_TRUE(set_is(m->src, "8-15"));
	ASSERT_TRUE(payload_is(m, "connection to 8 lost"));
	sdm_message_free(m);
	ASSERT_EQ(NULL, sdm_aggregate_pop(t));
	/* Request 2 then times out for 0-7 only. */
	ASSERT_EQ(1, sdm_aggregate_expire(t, 100));
	m = sdm_aggregate_pop(t);
	ASSERT_TRUE(set_is(m->src, "8-15"));
	sdm_message_free(m);
	m = sdm_aggregate_pop(t);
	ASSERT_TRUE(set_is(m->src, "0-7"));
	ASSERT_TRUE(payload_is(m, SDM_AGG_REASON_TIMEOUT));
	sdm_message_free(m);
	sdm_set_free(expect);
	sdm_set_free(dead);
	sdm_aggregate_table_free(t);
}

TEST(bounds_and_errors)
{
	/* Room for one 10-byte payload, not two. */
	struct sdm_agg_table *t = sdm_aggregate_table_new(2, 15 + SDM_AGG_GROUP_OVERHEAD);
	struct sdm_idset *expect = sdm_set_new(), *empty = sdm_set_new();
	struct sdm_message *m;

	ASSERT_EQ(NULL, sdm_aggregate_table_new(0, 16));
	ASSERT_EQ(0, sdm_set_parse(expect, "0-2", NULL));
	ASSERT_EQ(-EINVAL, sdm_aggregate_start(t, 0, expect, 1));
	ASSERT_EQ(0, sdm_aggregate_start(t, 1, expect, 1));
	ASSERT_EQ(-EEXIST, sdm_aggregate_start(t, 1, expect, 1));
	ASSERT_EQ(0, sdm_aggregate_start(t, 2, expect, 1));
	ASSERT_EQ(-ENOBUFS, sdm_aggregate_start(t, 3, expect, 1));
	ASSERT_EQ(-EINVAL, feed(t, SDM_MSG_COMMAND, 1, "0", "x"));
	/* The second distinct 10-byte payload does not fit: dropped. */
	ASSERT_EQ(0, feed(t, SDM_MSG_REPLY, 1, "0", "0123456789"));
	ASSERT_EQ(0, feed(t, SDM_MSG_REPLY, 1, "1", "abcdefghij"));
	ASSERT_EQ(1, feed(t, SDM_MSG_REPLY, 1, "2", "0123456789"));
	m = sdm_aggregate_pop(t);
	ASSERT_TRUE(set_is(m->src, "0,2"));
	sdm_message_free(m);
	m = sdm_aggregate_pop(t);
	ASSERT_EQ(SDM_MSG_ERROR, m->type);
	ASSERT_TRUE(set_is(m->src, "1"));
	ASSERT_TRUE(payload_is(m, SDM_AGG_REASON_DROPPED));
	sdm_message_free(m);
	/* The bytes came back: a new 10-byte payload fits again. */
	ASSERT_EQ(0, feed(t, SDM_MSG_REPLY, 2, "0-2", "abcdefghij") - 1);
	m = sdm_aggregate_pop(t);
	ASSERT_TRUE(payload_is(m, "abcdefghij"));
	sdm_message_free(m);
	/* An empty expect set completes at once, silently. */
	ASSERT_EQ(0, sdm_aggregate_start(t, 9, empty, 1));
	ASSERT_EQ(0, sdm_aggregate_outstanding(t));
	ASSERT_EQ(NULL, sdm_aggregate_pop(t));
	/* Unread messages and open requests are freed with the table. */
	ASSERT_EQ(0, sdm_aggregate_start(t, 10, expect, 1));
	ASSERT_EQ(0, feed(t, SDM_MSG_REPLY, 10, "0", "left over"));
	sdm_set_free(expect);
	sdm_set_free(empty);
	sdm_aggregate_table_free(t);
	sdm_aggregate_table_free(NULL);
}

TEST(many_requests)
{
	struct sdm_agg_table *t = sdm_aggregate_table_new(600, 1 << 20);
	struct sdm_idset *expect = sdm_set_new(), *pending = sdm_set_new();
	struct sdm_message *m;
	uint32_t popped = 0;
	char payload[16];

	ASSERT_EQ(0, sdm_set_parse(expect, "0-1", NULL));
	/* Ids that share hash buckets (mod 256), all outstanding at once. */
	for (uint32_t id = 1; id <= 600; id++)
		ASSERT_EQ(0, sdm_aggregate_start(t, id, expect, id));
	ASSERT_EQ(600, sdm_aggregate_outstanding(t));
	ASSERT_EQ(1, sdm_aggregate_next_deadline(t));
	for (uint32_t id = 600; id >= 1; id--) {
		snprintf(payload, sizeof(payload), "r%u", id);
		ASSERT_EQ(0, feed(t, SDM_MSG_REPLY, id, "0", payload));
		ASSERT_EQ(0, sdm_aggregate_pending(t, id, pending));
		ASSERT_TRUE(set_is(pending, "1"));
		ASSERT_EQ(1, feed(t, SDM_MSG_REPLY, id, "1", payload));
		/* Read some results as they come, leave others queued. */
		if (id % 3 == 0) {
			m = sdm_aggregate_pop(t);
			ASSERT_NE(NULL, m);
			ASSERT_TRUE(set_is(m->src, "0-1"));
			sdm_message_free(m);
			popped++;
		}
	}
	ASSERT_EQ(0, sdm_aggregate_outstanding(t));
	while ((m = sdm_aggregate_pop(t))) {
		sdm_message_free(m);
		popped++;
	}
	ASSERT_EQ(600, popped);
	/* Unread results are freed with the table. */
	ASSERT_EQ(0, sdm_aggregate_start(t, 1, expect, 1));
	ASSERT_EQ(1, sdm_aggregate_expire(t, 1));
	sdm_set_free(expect);
	sdm_set_free(pending);
	sdm_aggregate_table_free(t);
}

TEST(hash_spreads)
{
	/* Not a timing test: distinct small payloads get distinct hashes. */
	char buf[16];
	uint64_t h[256];

	for (int i = 0; i < 256; i++) {
		snprintf(buf, sizeof(buf), "x=%d", i);
		h[i] = sdm_aggregate_hash(buf, strlen(buf));
		for (int j = 0; j < i; j++)
			ASSERT_NE(h[j], h[i]);
	}
	ASSERT_EQ(sdm_aggregate_hash("abc", 3), sdm_aggregate_hash("abc", 3));
}

TEST_HARNESS_MAIN
