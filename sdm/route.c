// SPDX-License-Identifier: GPL-2.0
/*
 * Binomial-tree routing over server ids 0..N-1 with the master above 0.
 * Every subtree is a contiguous id range (see sdm/include/sdm/route.h), so
 * nothing here walks the tree: a route is a few range tests per child.
 */
#include <errno.h>
#include <string.h>

#include "sdm/route.h"

/* Lowest set bit of id; 0 for id 0. */
static inline uint32_t lowbit(uint32_t id)
{
	return id & -id;
}

int sdm_route_init(struct sdm_route *r, sdm_id id, uint32_t size)
{
	if (size == 0 || size > (uint32_t)SDM_SET_MAX_ID + 1)
		return -EINVAL;
	if (id != SDM_MASTER && id >= size)
		return -EINVAL;
	r->id = id;
	r->size = size;
	return 0;
}

sdm_id sdm_route_parent_of(sdm_id id, uint32_t size)
{
	(void)size;
	if (id == SDM_MASTER)
		return SDM_FRONTEND;
	if (id == 0)
		return SDM_MASTER;
	return id & (id - 1);
}

sdm_id sdm_route_get_parent(const struct sdm_route *r)
{
	return sdm_route_parent_of(r->id, r->size);
}

bool sdm_route_subtree(sdm_id id, uint32_t size, sdm_id *ret_first, sdm_id *ret_last)
{
	if (id == SDM_MASTER || id == 0) {
		*ret_first = 0;
		*ret_last = size - 1;
		return true;
	}
	if (id >= size)
		return false;
	*ret_first = id;
	/* [id, id + lowbit(id)) clipped to the tree; no overflow: id < 2^24. */
	*ret_last = (id + lowbit(id) < size ? id + lowbit(id) : size) - 1;
	return true;
}

unsigned int sdm_route_get_children(const struct sdm_route *r, sdm_id *ret)
{
	uint32_t limit;
	unsigned int n = 0;

	if (r->id == SDM_MASTER) {
		ret[0] = 0;
		return 1;
	}
	/* Children are id + 2^k for 2^k below the lowest set bit of id. */
	limit = r->id ? lowbit(r->id) : r->size;
	for (uint32_t step = 1; step < limit && r->id + step < r->size; step <<= 1)
		ret[n++] = r->id + step;
	return n;
}

int sdm_route_get_route(const struct sdm_route *r, const struct sdm_idset *dest,
			struct sdm_idset *ret)
{
	sdm_id children[SDM_ROUTE_MAX_CHILDREN];
	unsigned int n = sdm_route_get_children(r, children);

	sdm_set_clear(ret);
	for (unsigned int i = 0; i < n; i++) {
		sdm_id first = 0, last = 0;
		int err;

		sdm_route_subtree(children[i], r->size, &first, &last);
		if (!sdm_set_intersects_range(dest, first, last))
			continue;
		err = sdm_set_add_element(ret, children[i]);
		if (err)
			return err;
	}
	return 0;
}

int sdm_route_reachable(const struct sdm_route *r, const struct sdm_idset *dest,
			struct sdm_idset *ret)
{
	sdm_id first = 0, last = 0;
	int err;

	sdm_route_subtree(r->id, r->size, &first, &last);
	err = sdm_set_assign(ret, dest);
	if (!err)
		err = sdm_set_intersect_range(ret, first, last);
	return err;
}

sdm_id sdm_route_next_hop(const struct sdm_route *r, sdm_id dest)
{
	sdm_id first = 0, last = 0;
	uint32_t d;

	if (dest >= r->size || dest == r->id)
		return SDM_FRONTEND;
	if (r->id == SDM_MASTER)
		return 0;
	sdm_route_subtree(r->id, r->size, &first, &last);
	if (dest < first || dest > last)
		return SDM_FRONTEND;
	/* The child id + 2^k covers [id + 2^k, id + 2^(k+1)). */
	d = dest - r->id;
	return r->id + (1u << (31 - __builtin_clz(d)));
}

unsigned int sdm_route_depth(uint32_t size)
{
	return size <= 1 ? 0 : 32 - __builtin_clz(size - 1);
}

unsigned int sdm_route_height(uint32_t size)
{
	return size <= 1 ? 0 : 31 - __builtin_clz(size);
}

unsigned int sdm_route_level(sdm_id id)
{
	return __builtin_popcount(id);
}

/* Server s's ranks: ranks[s], or {s} without a set. */
static int add_ranks_of(struct sdm_idset *to, sdm_id s,
			const struct sdm_idset *const *ranks)
{
	if (ranks && ranks[s])
		return sdm_set_union(to, ranks[s]);
	return sdm_set_add_element(to, s);
}

/* Every server's set non-empty, no rank owned twice. */
static int check_ranks(uint32_t size, const struct sdm_idset *const *ranks)
{
	struct sdm_idset *seen;
	int rc = 0;

	if (!ranks)
		return 0;
	seen = sdm_set_new();
	if (!seen)
		return -ENOMEM;
	for (uint32_t s = 0; s < size && !rc; s++) {
		if (ranks[s] && (sdm_set_is_empty(ranks[s]) ||
				 sdm_set_intersects(seen, ranks[s])))
			rc = -EINVAL;
		else if (!ranks[s] && sdm_set_contains(seen, s))
			rc = -EINVAL;
		else
			rc = add_ranks_of(seen, s, ranks);
	}
	sdm_set_free(seen);
	return rc;
}

/* The ranks of the servers first..last. */
static int ranks_of_range(struct sdm_idset *to, sdm_id first, sdm_id last,
			  const struct sdm_idset *const *ranks)
{
	int rc = 0;

	if (!ranks)
		return sdm_set_add_range(to, first, last);
	for (sdm_id s = first; s <= last && !rc; s++)
		rc = add_ranks_of(to, s, ranks);
	return rc;
}

int sdm_rank_route_init(struct sdm_rank_route *rr, sdm_id id, uint32_t size,
			const struct sdm_idset *const *ranks)
{
	sdm_id first = 0, last = 0;
	int rc;

	memset(rr, 0, sizeof(*rr));
	rc = sdm_route_init(&rr->route, id, size);
	if (!rc)
		rc = check_ranks(size, ranks);
	if (rc)
		return rc;
	rr->own = sdm_set_new();
	rr->subtree = sdm_set_new();
	if (!rr->own || !rr->subtree)
		goto nomem;
	if (id != SDM_MASTER && add_ranks_of(rr->own, id, ranks))
		goto nomem;
	sdm_route_subtree(id, size, &first, &last);
	if (ranks_of_range(rr->subtree, first, last, ranks))
		goto nomem;
	rr->nchildren = sdm_route_get_children(&rr->route, rr->child);
	for (unsigned int i = 0; i < rr->nchildren; i++) {
		rr->child_ranks[i] = sdm_set_new();
		if (!rr->child_ranks[i])
			goto nomem;
		sdm_route_subtree(rr->child[i], size, &first, &last);
		if (ranks_of_range(rr->child_ranks[i], first, last, ranks))
			goto nomem;
	}
	return 0;
nomem:
	sdm_rank_route_free(rr);
	return -ENOMEM;
}

void sdm_rank_route_free(struct sdm_rank_route *rr)
{
	sdm_set_free(rr->own);
	sdm_set_free(rr->subtree);
	for (unsigned int i = 0; i < SDM_ROUTE_MAX_CHILDREN; i++)
		sdm_set_free(rr->child_ranks[i]);
	memset(rr, 0, sizeof(*rr));
}

int sdm_rank_route_get_route(const struct sdm_rank_route *rr,
			     const struct sdm_idset *dest, struct sdm_idset *ret)
{
	sdm_set_clear(ret);
	for (unsigned int i = 0; i < rr->nchildren; i++) {
		int rc;

		if (!sdm_set_intersects(dest, rr->child_ranks[i]))
			continue;
		rc = sdm_set_add_element(ret, rr->child[i]);
		if (rc)
			return rc;
	}
	return 0;
}

static int intersect_into(const struct sdm_idset *a, const struct sdm_idset *b,
			  struct sdm_idset *ret)
{
	int rc = sdm_set_assign(ret, a);

	return rc ? rc : sdm_set_intersect(ret, b);
}

int sdm_rank_route_reachable(const struct sdm_rank_route *rr,
			     const struct sdm_idset *dest, struct sdm_idset *ret)
{
	return intersect_into(dest, rr->subtree, ret);
}

int sdm_rank_route_local(const struct sdm_rank_route *rr,
			 const struct sdm_idset *dest, struct sdm_idset *ret)
{
	return intersect_into(dest, rr->own, ret);
}
