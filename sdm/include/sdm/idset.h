/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Id sets (sdm_set_*): sets of server ids 0..SDM_SET_MAX_ID.
 *
 * Representation: ids are split into 64Ki-id chunks (high bits = chunk key,
 * low 16 bits = offset). A chunk holds either a sorted list of disjoint
 * runs [first, last] (cheap for ranges and sparse sets) or a 8 KiB bitmap
 * (cheap for dense irregular sets); a chunk switches form when the run list
 * would outgrow the bitmap. Chunks are kept in a sorted array, so a set of
 * N ids costs at most min(4 bytes per run, 8 KiB per chunk) and a whole
 * SDM_SET_MAX_ID set at most 256 chunks (2 MiB), whatever a peer sends.
 *
 * Set operations are in place (the result goes to
 * the first argument). Functions that can allocate return 0 or -ENOMEM; a
 * failed operation leaves its target a valid set ("returns the
 * set" return values are replaced by error codes).
 *
 * Serialized form (documented in Documentation/sdm.md, "Id sets"): a
 * varint record count, then records (gap, length) for runs and raw 64-bit
 * words for dense chunks. A contiguous range of any length takes at most
 * 10 bytes.
 *
 * Display form: "0-3,5,7-1023" (ascending, comma separated, a-b inclusive);
 * "" is the empty set.
 *
 * A set is not locked: one thread at a time (the iterator writes to
 * the set even when reading it).
 */
#ifndef SDM_IDSET_H
#define SDM_IDSET_H

#include <sys/types.h>

#include "sdm/common.h"

struct sdm_idset;

/* Lifetime. */
struct sdm_idset *sdm_set_new(void);			/* NULL on ENOMEM */
void sdm_set_free(struct sdm_idset *set);		/* accepts NULL */
struct sdm_idset *sdm_set_copy(const struct sdm_idset *set); /* NULL on ENOMEM */
int sdm_set_assign(struct sdm_idset *dst, const struct sdm_idset *src); /* dst = src */
void sdm_set_clear(struct sdm_idset *set);		/* now empty; keeps no memory */

/* Queries: O(1) for size/is_empty, O(log) for contains. */
size_t sdm_set_size(const struct sdm_idset *set);
bool sdm_set_is_empty(const struct sdm_idset *set);
bool sdm_set_contains(const struct sdm_idset *set, sdm_id id);
static inline sdm_id sdm_set_max(void) { return SDM_SET_MAX_ID; }

/* Elements. -ERANGE for an id above SDM_SET_MAX_ID. */
int sdm_set_add_element(struct sdm_idset *set, sdm_id id);
int sdm_set_remove_element(struct sdm_idset *set, sdm_id id);
int sdm_set_add_range(struct sdm_idset *set, sdm_id first, sdm_id last); /* [first, last] */
int sdm_set_remove_range(struct sdm_idset *set, sdm_id first, sdm_id last);
int sdm_set_add_all(struct sdm_idset *set, sdm_id id);	/* adds [0, id] */

/* In place: set1 = set1 op set2 (set1 == set2 is allowed). */
int sdm_set_union(struct sdm_idset *set1, const struct sdm_idset *set2);
int sdm_set_intersect(struct sdm_idset *set1, const struct sdm_idset *set2);
int sdm_set_diff(struct sdm_idset *set1, const struct sdm_idset *set2);	/* set1 \ set2 */
int sdm_set_intersect_range(struct sdm_idset *set, sdm_id first, sdm_id last);

/* Comparisons, no allocation. */
/* set1 ⊆ set2 */
bool sdm_set_is_subset(const struct sdm_idset *set1, const struct sdm_idset *set2);
bool sdm_set_equal(const struct sdm_idset *set1, const struct sdm_idset *set2);
/* sdm_set_compare(): true when the sets are DIFFERENT (the classic SDM meaning). */
static inline bool sdm_set_compare(const struct sdm_idset *set1, const struct sdm_idset *set2)
{
	return !sdm_set_equal(set1, set2);
}
bool sdm_set_intersects(const struct sdm_idset *set1, const struct sdm_idset *set2);
bool sdm_set_intersects_range(const struct sdm_idset *set, sdm_id first, sdm_id last);
size_t sdm_set_count_range(const struct sdm_idset *set, sdm_id first, sdm_id last);

/*
 * Ordered search, the basis of iteration. sdm_set_find_next() stores in
 * *ret_id the smallest id >= from and returns true, or returns false when
 * there is none. sdm_set_find_range() does the same for the maximal run
 * of consecutive ids starting there: [*ret_first, *ret_last].
 */
bool sdm_set_find_next(const struct sdm_idset *set, sdm_id from, sdm_id *ret_id);
bool sdm_set_find_range(const struct sdm_idset *set, sdm_id from,
			sdm_id *ret_first, sdm_id *ret_last);

/* for (each id in set, ascending); do not modify the set inside. */
#define sdm_set_for_each(id, set)					\
	for (bool __sdm_more = sdm_set_find_next((set), 0, &(id));	\
	     __sdm_more;						\
	     __sdm_more = (id) < SDM_SET_MAX_ID &&			\
			  sdm_set_find_next((set), (id) + 1, &(id)))

/* for (each maximal range [first, last] in set, ascending). */
#define sdm_set_for_each_range(first, last, set)			\
	for (bool __sdm_more = sdm_set_find_range((set), 0, &(first), &(last)); \
	     __sdm_more;						\
	     __sdm_more = (last) < SDM_SET_MAX_ID &&			\
			  sdm_set_find_range((set), (last) + 1, &(first), &(last)))

/*
 * The iterator, with its state kept in the set: sdm_set_first()
 * starts it and returns the first id, sdm_set_next() the following one;
 * sdm_set_done() is true once the iterator has passed the last id (an
 * empty set is done at once). Changing the set restarts nothing: the
 * iterator simply continues from the last id it returned.
 */
sdm_id sdm_set_first(struct sdm_idset *set);
sdm_id sdm_set_next(struct sdm_idset *set);
bool sdm_set_done(const struct sdm_idset *set);

/*
 * Serialization (wire form). sdm_set_serialized_length() is exact.
 * sdm_set_serialize() writes into buf and returns the byte count, or
 * -ENOSPC if size is too small. sdm_set_deserialize() decodes one set
 * from the start of buf and returns the bytes consumed (the input may
 * continue after it), -EBADMSG for malformed input (it never reads past
 * buf + len) or -ENOMEM; on failure *set is unchanged.
 */
size_t sdm_set_serialized_length(const struct sdm_idset *set);
ssize_t sdm_set_serialize(const struct sdm_idset *set, void *buf, size_t size);
ssize_t sdm_set_deserialize(struct sdm_idset *set, const void *buf, size_t len);

/*
 * Display form "0-3,5,7-1023". sdm_set_format() works like snprintf: it
 * writes at most size bytes including the NUL and returns the length the
 * full string has (a truncated result holds whole items only).
 * sdm_set_to_string() returns a malloc'd string (NULL on ENOMEM).
 *
 * sdm_set_parse() reads that form (spaces around numbers and separators
 * allowed, ranges in any order, overlaps merged) and adds the ids to *set.
 * Parsing stops at the first character that cannot continue the list;
 * *ret_end (if not NULL) then points at it. With ret_end == NULL anything
 * left over is an error. Returns 0, -EINVAL (syntax, or a-b with a > b),
 * -ERANGE (id above SDM_SET_MAX_ID) or -ENOMEM; on error *set is unchanged.
 */
int sdm_set_format(const struct sdm_idset *set, char *buf, size_t size);
char *sdm_set_to_string(const struct sdm_idset *set);
int sdm_set_parse(struct sdm_idset *set, const char *str, const char **ret_end);

#endif /* SDM_IDSET_H */
