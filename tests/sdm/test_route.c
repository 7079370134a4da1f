// SPDX-License-Identifier: GPL-2.0
/*
 * Binomial-tree routing: for every N = 1..4096 a broadcast from the master
 * reaches every id exactly once, within ceil(log2 N) hops of server 0, and
 * parent/children/subtree/next-hop agree with each other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

/* A second or two of CPU each; leave room for a loaded machine. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#include "sdm/route.h"
#include "sdm/aggregate.h"
#include "sdm/message.h"

static unsigned int ceil_log2(uint32_t n)
{
	unsigned int k = 0;

	while ((1ull << k) < n)
		k++;
	return k;
}

static unsigned int floor_log2(uint32_t n)
{
	return 31 - __builtin_clz(n);
}

/*
 * Flood a message for dest from the master using only get_route(): each
 * node forwards to the neighbours it returns, largest id (largest subtree)
 * first, one send per round. Counts deliveries per id (a node delivers
 * when its own id is in reachable(dest)); returns the deepest hop count
 * below server 0 and the last round in which a server got the message.
 */
static int flood(uint32_t n, const struct sdm_idset *dest, uint32_t *hits,
		 unsigned int *ret_height, unsigned int *ret_rounds)
{
	sdm_id *queue = malloc((n + 1) * sizeof(*queue));
	unsigned int *level = calloc(n, sizeof(*level));
	unsigned int *round = calloc(n, sizeof(*round));
	struct sdm_idset *next = sdm_set_new(), *reach = sdm_set_new();
	size_t head = 0, tail = 0;
	int err = 0;

	if (!queue || !level || !round || !next || !reach)
		return -ENOMEM;
	*ret_height = *ret_rounds = 0;
	queue[tail++] = SDM_MASTER;
	while (head < tail && !err) {
		sdm_id self = queue[head++], id;
		struct sdm_route r;

		err = sdm_route_init(&r, self, n);
		if (!err)
			err = sdm_route_get_route(&r, dest, next);
		if (!err)
			err = sdm_route_reachable(&r, dest, reach);
		if (err)
			break;
		if (self != SDM_MASTER && sdm_set_contains(reach, self))
			hits[self]++;
		if (tail + sdm_set_size(next) > n + 1) {	/* more forwards than nodes */
			err = -ELOOP;
			break;
		}
		sdm_set_for_each(id, next) {
			level[id] = self == SDM_MASTER ? 0 : level[self] + 1;
			if (level[id] > *ret_height)
				*ret_height = level[id];
			queue[tail++] = id;
		}
		/* Rounds: the children were queued ascending, they are sent descending. */
		if (self != SDM_MASTER) {
			unsigned int k = 1;

			for (size_t i = tail; i-- > tail - sdm_set_size(next); k++) {
				round[queue[i]] = round[self] + k;
				if (round[queue[i]] > *ret_rounds)
					*ret_rounds = round[queue[i]];
			}
		}
	}
	free(queue);
	free(level);
	free(round);
	sdm_set_free(next);
	sdm_set_free(reach);
	return err;
}

TEST(broadcast_reaches_every_id_once)
{
	uint32_t *hits = malloc(4096 * sizeof(*hits));
	struct sdm_idset *all = sdm_set_new();

	ASSERT_NE(NULL, hits);
	for (uint32_t n = 1; n <= 4096; n++) {
		unsigned int height, rounds;

		memset(hits, 0, n * sizeof(*hits));
		sdm_set_clear(all);
		ASSERT_EQ(0, sdm_set_add_all(all, n - 1));
		ASSERT_EQ(0, flood(n, all, hits, &height, &rounds)) TH_LOG("N=%u", n);
		for (uint32_t i = 0; i < n; i++) {
			ASSERT_EQ(1, hits[i]) TH_LOG("N=%u id %u", n, i);
		}
		/* Depth in send rounds is ceil(log2 N); in hops floor(log2 N). */
		ASSERT_EQ(ceil_log2(n), rounds) TH_LOG("N=%u", n);
		ASSERT_EQ(ceil_log2(n), sdm_route_depth(n));
		ASSERT_EQ(floor_log2(n), height) TH_LOG("N=%u", n);
		ASSERT_EQ(floor_log2(n), sdm_route_height(n));
	}
	free(hits);
	sdm_set_free(all);
}

TEST(partial_destinations)
{
	const uint32_t n = 1000;
	uint32_t hits[1000];
	struct sdm_idset *dest = sdm_set_new();
	unsigned int height, rounds;

	ASSERT_EQ(0, sdm_set_parse(dest, "3,17,500-520,999", NULL));
	memset(hits, 0, sizeof(hits));
	ASSERT_EQ(0, flood(n, dest, hits, &height, &rounds));
	for (uint32_t i = 0; i < n; i++) {
		ASSERT_EQ(sdm_set_contains(dest, i) ? 1u : 0u, hits[i]) TH_LOG("id %u", i);
	}
	sdm_set_free(dest);
}

TEST(tree_structure)
{
	for (uint32_t n = 1; n <= 600; n++) {
		uint32_t *parent_seen = calloc(n, sizeof(uint32_t));

		for (sdm_id id = 0; id < n; id++) {
			sdm_id kids[SDM_ROUTE_MAX_CHILDREN], first, last;
			struct sdm_route r;
			unsigned int k;

			ASSERT_EQ(0, sdm_route_init(&r, id, n));
			k = sdm_route_get_children(&r, kids);
			for (unsigned int i = 0; i < k; i++) {
				ASSERT_EQ(id, sdm_route_parent_of(kids[i], n));
				ASSERT_EQ(sdm_route_level(id) + 1, sdm_route_level(kids[i]));
				parent_seen[kids[i]]++;
			}
			/* Every id of the subtree is reached through the right child. */
			ASSERT_TRUE(sdm_route_subtree(id, n, &first, &last));
			ASSERT_EQ(id, first);
			for (sdm_id d = first + 1; d <= last; d++) {
				sdm_id hop = sdm_route_next_hop(&r, d), f2, l2;

				ASSERT_TRUE(sdm_route_subtree(hop, n, &f2, &l2));
				ASSERT_TRUE(d >= f2 && d <= l2);
				ASSERT_EQ(id, sdm_route_parent_of(hop, n));
			}
			ASSERT_EQ(SDM_FRONTEND, sdm_route_next_hop(&r, id));
		}
		for (sdm_id id = 1; id < n; id++)
			ASSERT_EQ(1, parent_seen[id]);
		ASSERT_EQ(0, parent_seen[0]);
		free(parent_seen);
	}
}

TEST(master_and_bad_arguments)
{
	struct sdm_route r;
	sdm_id kids[SDM_ROUTE_MAX_CHILDREN];

	ASSERT_EQ(0, sdm_route_init(&r, SDM_MASTER, 10));
	ASSERT_EQ(SDM_FRONTEND, sdm_route_get_parent(&r));
	ASSERT_EQ(1, sdm_route_get_children(&r, kids));
	ASSERT_EQ(0, kids[0]);
	ASSERT_EQ(0, sdm_route_next_hop(&r, 9));
	ASSERT_EQ(SDM_FRONTEND, sdm_route_next_hop(&r, 10));
	ASSERT_EQ(0, sdm_route_init(&r, 0, 10));
	ASSERT_EQ(SDM_MASTER, sdm_route_get_parent(&r));
	ASSERT_EQ(-EINVAL, sdm_route_init(&r, 10, 10));
	ASSERT_EQ(-EINVAL, sdm_route_init(&r, 0, 0));
	ASSERT_EQ(-EINVAL, sdm_route_init(&r, 0, SDM_SET_MAX_ID + 2));
	/* The largest tree: 0 has 24 children. */
	ASSERT_EQ(0, sdm_route_init(&r, 0, SDM_SET_MAX_ID + 1));
	ASSERT_EQ(SDM_ROUTE_MAX_CHILDREN, sdm_route_get_children(&r, kids));
	ASSERT_EQ(24, sdm_route_depth(SDM_SET_MAX_ID + 1));
}

/*
 * Rank-set routing. layout[s] is server s's rank set; a flood from the
 * master with rank_route only: every rank of dest must be delivered
 * exactly once, at the server that owns it, no rank outside dest ever,
 * and each node's reachable() must be exactly dest ∩ its subtree's ranks
 * (what it waits for). Returns 0 or a negative errno.
 */
static int rank_flood(uint32_t n, struct sdm_idset *const *layout,
		      const struct sdm_idset *dest, struct sdm_idset *got,
		      uint32_t *hits, sdm_id maxrank)
{
	sdm_id *queue = malloc((n + 1) * sizeof(*queue));
	struct sdm_idset *next = sdm_set_new(), *mine = sdm_set_new();
	struct sdm_idset *reach = sdm_set_new(), *below = sdm_set_new();
	size_t head = 0, tail = 0;
	int err = 0;

	if (!queue || !next || !mine || !reach || !below)
		return -ENOMEM;
	queue[tail++] = SDM_MASTER;
	while (head < tail && !err) {
		sdm_id self = queue[head++], r, kid;
		struct sdm_rank_route rr;

		err = sdm_rank_route_init(&rr, self, n,
					  (const struct sdm_idset *const *)layout);
		if (err)
			break;
		if (!err)
			err = sdm_rank_route_get_route(&rr, dest, next);
		if (!err)
			err = sdm_rank_route_local(&rr, dest, mine);
		if (!err)
			err = sdm_rank_route_reachable(&rr, dest, reach);
		/* reachable = local + what each routed child reaches. */
		sdm_set_clear(below);
		if (!err)
			err = sdm_set_union(below, mine);
		for (unsigned int i = 0; !err && i < rr.nchildren; i++) {
			struct sdm_idset *part = sdm_set_copy(dest);

			if (!part)
				err = -ENOMEM;
			else if (!sdm_set_contains(next, rr.child[i]) &&
				 sdm_set_intersects(dest, rr.child_ranks[i]))
				err = -EPROTO;	/* a child with work left out */
			else if (!sdm_set_intersect(part, rr.child_ranks[i]))
				err = sdm_set_union(below, part);
			sdm_set_free(part);
		}
		if (!err && !sdm_set_equal(below, reach))
			err = -EPROTO;
		if (!err && (self == SDM_MASTER) != sdm_set_is_empty(rr.own))
			err = -EPROTO;
		sdm_set_for_each(r, mine) {
			if (r > maxrank || !sdm_set_contains(dest, r)) {
				err = -EPROTO;
				break;
			}
			hits[r]++;
			sdm_set_add_element(got, r);
		}
		if (tail + sdm_set_size(next) > n + 1)
			err = -ELOOP;
		sdm_set_for_each(kid, next)
			queue[tail++] = kid;
		sdm_rank_route_free(&rr);
	}
	free(queue);
	sdm_set_free(next);
	sdm_set_free(mine);
	sdm_set_free(reach);
	sdm_set_free(below);
	return err;
}

/* n servers, server s owning size[s] consecutive ranks (s-th block). */
static struct sdm_idset **blocks(uint32_t n, const unsigned int *size,
				 sdm_id *ret_max)
{
	struct sdm_idset **l = calloc(n, sizeof(*l));
	sdm_id next = 0;

	for (uint32_t s = 0; l && s < n; s++) {
		l[s] = sdm_set_new();
		sdm_set_add_range(l[s], next, next + size[s] - 1);
		next += size[s];
	}
	*ret_max = next - 1;
	return l;
}

static void layout_free(uint32_t n, struct sdm_idset **l)
{
	for (uint32_t s = 0; s < n; s++)
		sdm_set_free(l[s]);
	free(l);
}

/* Flood every rank, then every third rank, of layout l; check both. */
static void check_layout(struct __test_metadata *_metadata, uint32_t n,
			 struct sdm_idset **l, sdm_id maxrank)
{
	struct sdm_idset *dest = sdm_set_new(), *got = sdm_set_new();
	uint32_t *hits = calloc(maxrank + 1, sizeof(*hits));

	ASSERT_NE(NULL, hits);
	for (int pass = 0; pass < 2; pass++) {
		sdm_set_clear(dest);
		sdm_set_clear(got);
		memset(hits, 0, (maxrank + 1) * sizeof(*hits));
		for (sdm_id r = 0; r <= maxrank; r++)
			if (!pass || r % 3 == 1)
				sdm_set_add_element(dest, r);
		ASSERT_EQ(0, rank_flood(n, l, dest, got, hits, maxrank)) TH_LOG("N=%u pass %d", n, pass);
		ASSERT_TRUE(sdm_set_equal(dest, got)) TH_LOG("N=%u pass %d", n, pass);
		for (sdm_id r = 0; r <= maxrank; r++) {
			ASSERT_EQ(sdm_set_contains(dest, r) ? 1u : 0u, hits[r]) TH_LOG("N=%u rank %u", n, r);
		}
	}
	free(hits);
	sdm_set_free(dest);
	sdm_set_free(got);
}

TEST(rank_sets_flood_every_rank_once)
{
	/* Even, uneven, one rank and 1000 ranks per server. */
	static const unsigned int two[] = { 2, 2, 2 }, uneven[] = { 5, 1, 3, 1, 1, 7, 2 };
	static const unsigned int one[] = { 1000 };
	sdm_id max;
	struct sdm_idset **l;

	l = blocks(3, two, &max);
	check_layout(_metadata, 3, l, max);
	layout_free(3, l);
	l = blocks(7, uneven, &max);
	check_layout(_metadata, 7, l, max);
	layout_free(7, l);
	l = blocks(1, one, &max);
	check_layout(_metadata, 1, l, max);
	layout_free(1, l);
	/* Every N up to 200, server s owning 1 + s % 4 ranks. */
	for (uint32_t n = 1; n <= 200; n++) {
		unsigned int *sz = malloc(n * sizeof(*sz));

		for (uint32_t s = 0; s < n; s++)
			sz[s] = 1 + s % 4;
		l = blocks(n, sz, &max);
		check_layout(_metadata, n, l, max);
		layout_free(n, l);
		free(sz);
	}
}

TEST(rank_sets_scattered_and_default)
{
	/* Ranks dealt round robin over 5 servers (a cyclic placement). */
	struct sdm_idset *l[5];
	sdm_id max = 22;

	for (int s = 0; s < 5; s++)
		l[s] = sdm_set_new();
	for (sdm_id r = 0; r <= max; r++)
		sdm_set_add_element(l[r % 5], r);
	check_layout(_metadata, 5, l, max);
	/* A NULL entry: that server owns its own id (here 3 owns 3). */
	for (int s = 0; s < 5; s++)
		sdm_set_clear(l[s]);
	sdm_set_add_range(l[0], 0, 2);
	sdm_set_add_range(l[1], 10, 12);
	sdm_set_add_element(l[2], 4);
	sdm_set_free(l[3]);
	l[3] = NULL;
	sdm_set_add_range(l[4], 5, 9);
	{
		struct sdm_rank_route rr;

		ASSERT_EQ(0, sdm_rank_route_init(&rr, 3, 5,
						 (const struct sdm_idset *const *)l));
		ASSERT_EQ(1, sdm_set_size(rr.own));
		ASSERT_TRUE(sdm_set_contains(rr.own, 3));
		sdm_rank_route_free(&rr);
	}
	for (int s = 0; s < 5; s++)
		sdm_set_free(l[s]);
}

TEST(rank_sets_refused)
{
	struct sdm_idset *l[3] = { sdm_set_new(), sdm_set_new(), sdm_set_new() };
	struct sdm_rank_route rr;

	sdm_set_add_range(l[0], 0, 1);
	sdm_set_add_range(l[1], 1, 2);	/* rank 1 twice */
	sdm_set_add_range(l[2], 3, 4);
	ASSERT_EQ(-EINVAL, sdm_rank_route_init(&rr, 0, 3,
					       (const struct sdm_idset *const *)l));
	sdm_set_clear(l[1]);		/* a server with no rank */
	ASSERT_EQ(-EINVAL, sdm_rank_route_init(&rr, 0, 3,
					       (const struct sdm_idset *const *)l));
	sdm_set_add_element(l[1], 2);
	ASSERT_EQ(0, sdm_rank_route_init(&rr, 0, 3,
					 (const struct sdm_idset *const *)l));
	sdm_rank_route_free(&rr);
	for (int s = 0; s < 3; s++)
		sdm_set_free(l[s]);
}

/*
 * A request at server 0 of 7 uneven servers waits for every rank; one
 * child answers, another dies: its whole subtree's ranks are answered
 * by one error event and the request completes with every rank once.
 */
TEST(rank_sets_dead_child_answered)
{
	static const unsigned int sz[] = { 2, 3, 1, 4, 2, 1, 2 };
	struct sdm_agg_table *agg = sdm_aggregate_table_new(8, 1 << 20);
	struct sdm_idset *all = sdm_set_new(), *seen = sdm_set_new();
	struct sdm_idset *expect = sdm_set_new();
	struct sdm_rank_route rr;
	struct sdm_message *m;
	struct sdm_idset **l;
	unsigned int errors = 0, replies = 0;
	sdm_id max;

	l = blocks(7, sz, &max);
	ASSERT_EQ(0, sdm_set_add_range(all, 0, max));
	ASSERT_EQ(0, sdm_rank_route_init(&rr, 0, 7,
					 (const struct sdm_idset *const *)l));
	ASSERT_EQ(3, rr.nchildren);	/* 1, 2 (with 3), 4 (with 5, 6, 7) */
	ASSERT_EQ(0, sdm_rank_route_reachable(&rr, all, expect));
	ASSERT_TRUE(sdm_set_equal(all, expect));
	ASSERT_EQ(0, sdm_aggregate_start(agg, 5, expect, 1000));
	/* Server 0 answers for its own ranks, child 1 for its subtree. */
	m = sdm_message_new(SDM_MSG_REPLY, "ok", 2);
	ASSERT_EQ(0, sdm_set_assign(m->src, rr.own));
	m->agg.id = 5;
	ASSERT_LE(0, sdm_aggregate_add(agg, m));
	ASSERT_EQ(0, sdm_set_assign(m->src, rr.child_ranks[0]));
	ASSERT_LE(0, sdm_aggregate_add(agg, m));
	sdm_message_free(m);
	/* Child 2 (servers 2-3, ranks 5-9) answers, child 4 dies. */
	ASSERT_EQ(2, rr.child[1]);
	m = sdm_message_new(SDM_MSG_REPLY, "ok", 2);
	ASSERT_EQ(0, sdm_set_assign(m->src, rr.child_ranks[1]));
	m->agg.id = 5;
	ASSERT_LE(0, sdm_aggregate_add(agg, m));
	sdm_message_free(m);
	ASSERT_EQ(NULL, sdm_aggregate_pop(agg));	/* still waiting */
	ASSERT_EQ(1, sdm_aggregate_fail(agg, rr.child_ranks[2], "server 4: gone"));
	while ((m = sdm_aggregate_pop(agg))) {
		ASSERT_FALSE(sdm_set_intersects(seen, m->src));
		sdm_set_union(seen, m->src);
		if (m->type == SDM_MSG_ERROR) {
			errors++;
			/* Servers 4-6 hold ranks 10-14. */
			ASSERT_TRUE(sdm_set_equal(m->src, rr.child_ranks[2]));
			ASSERT_EQ(10, sdm_set_find_next(m->src, 0, &max) ? max : 0);
			ASSERT_EQ(5, sdm_set_size(m->src));
		} else {
			replies++;
		}
		sdm_message_free(m);
	}
	ASSERT_EQ(1, errors);
	ASSERT_EQ(1, replies);	/* the identical "ok"s merged */
	ASSERT_TRUE(sdm_set_equal(all, seen));
	sdm_rank_route_free(&rr);
	layout_free(7, l);
	sdm_set_free(all);
	sdm_set_free(seen);
	sdm_set_free(expect);
	sdm_aggregate_table_free(agg);
}

TEST_HARNESS_MAIN
