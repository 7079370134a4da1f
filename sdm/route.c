// SPDX-License-Identifier: GPL-2.0
/*
 * Binomial-tree routing over server ids 0..N-1 with the master above 0.
 * Every subtree is a contiguous id range (see sdm/include/sdm/route.h), so
 * nothing here walks the tree: a route is a few range tests per child.
 */
#include <errno.h>

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
