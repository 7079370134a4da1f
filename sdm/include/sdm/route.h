/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Changes since first published: sdm_route_depth() counts broadcast send
 * rounds (ceil(log2 N)); the hop height is the new sdm_route_height().
 *
 * Routing (sdm_route_*): a binomial tree over the server ids
 * 0..N-1, with the master above server 0.
 *
 *   master
 *     └── 0
 *         ├── 1
 *         ├── 2 ── 3
 *         └── 4 ── 5
 *              └── 6 ── 7            (N = 8)
 *
 * The parent of id i > 0 is i with its lowest set bit cleared; the parent
 * of 0 is the master; the master's only child is 0. The children of i are
 * i + 2^k for every 2^k below i's lowest set bit (every 2^k for i = 0)
 * with i + 2^k < N. So the subtree under any node is one contiguous range
 * of ids, [i, min(i + lowbit(i), N)) (all of [0, N) under 0 and under the
 * master), which makes routing a few comparisons. The tree is floor(log2 N)
 * hops high; a broadcast in which every node sends to its children largest
 * subtree first (descending id) reaches all N servers in ceil(log2 N) send
 * rounds, the optimum for point-to-point sends.
 *
 * Unlike a process-wide global, the routing state is a small value the
 * caller keeps (one per process).
 */
#ifndef SDM_ROUTE_H
#define SDM_ROUTE_H

#include "sdm/common.h"
#include "sdm/idset.h"

/* Most children a node can have: a binomial tree over 2^24 ids. */
#define SDM_ROUTE_MAX_CHILDREN	24

struct sdm_route {
	sdm_id id;		/* this process: 0..size-1, or SDM_MASTER */
	uint32_t size;		/* N, the number of servers */
};

/* 0, or -EINVAL if size is 0 or above SDM_SET_MAX_ID + 1 or id >= size (and not SDM_MASTER). */
int sdm_route_init(struct sdm_route *r, sdm_id id, uint32_t size);

static inline sdm_id sdm_route_get_id(const struct sdm_route *r) { return r->id; }
static inline uint32_t sdm_route_get_size(const struct sdm_route *r) { return r->size; }

/* Parent of this process: SDM_MASTER for server 0, SDM_FRONTEND for the master. */
sdm_id sdm_route_get_parent(const struct sdm_route *r);
/* Parent of any id in a tree of size N (same rules). */
sdm_id sdm_route_parent_of(sdm_id id, uint32_t size);

/*
 * Children of this process in ascending order, written to ret (room for
 * SDM_ROUTE_MAX_CHILDREN); returns how many.
 */
unsigned int sdm_route_get_children(const struct sdm_route *r, sdm_id *ret);

/*
 * Ids in the subtree of node id (itself included): [*ret_first, *ret_last].
 * For SDM_MASTER that is every server. Returns false if id is not in the tree.
 */
bool sdm_route_subtree(sdm_id id, uint32_t size, sdm_id *ret_first, sdm_id *ret_last);

/*
 * Nearest neighbours to reach dest: the children of this process whose
 * subtree holds at least one id of dest. This process itself is not
 * included (see sdm_route_reachable). Result replaces *ret. 0 or -ENOMEM.
 */
int sdm_route_get_route(const struct sdm_route *r, const struct sdm_idset *dest,
			struct sdm_idset *ret);

/*
 * The ids of dest this process can reach: dest ∩ its subtree, itself
 * included (a server's own id in dest means "deliver here too"). This is
 * the set of ids a request must hear from before it completes here.
 * Result replaces *ret. 0 or -ENOMEM.
 */
int sdm_route_reachable(const struct sdm_route *r, const struct sdm_idset *dest,
			struct sdm_idset *ret);

/*
 * The child of this process through which id dest is reached, or
 * SDM_FRONTEND when dest is this process itself or not below it.
 */
sdm_id sdm_route_next_hop(const struct sdm_route *r, sdm_id dest);

/*
 * Send rounds of a broadcast from server 0 (children served largest
 * subtree first): ceil(log2 size), 0 for size 1.
 */
unsigned int sdm_route_depth(uint32_t size);
/* Hops from server 0 to the deepest server: floor(log2 size). */
unsigned int sdm_route_height(uint32_t size);
/* Hops from server 0 down to id. */
unsigned int sdm_route_level(sdm_id id);

/*
 * Rank-set routing. Messages address RANKS (what a user names: MPI ranks),
 * the tree is built over SERVER ids 0..N-1 as above, and each server owns
 * a set of ranks (one server per node drives all of that node's ranks).
 * Without rank sets a server owns just its own id, which is the routing
 * above. A node precomputes, once at initialization, the ranks below each
 * child; then
 *   - a child is on the route of dest if dest meets its subtree's ranks,
 *   - a request at a node expects dest ∩ the ranks of its own subtree
 *     (its own ranks included),
 *   - a dead child answers for all the ranks of its subtree,
 *   - the local backend gets dest ∩ the node's own ranks.
 */
struct sdm_rank_route {
	struct sdm_route route;		/* over server ids */
	struct sdm_idset *own;		/* this server's ranks (empty: master) */
	struct sdm_idset *subtree;	/* ranks of its subtree, own included */
	unsigned int nchildren;
	sdm_id child[SDM_ROUTE_MAX_CHILDREN];
	struct sdm_idset *child_ranks[SDM_ROUTE_MAX_CHILDREN];
};

/*
 * ranks[s] is server s's rank set; ranks NULL, or a NULL entry, means
 * server s owns rank s alone. The sets must be non-empty and disjoint.
 * 0, -EINVAL (bad id or size, empty or overlapping sets) or -ENOMEM.
 */
int sdm_rank_route_init(struct sdm_rank_route *rr, sdm_id id, uint32_t size,
			const struct sdm_idset *const *ranks);
void sdm_rank_route_free(struct sdm_rank_route *rr);
/* The children (server ids) whose subtree owns a rank of dest. */
int sdm_rank_route_get_route(const struct sdm_rank_route *rr,
			     const struct sdm_idset *dest, struct sdm_idset *ret);
/* dest ∩ the ranks of this node's subtree: what a request waits for. */
int sdm_rank_route_reachable(const struct sdm_rank_route *rr,
			     const struct sdm_idset *dest, struct sdm_idset *ret);
/* dest ∩ this server's own ranks: what its backend is asked. */
int sdm_rank_route_local(const struct sdm_rank_route *rr,
			 const struct sdm_idset *dest, struct sdm_idset *ret);

#endif /* SDM_ROUTE_H */
