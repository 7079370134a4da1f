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

TEST_HARNESS_MAIN
