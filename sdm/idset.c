// SPDX-License-Identifier: GPL-2.0
/*
 * Id sets: a sorted array of chunks of 64Ki ids, each chunk either a run
 * list or a bitmap (see sdm/include/sdm/idset.h for the contract and
 * Documentation/sdm.md, "Id sets", for the serialized form).
 *
 * Invariants:
 *  - chunks are sorted by key and never empty (card >= 1);
 *  - a run list is sorted, its runs disjoint and not adjacent, so equal
 *    run lists mean equal contents;
 *  - set->size is the sum of the chunk cardinalities.
 * A chunk may be a bitmap or a run list for the same contents (the form
 * switches with hysteresis), so comparisons never rely on the form.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdm/idset.h"

#define CHUNK_BITS	16
#define CHUNK_IDS	(1u << CHUNK_BITS)
#define CHUNK_MASK	(CHUNK_IDS - 1)
#define CHUNK_WORDS	(CHUNK_IDS / 64)
#define CHUNK_BYTES	(CHUNK_WORDS * sizeof(uint64_t))
#define MAX_CHUNKS	((SDM_SET_MAX_ID >> CHUNK_BITS) + 1)

struct run {
	uint16_t first, last;
};

/*
 * A run costs 4 bytes, a bitmap 8 KiB: a run list turns into a bitmap when
 * it would be bigger, and a bitmap turns back (in bulk operations only)
 * once half that many runs would do, so single adds and removes around the
 * threshold cannot make a chunk flip back and forth.
 */
#define RUNS_MAX	(CHUNK_BYTES / sizeof(struct run))
#define RUNS_LOW	(RUNS_MAX / 2)

enum chunk_kind {
	CHUNK_RUNS,
	CHUNK_BITMAP,
};

struct chunk {
	uint16_t key;		/* ids key << CHUNK_BITS .. + CHUNK_MASK */
	uint8_t kind;		/* enum chunk_kind */
	uint32_t card;		/* 1..CHUNK_IDS */
	uint32_t nruns, cap;	/* CHUNK_RUNS only */
	union {
		struct run *runs;
		uint64_t *bits;
	};
};

struct sdm_idset {
	struct chunk *chunks;
	uint32_t n, cap;
	size_t size;
	sdm_id iter;		/* the first/next/done iterator of idset.h */
	bool iter_done;
};

static inline uint16_t key_of(uint32_t id) { return id >> CHUNK_BITS; }
static inline uint32_t low_of(uint32_t id) { return id & CHUNK_MASK; }
static inline uint32_t base_of(const struct chunk *c) { return (uint32_t)c->key << CHUNK_BITS; }
static inline uint32_t run_len(const struct run *r) { return (uint32_t)r->last - r->first + 1; }
static inline uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* ---- bitmaps of CHUNK_IDS bits ---------------------------------------- */

/*
 * The whole-bitmap loops are popcount-bound. The baseline x86-64 target has
 * no POPCNT instruction (a libgcc call instead), so with GCC they are built
 * twice and the loader picks the POPCNT one where the CPU has it.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define POPCNT_CLONES	__attribute__((target_clones("popcnt", "default")))
#else
#define POPCNT_CLONES
#endif

static inline uint64_t mask_from(uint32_t bit) { return ~0ULL << (bit & 63); }
static inline uint64_t mask_to(uint32_t bit) { return ~0ULL >> (63 - (bit & 63)); }

static void bits_set_range(uint64_t *w, uint32_t lo, uint32_t hi)
{
	uint32_t a = lo >> 6, b = hi >> 6;

	if (a == b) {
		w[a] |= mask_from(lo) & mask_to(hi);
		return;
	}
	w[a] |= mask_from(lo);
	for (uint32_t i = a + 1; i < b; i++)
		w[i] = ~0ULL;
	w[b] |= mask_to(hi);
}

static void bits_clear_range(uint64_t *w, uint32_t lo, uint32_t hi)
{
	uint32_t a = lo >> 6, b = hi >> 6;

	if (a == b) {
		w[a] &= ~(mask_from(lo) & mask_to(hi));
		return;
	}
	w[a] &= ~mask_from(lo);
	memset(&w[a + 1], 0, (b - a - 1) * sizeof(*w));
	w[b] &= ~mask_to(hi);
}

POPCNT_CLONES
static uint32_t bits_count_range(const uint64_t *w, uint32_t lo, uint32_t hi)
{
	uint32_t a = lo >> 6, b = hi >> 6, n;

	if (a == b)
		return __builtin_popcountll(w[a] & mask_from(lo) & mask_to(hi));
	n = __builtin_popcountll(w[a] & mask_from(lo));
	for (uint32_t i = a + 1; i < b; i++)
		n += __builtin_popcountll(w[i]);
	return n + __builtin_popcountll(w[b] & mask_to(hi));
}

POPCNT_CLONES
static uint32_t bits_card(const uint64_t *w)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < CHUNK_WORDS; i++)
		n += __builtin_popcountll(w[i]);
	return n;
}

/* Number of maximal runs of set bits. */
POPCNT_CLONES
static uint32_t bits_count_runs(const uint64_t *w)
{
	uint64_t carry = 0;
	uint32_t n = 0;

	for (uint32_t i = 0; i < CHUNK_WORDS; i++) {
		n += __builtin_popcountll(w[i] & ~((w[i] << 1) | carry));
		carry = w[i] >> 63;
	}
	return n;
}

/* First set (or, with invert, clear) bit >= from; CHUNK_IDS if none. */
static uint32_t bits_next(const uint64_t *w, uint32_t from, bool invert)
{
	uint64_t flip = invert ? ~0ULL : 0;
	uint32_t i = from >> 6;
	uint64_t x;

	if (from >= CHUNK_IDS)
		return CHUNK_IDS;
	x = (w[i] ^ flip) & mask_from(from);
	while (!x) {
		if (++i == CHUNK_WORDS)
			return CHUNK_IDS;
		x = w[i] ^ flip;
	}
	return i * 64 + __builtin_ctzll(x);
}

/* ---- run lists ----------------------------------------------------------- */

/* Index of the first run whose last >= x (nruns if none). */
static uint32_t runs_lower(const struct chunk *c, uint32_t x)
{
	uint32_t lo = 0, hi = c->nruns;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->runs[mid].last < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index of the first run whose first > x (nruns if none). */
static uint32_t runs_upper(const struct chunk *c, uint32_t x)
{
	uint32_t lo = 0, hi = c->nruns;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->runs[mid].first <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int runs_reserve(struct chunk *c, uint32_t need)
{
	struct run *r;
	uint32_t cap;

	if (need <= c->cap)
		return 0;
	cap = c->cap ? c->cap : 4;
	while (cap < need)
		cap *= 2;
	r = realloc(c->runs, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	c->runs = r;
	c->cap = cap;
	return 0;
}

/* Replace runs [i, j) with the n runs of ins. */
static int runs_splice(struct chunk *c, uint32_t i, uint32_t j,
		       const struct run *ins, uint32_t n)
{
	uint32_t nruns = c->nruns - (j - i) + n;

	if (runs_reserve(c, nruns))
		return -ENOMEM;
	memmove(&c->runs[i + n], &c->runs[j], (c->nruns - j) * sizeof(struct run));
	memcpy(&c->runs[i], ins, n * sizeof(*ins));
	c->nruns = nruns;
	return 0;
}

static int runs_add_range(struct chunk *c, uint32_t lo, uint32_t hi)
{
	/* Runs [i, j) overlap or touch [lo, hi] and merge with it. */
	uint32_t i = runs_lower(c, lo ? lo - 1 : 0);
	uint32_t j = runs_upper(c, hi + 1);
	struct run merged = { lo, hi };
	uint32_t old = 0;

	if (i < j) {
		merged.first = min_u32(lo, c->runs[i].first);
		merged.last = max_u32(hi, c->runs[j - 1].last);
		for (uint32_t k = i; k < j; k++)
			old += run_len(&c->runs[k]);
	}
	if (runs_splice(c, i, j, &merged, 1))
		return -ENOMEM;
	c->card += run_len(&merged) - old;
	return 0;
}

static int runs_remove_range(struct chunk *c, uint32_t lo, uint32_t hi)
{
	/* Runs [i, j) overlap [lo, hi]. */
	uint32_t i = runs_lower(c, lo), j = runs_upper(c, hi);
	struct run keep[2];
	uint32_t n = 0, old = 0, kept = 0;

	if (i >= j)
		return 0;
	if (c->runs[i].first < lo)
		keep[n++] = (struct run){ c->runs[i].first, lo - 1 };
	if (c->runs[j - 1].last > hi)
		keep[n++] = (struct run){ hi + 1, c->runs[j - 1].last };
	for (uint32_t k = i; k < j; k++)
		old += run_len(&c->runs[k]);
	for (uint32_t k = 0; k < n; k++)
		kept += run_len(&keep[k]);
	if (runs_splice(c, i, j, keep, n))
		return -ENOMEM;
	c->card -= old - kept;
	return 0;
}

/* ---- chunks ------------------------------------------------------------- */

static void chunk_release(struct chunk *c)
{
	if (c->kind == CHUNK_RUNS)
		free(c->runs);
	else
		free(c->bits);
	c->runs = NULL;
}

static int chunk_to_bitmap(struct chunk *c)
{
	uint64_t *w;

	if (c->kind == CHUNK_BITMAP)
		return 0;
	w = calloc(CHUNK_WORDS, sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->nruns; i++)
		bits_set_range(w, c->runs[i].first, c->runs[i].last);
	free(c->runs);
	c->kind = CHUNK_BITMAP;
	c->bits = w;
	c->nruns = c->cap = 0;
	return 0;
}

/* cap: room for at least as many runs as the bitmap holds. */
static int chunk_to_runs(struct chunk *c, uint32_t cap)
{
	struct run *r = malloc(max_u32(cap, 1) * sizeof(*r));
	uint32_t pos = 0, n = 0;

	if (!r)
		return -ENOMEM;
	while ((pos = bits_next(c->bits, pos, false)) < CHUNK_IDS) {
		uint32_t end = bits_next(c->bits, pos, true);

		r[n++] = (struct run){ pos, end - 1 };
		pos = end;
	}
	free(c->bits);
	c->kind = CHUNK_RUNS;
	c->runs = r;
	c->nruns = n;
	c->cap = max_u32(cap, 1);
	return 0;
}

/*
 * Pick the cheaper form after a bulk change. Failing to convert leaves a
 * valid (if larger) chunk, except that a too long run list must become a
 * bitmap to respect the memory bound.
 */
static int chunk_normalize(struct chunk *c)
{
	if (c->kind == CHUNK_RUNS) {
		if (c->nruns > RUNS_MAX)
			return chunk_to_bitmap(c);
		return 0;
	}
	if (c->card) {
		uint32_t nruns = bits_count_runs(c->bits);

		if (nruns <= RUNS_LOW)
			chunk_to_runs(c, nruns);
	}
	return 0;
}

static int chunk_copy(struct chunk *dst, const struct chunk *src)
{
	*dst = *src;
	if (src->kind == CHUNK_BITMAP) {
		dst->bits = malloc(CHUNK_BYTES);
		if (!dst->bits)
			return -ENOMEM;
		memcpy(dst->bits, src->bits, CHUNK_BYTES);
		return 0;
	}
	dst->cap = src->nruns;
	dst->runs = malloc(max_u32(src->nruns, 1) * sizeof(struct run));
	if (!dst->runs)
		return -ENOMEM;
	memcpy(dst->runs, src->runs, src->nruns * sizeof(struct run));
	return 0;
}

static bool chunk_contains(const struct chunk *c, uint32_t low)
{
	uint32_t i;

	if (c->kind == CHUNK_BITMAP)
		return c->bits[low >> 6] >> (low & 63) & 1;
	i = runs_lower(c, low);
	return i < c->nruns && c->runs[i].first <= low;
}

/* Number of ids of c in [lo, hi] (offsets within the chunk). */
static uint32_t chunk_count_range(const struct chunk *c, uint32_t lo, uint32_t hi)
{
	uint32_t n = 0;

	if (c->kind == CHUNK_BITMAP)
		return bits_count_range(c->bits, lo, hi);
	for (uint32_t i = runs_lower(c, lo); i < c->nruns && c->runs[i].first <= hi; i++)
		n += min_u32(hi, c->runs[i].last) - max_u32(lo, c->runs[i].first) + 1;
	return n;
}

/* |a ∩ b| without allocating. */
POPCNT_CLONES
static uint32_t chunk_and_card(const struct chunk *a, const struct chunk *b)
{
	uint32_t n = 0;

	if (a->kind == CHUNK_BITMAP && b->kind == CHUNK_BITMAP) {
		for (uint32_t i = 0; i < CHUNK_WORDS; i++)
			n += __builtin_popcountll(a->bits[i] & b->bits[i]);
		return n;
	}
	if (a->kind == CHUNK_BITMAP) {
		const struct chunk *t = a;

		a = b;
		b = t;
	}
	/* a is a run list now. */
	if (b->kind == CHUNK_BITMAP) {
		for (uint32_t i = 0; i < a->nruns; i++)
			n += bits_count_range(b->bits, a->runs[i].first, a->runs[i].last);
		return n;
	}
	for (uint32_t i = 0, j = 0; i < a->nruns && j < b->nruns;) {
		const struct run *x = &a->runs[i], *y = &b->runs[j];
		uint32_t lo = max_u32(x->first, y->first), hi = min_u32(x->last, y->last);

		if (lo <= hi)
			n += hi - lo + 1;
		if (x->last < y->last)
			i++;
		else
			j++;
	}
	return n;
}

enum set_op {
	OP_UNION,
	OP_INTERSECT,
	OP_DIFF,
};

/* Append [first, last] to out, merging with the previous run if they touch. */
static void runs_push(struct run *out, uint32_t *n, uint32_t first, uint32_t last)
{
	if (*n && (uint32_t)out[*n - 1].last + 1 >= first) {
		out[*n - 1].last = max_u32(out[*n - 1].last, last);
		return;
	}
	out[(*n)++] = (struct run){ first, last };
}

/* a = a op b for two run lists, by one merge pass. */
static int runs_op(struct chunk *a, const struct chunk *b, enum set_op op)
{
	uint32_t cap = a->nruns + b->nruns + 1, i = 0, j = 0, n = 0, card = 0;
	struct run *out = malloc(cap * sizeof(*out));

	if (!out)
		return -ENOMEM;
	switch (op) {
	case OP_UNION:
		while (i < a->nruns || j < b->nruns) {
			const struct run *r;

			if (j == b->nruns || (i < a->nruns && a->runs[i].first <= b->runs[j].first))
				r = &a->runs[i++];
			else
				r = &b->runs[j++];
			runs_push(out, &n, r->first, r->last);
		}
		break;
	case OP_INTERSECT:
		while (i < a->nruns && j < b->nruns) {
			const struct run *x = &a->runs[i], *y = &b->runs[j];
			uint32_t lo = max_u32(x->first, y->first);
			uint32_t hi = min_u32(x->last, y->last);

			if (lo <= hi)
				out[n++] = (struct run){ lo, hi };
			if (x->last < y->last)
				i++;
			else
				j++;
		}
		break;
	case OP_DIFF:
		for (; i < a->nruns; i++) {
			uint32_t lo = a->runs[i].first, hi = a->runs[i].last;

			while (j < b->nruns && b->runs[j].last < lo)
				j++;
			/* Cut every b run that overlaps [lo, hi] out of it. */
			for (uint32_t k = j; k < b->nruns && b->runs[k].first <= hi; k++) {
				if (b->runs[k].first > lo)
					out[n++] = (struct run){ lo, b->runs[k].first - 1 };
				lo = (uint32_t)b->runs[k].last + 1;
				if (lo > hi)
					break;
			}
			if (lo <= hi)
				out[n++] = (struct run){ lo, hi };
		}
		break;
	}
	for (uint32_t k = 0; k < n; k++)
		card += run_len(&out[k]);
	free(a->runs);
	a->runs = out;
	a->nruns = n;
	a->cap = cap;
	a->card = card;
	return 0;
}

/* a = a op b where either is a bitmap: a becomes a bitmap, then normalizes. */
static int bits_op(struct chunk *a, const struct chunk *b, enum set_op op)
{
	uint64_t *w;
	uint32_t prev = 0;

	if (chunk_to_bitmap(a))
		return -ENOMEM;
	w = a->bits;
	if (b->kind == CHUNK_BITMAP) {
		for (uint32_t i = 0; i < CHUNK_WORDS; i++) {
			if (op == OP_UNION)
				w[i] |= b->bits[i];
			else if (op == OP_INTERSECT)
				w[i] &= b->bits[i];
			else
				w[i] &= ~b->bits[i];
		}
	} else {
		for (uint32_t i = 0; i < b->nruns; i++) {
			const struct run *r = &b->runs[i];

			if (op == OP_UNION)
				bits_set_range(w, r->first, r->last);
			else if (op == OP_DIFF)
				bits_clear_range(w, r->first, r->last);
			else if (r->first > prev)	/* intersect: clear the gaps */
				bits_clear_range(w, prev, r->first - 1);
			prev = (uint32_t)r->last + 1;
		}
		if (op == OP_INTERSECT && prev < CHUNK_IDS)
			bits_clear_range(w, prev, CHUNK_MASK);
	}
	a->card = bits_card(w);
	return chunk_normalize(a);
}

static int chunk_op(struct chunk *a, const struct chunk *b, enum set_op op)
{
	int err;

	if (a->kind == CHUNK_RUNS && b->kind == CHUNK_RUNS) {
		err = runs_op(a, b, op);
		return err ? err : chunk_normalize(a);
	}
	return bits_op(a, b, op);
}

/* ---- the chunk array ------------------------------------------------------ */

/* Index of the first chunk with key >= key. */
static uint32_t chunk_lower(const struct sdm_idset *s, uint32_t key)
{
	uint32_t lo = 0, hi = s->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->chunks[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct chunk *chunk_find(const struct sdm_idset *s, uint32_t key)
{
	uint32_t i = chunk_lower(s, key);

	return i < s->n && s->chunks[i].key == key ? &s->chunks[i] : NULL;
}

static int chunks_reserve(struct sdm_idset *s, uint32_t need)
{
	struct chunk *c;
	uint32_t cap;

	if (need <= s->cap)
		return 0;
	cap = s->cap ? s->cap : 2;
	while (cap < need)
		cap *= 2;
	c = realloc(s->chunks, cap * sizeof(*c));
	if (!c)
		return -ENOMEM;
	s->chunks = c;
	s->cap = cap;
	return 0;
}

/* Insert an empty run-list chunk (card 0: the caller fills it) at index i. */
static struct chunk *chunk_insert(struct sdm_idset *s, uint32_t i, uint16_t key)
{
	if (chunks_reserve(s, s->n + 1))
		return NULL;
	memmove(&s->chunks[i + 1], &s->chunks[i], (s->n - i) * sizeof(struct chunk));
	s->n++;
	s->chunks[i] = (struct chunk){ .key = key, .kind = CHUNK_RUNS };
	return &s->chunks[i];
}

static void chunk_remove(struct sdm_idset *s, uint32_t i)
{
	chunk_release(&s->chunks[i]);
	memmove(&s->chunks[i], &s->chunks[i + 1], (s->n - i - 1) * sizeof(struct chunk));
	s->n--;
}

static void set_recount(struct sdm_idset *s)
{
	s->size = 0;
	for (uint32_t i = 0; i < s->n; i++)
		s->size += s->chunks[i].card;
}

/* ---- public API ------------------------------------------------------------ */

struct sdm_idset *sdm_set_new(void)
{
	return calloc(1, sizeof(struct sdm_idset));
}

void sdm_set_clear(struct sdm_idset *set)
{
	for (uint32_t i = 0; i < set->n; i++)
		chunk_release(&set->chunks[i]);
	free(set->chunks);
	set->chunks = NULL;
	set->n = set->cap = 0;
	set->size = 0;
}

void sdm_set_free(struct sdm_idset *set)
{
	if (!set)
		return;
	sdm_set_clear(set);
	free(set);
}

int sdm_set_assign(struct sdm_idset *dst, const struct sdm_idset *src)
{
	struct sdm_idset tmp = { 0 };

	if (dst == src)
		return 0;
	if (chunks_reserve(&tmp, src->n))
		return -ENOMEM;
	for (; tmp.n < src->n; tmp.n++) {
		if (chunk_copy(&tmp.chunks[tmp.n], &src->chunks[tmp.n])) {
			sdm_set_clear(&tmp);
			return -ENOMEM;
		}
	}
	tmp.size = src->size;
	sdm_set_clear(dst);
	dst->chunks = tmp.chunks;
	dst->n = tmp.n;
	dst->cap = tmp.cap;
	dst->size = tmp.size;
	return 0;
}

struct sdm_idset *sdm_set_copy(const struct sdm_idset *set)
{
	struct sdm_idset *copy = sdm_set_new();

	if (copy && sdm_set_assign(copy, set)) {
		sdm_set_free(copy);
		return NULL;
	}
	return copy;
}

size_t sdm_set_size(const struct sdm_idset *set)
{
	return set->size;
}

bool sdm_set_is_empty(const struct sdm_idset *set)
{
	return set->size == 0;
}

bool sdm_set_contains(const struct sdm_idset *set, sdm_id id)
{
	const struct chunk *c;

	if (id > SDM_SET_MAX_ID)
		return false;
	c = chunk_find(set, key_of(id));
	return c && chunk_contains(c, low_of(id));
}

int sdm_set_add_range(struct sdm_idset *set, sdm_id first, sdm_id last)
{
	int err = 0;

	if (first > last)
		return -EINVAL;
	if (last > SDM_SET_MAX_ID)
		return -ERANGE;
	for (uint32_t key = key_of(first); key <= key_of(last); key++) {
		uint32_t i = chunk_lower(set, key);
		uint32_t lo = key == key_of(first) ? low_of(first) : 0;
		uint32_t hi = key == key_of(last) ? low_of(last) : CHUNK_MASK;
		struct chunk *c;

		if (i < set->n && set->chunks[i].key == key)
			c = &set->chunks[i];
		else if (!(c = chunk_insert(set, i, key)))
			return -ENOMEM;
		set->size -= c->card;
		if (c->kind == CHUNK_BITMAP) {
			c->card += (hi - lo + 1) - bits_count_range(c->bits, lo, hi);
			bits_set_range(c->bits, lo, hi);
			if (c->card == CHUNK_IDS || hi - lo >= RUNS_MAX)
				chunk_normalize(c);
		} else {
			err = runs_add_range(c, lo, hi);
			if (!err)
				err = chunk_normalize(c);
		}
		set->size += c->card;
		if (!c->card)		/* a new chunk whose fill failed */
			chunk_remove(set, i);
		if (err)
			return err;
	}
	return 0;
}

int sdm_set_remove_range(struct sdm_idset *set, sdm_id first, sdm_id last)
{
	uint32_t i;
	int err = 0;

	if (first > last)
		return -EINVAL;
	if (first > SDM_SET_MAX_ID)
		return 0;
	last = min_u32(last, SDM_SET_MAX_ID);
	i = chunk_lower(set, key_of(first));
	while (i < set->n && set->chunks[i].key <= key_of(last)) {
		struct chunk *c = &set->chunks[i];
		uint32_t lo = c->key == key_of(first) ? low_of(first) : 0;
		uint32_t hi = c->key == key_of(last) ? low_of(last) : CHUNK_MASK;

		set->size -= c->card;
		if (c->kind == CHUNK_BITMAP) {
			c->card -= bits_count_range(c->bits, lo, hi);
			bits_clear_range(c->bits, lo, hi);
			/* Few ids left: at most that many runs, well below RUNS_MAX. */
			if (c->card && c->card <= RUNS_LOW)
				chunk_to_runs(c, c->card);
		} else {
			err = runs_remove_range(c, lo, hi);
			if (!err)
				err = chunk_normalize(c);
		}
		set->size += c->card;
		if (err)
			return err;
		if (c->card)
			i++;
		else
			chunk_remove(set, i);
	}
	return 0;
}

int sdm_set_add_element(struct sdm_idset *set, sdm_id id)
{
	return sdm_set_add_range(set, id, id);
}

int sdm_set_remove_element(struct sdm_idset *set, sdm_id id)
{
	return sdm_set_remove_range(set, id, id);
}

int sdm_set_add_all(struct sdm_idset *set, sdm_id id)
{
	return sdm_set_add_range(set, 0, id);
}

int sdm_set_intersect_range(struct sdm_idset *set, sdm_id first, sdm_id last)
{
	int err = 0;

	if (first > last) {
		sdm_set_clear(set);
		return 0;
	}
	if (last < SDM_SET_MAX_ID)
		err = sdm_set_remove_range(set, last + 1, SDM_SET_MAX_ID);
	if (!err && first > 0)
		err = sdm_set_remove_range(set, 0, first - 1);
	return err;
}

int sdm_set_union(struct sdm_idset *set1, const struct sdm_idset *set2)
{
	uint32_t i = 0;
	int err = 0;

	if (set1 == set2)
		return 0;
	/* Reserve up front so the loop below never reallocates. */
	if (chunks_reserve(set1, set1->n + set2->n))
		return -ENOMEM;
	for (uint32_t j = 0; j < set2->n && !err; j++) {
		const struct chunk *b = &set2->chunks[j];

		while (i < set1->n && set1->chunks[i].key < b->key)
			i++;
		if (i < set1->n && set1->chunks[i].key == b->key) {
			err = chunk_op(&set1->chunks[i], b, OP_UNION);
		} else {
			memmove(&set1->chunks[i + 1], &set1->chunks[i],
				(set1->n - i) * sizeof(struct chunk));
			err = chunk_copy(&set1->chunks[i], b);
			if (err)	/* close the gap again */
				memmove(&set1->chunks[i], &set1->chunks[i + 1],
					(set1->n - i) * sizeof(struct chunk));
			else
				set1->n++;
		}
		i++;
	}
	set_recount(set1);
	return err;
}

/* Intersect or diff: both only shrink set1, so compact it in place. */
static int set_shrink_op(struct sdm_idset *set1, const struct sdm_idset *set2,
			 enum set_op op)
{
	uint32_t out = 0, j = 0;
	int err = 0;

	for (uint32_t i = 0; i < set1->n; i++) {
		struct chunk *a = &set1->chunks[i];

		while (j < set2->n && set2->chunks[j].key < a->key)
			j++;
		if (!err && j < set2->n && set2->chunks[j].key == a->key)
			err = chunk_op(a, &set2->chunks[j], op);
		else if (!err && op == OP_INTERSECT)
			a->card = 0;	/* not in set2 */
		if (a->card)
			set1->chunks[out++] = *a;
		else
			chunk_release(a);
	}
	set1->n = out;
	set_recount(set1);
	return err;
}

int sdm_set_intersect(struct sdm_idset *set1, const struct sdm_idset *set2)
{
	if (set1 == set2)
		return 0;
	return set_shrink_op(set1, set2, OP_INTERSECT);
}

int sdm_set_diff(struct sdm_idset *set1, const struct sdm_idset *set2)
{
	if (set1 == set2) {
		sdm_set_clear(set1);
		return 0;
	}
	return set_shrink_op(set1, set2, OP_DIFF);
}

bool sdm_set_is_subset(const struct sdm_idset *set1, const struct sdm_idset *set2)
{
	uint32_t j = 0;

	if (set1->size > set2->size)
		return false;
	for (uint32_t i = 0; i < set1->n; i++) {
		const struct chunk *a = &set1->chunks[i];

		while (j < set2->n && set2->chunks[j].key < a->key)
			j++;
		if (j == set2->n || set2->chunks[j].key != a->key ||
		    chunk_and_card(a, &set2->chunks[j]) != a->card)
			return false;
	}
	return true;
}

bool sdm_set_equal(const struct sdm_idset *set1, const struct sdm_idset *set2)
{
	if (set1->size != set2->size || set1->n != set2->n)
		return false;
	for (uint32_t i = 0; i < set1->n; i++) {
		const struct chunk *a = &set1->chunks[i], *b = &set2->chunks[i];

		if (a->key != b->key || a->card != b->card)
			return false;
		if (a->kind == CHUNK_RUNS && b->kind == CHUNK_RUNS) {
			if (a->nruns != b->nruns ||
			    memcmp(a->runs, b->runs, a->nruns * sizeof(struct run)))
				return false;
		} else if (chunk_and_card(a, b) != a->card) {
			return false;
		}
	}
	return true;
}

bool sdm_set_intersects(const struct sdm_idset *set1, const struct sdm_idset *set2)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < set1->n; i++) {
		const struct chunk *a = &set1->chunks[i];

		while (j < set2->n && set2->chunks[j].key < a->key)
			j++;
		if (j < set2->n && set2->chunks[j].key == a->key &&
		    chunk_and_card(a, &set2->chunks[j]))
			return true;
	}
	return false;
}

size_t sdm_set_count_range(const struct sdm_idset *set, sdm_id first, sdm_id last)
{
	size_t n = 0;

	if (first > last || first > SDM_SET_MAX_ID)
		return 0;
	last = min_u32(last, SDM_SET_MAX_ID);
	for (uint32_t i = chunk_lower(set, key_of(first));
	     i < set->n && set->chunks[i].key <= key_of(last); i++) {
		const struct chunk *c = &set->chunks[i];
		uint32_t lo = c->key == key_of(first) ? low_of(first) : 0;
		uint32_t hi = c->key == key_of(last) ? low_of(last) : CHUNK_MASK;

		n += lo == 0 && hi == CHUNK_MASK ? c->card : chunk_count_range(c, lo, hi);
	}
	return n;
}

bool sdm_set_intersects_range(const struct sdm_idset *set, sdm_id first, sdm_id last)
{
	sdm_id id;

	return first <= last && sdm_set_find_next(set, first, &id) && id <= last;
}

bool sdm_set_find_next(const struct sdm_idset *set, sdm_id from, sdm_id *ret_id)
{
	if (from > SDM_SET_MAX_ID)
		return false;
	for (uint32_t i = chunk_lower(set, key_of(from)); i < set->n; i++) {
		const struct chunk *c = &set->chunks[i];
		uint32_t low = c->key == key_of(from) ? low_of(from) : 0;

		if (c->kind == CHUNK_BITMAP) {
			low = bits_next(c->bits, low, false);
			if (low < CHUNK_IDS) {
				*ret_id = base_of(c) + low;
				return true;
			}
		} else {
			uint32_t r = runs_lower(c, low);

			if (r < c->nruns) {
				*ret_id = base_of(c) + max_u32(low, c->runs[r].first);
				return true;
			}
		}
	}
	return false;
}

/* Last id of the run of consecutive ids of chunk c that holds offset low. */
static uint32_t chunk_run_end(const struct chunk *c, uint32_t low)
{
	if (c->kind == CHUNK_BITMAP)
		return bits_next(c->bits, low, true) - 1;
	return c->runs[runs_lower(c, low)].last;
}

bool sdm_set_find_range(const struct sdm_idset *set, sdm_id from,
			sdm_id *ret_first, sdm_id *ret_last)
{
	sdm_id first, last;
	uint32_t i;

	if (!sdm_set_find_next(set, from, &first))
		return false;
	i = chunk_lower(set, key_of(first));
	last = base_of(&set->chunks[i]) + chunk_run_end(&set->chunks[i], low_of(first));
	/* A run that fills its chunk to the end may go on in the next one. */
	while (low_of(last) == CHUNK_MASK && ++i < set->n &&
	       set->chunks[i].key == key_of(last) + 1 &&
	       chunk_contains(&set->chunks[i], 0))
		last = base_of(&set->chunks[i]) + chunk_run_end(&set->chunks[i], 0);
	*ret_first = first;
	*ret_last = last;
	return true;
}

sdm_id sdm_set_first(struct sdm_idset *set)
{
	set->iter_done = !sdm_set_find_next(set, 0, &set->iter);
	return set->iter;
}

sdm_id sdm_set_next(struct sdm_idset *set)
{
	if (!set->iter_done)
		set->iter_done = set->iter >= SDM_SET_MAX_ID ||
				 !sdm_set_find_next(set, set->iter + 1, &set->iter);
	return set->iter;
}

bool sdm_set_done(const struct sdm_idset *set)
{
	return set->iter_done;
}

/* ---- serialization ----------------------------------------------------------
 *
 *   set    := record* end
 *   record := head:varint body
 *   head   := gap << 2 | kind       gap = start - cursor; cursor starts at 0
 *   kind 0 (run):    len:varint        ids start .. start + len; cursor = start + len + 1
 *   kind 1 (bitmap): nw:varint, (nw + 1) little-endian u64 words; start is a
 *                    multiple of 64, the words stay inside start's chunk;
 *                    bit b of word k is id start + 64k + b; cursor moves past them
 *   kind 2 (end):    gap must be 0
 * Varints are LEB128, at most 5 bytes, minimal (no trailing 0x80 0x00).
 */

enum rec_kind {
	REC_RUN,
	REC_BITMAP,
	REC_END,
};

struct enc {
	uint8_t *buf;		/* NULL: only count */
	size_t size, len;
	uint32_t cursor;
	bool pending;		/* a run waiting to be merged or written */
	uint32_t first, last;
};

static void enc_bytes(struct enc *e, const void *p, size_t n)
{
	if (e->buf && e->len + n <= e->size)
		memcpy(e->buf + e->len, p, n);
	e->len += n;
}

static void enc_varint(struct enc *e, uint32_t v)
{
	uint8_t b[5];
	size_t n = 0;

	do {
		b[n] = v & 0x7f;
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	enc_bytes(e, b, n);
}

static void enc_flush(struct enc *e)
{
	if (!e->pending)
		return;
	enc_varint(e, (e->first - e->cursor) << 2 | REC_RUN);
	enc_varint(e, e->last - e->first);
	e->cursor = e->last + 1;
	e->pending = false;
}

static void enc_run(struct enc *e, uint32_t first, uint32_t last)
{
	if (e->pending && e->last + 1 == first) {
		e->last = last;
		return;
	}
	enc_flush(e);
	e->pending = true;
	e->first = first;
	e->last = last;
}

static void enc_bitmap_chunk(struct enc *e, const struct chunk *c)
{
	uint32_t lo = 0, hi = CHUNK_WORDS - 1, nruns = bits_count_runs(c->bits);

	while (!c->bits[lo])
		lo++;
	while (!c->bits[hi])
		hi--;
	/* Runs cost about 3 bytes each: use them when they are smaller. */
	if ((size_t)nruns * 3 < (size_t)(hi - lo + 1) * 8) {
		uint32_t pos = 0;

		while ((pos = bits_next(c->bits, pos, false)) < CHUNK_IDS) {
			uint32_t end = bits_next(c->bits, pos, true);

			enc_run(e, base_of(c) + pos, base_of(c) + end - 1);
			pos = end;
		}
		return;
	}
	enc_flush(e);
	enc_varint(e, (base_of(c) + lo * 64 - e->cursor) << 2 | REC_BITMAP);
	enc_varint(e, hi - lo);
	if (e->buf && e->len + (hi - lo + 1) * 8 <= e->size) {
		uint8_t *p = e->buf + e->len;

		for (uint32_t i = lo; i <= hi; i++, p += 8) {
			uint64_t le = htole64(c->bits[i]);

			memcpy(p, &le, 8);
		}
	}
	e->len += (hi - lo + 1) * 8;
	e->cursor = base_of(c) + (hi + 1) * 64;
}

static size_t set_encode(const struct sdm_idset *set, void *buf, size_t size)
{
	struct enc e = { .buf = buf, .size = size };

	for (uint32_t i = 0; i < set->n; i++) {
		const struct chunk *c = &set->chunks[i];

		if (c->kind == CHUNK_BITMAP) {
			enc_bitmap_chunk(&e, c);
			continue;
		}
		for (uint32_t r = 0; r < c->nruns; r++)
			enc_run(&e, base_of(c) + c->runs[r].first, base_of(c) + c->runs[r].last);
	}
	enc_flush(&e);
	enc_varint(&e, REC_END);
	return e.len;
}

size_t sdm_set_serialized_length(const struct sdm_idset *set)
{
	return set_encode(set, NULL, 0);
}

ssize_t sdm_set_serialize(const struct sdm_idset *set, void *buf, size_t size)
{
	size_t len = set_encode(set, buf, size);

	return len <= size ? (ssize_t)len : -ENOSPC;
}

struct dec {
	const uint8_t *p, *end;
};

static int dec_varint(struct dec *d, uint32_t *ret)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (d->p == d->end)
			return -EBADMSG;
		b = *d->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if ((shift && !b) || v > UINT32_MAX)	/* overlong or too big */
				return -EBADMSG;
			*ret = v;
			return 0;
		}
	}
	return -EBADMSG;
}

/* The last chunk of s if it has key, else a new one appended. */
static struct chunk *append_chunk(struct sdm_idset *s, uint16_t key)
{
	if (s->n && s->chunks[s->n - 1].key == key)
		return &s->chunks[s->n - 1];
	return chunk_insert(s, s->n, key);
}

/* Add [first, last], all above every id already in s. */
static int append_range(struct sdm_idset *s, uint32_t first, uint32_t last)
{
	while (first <= last) {
		uint32_t chunk_last = min_u32(last, first | CHUNK_MASK);
		uint32_t lo = low_of(first), hi = low_of(chunk_last);
		struct chunk *c = append_chunk(s, key_of(first));

		if (!c)
			return -ENOMEM;
		if (c->kind == CHUNK_BITMAP) {
			bits_set_range(c->bits, lo, hi);
		} else if (c->nruns && c->runs[c->nruns - 1].last + 1u == lo) {
			c->runs[c->nruns - 1].last = hi;
		} else {
			if (runs_reserve(c, c->nruns + 1))
				goto nomem;
			c->runs[c->nruns++] = (struct run){ lo, hi };
			if (c->nruns > RUNS_MAX && chunk_to_bitmap(c))
				goto nomem;
		}
		c->card += hi - lo + 1;
		s->size += hi - lo + 1;
		if (chunk_last == SDM_SET_MAX_ID)
			break;
		first = chunk_last + 1;
	}
	return 0;
nomem:
	if (!s->chunks[s->n - 1].card)
		chunk_remove(s, s->n - 1);
	return -ENOMEM;
}

/* OR nw little-endian words at id start (64-aligned, inside one chunk). */
POPCNT_CLONES
static int append_words(struct sdm_idset *s, uint32_t start, const uint8_t *p, uint32_t nw)
{
	struct chunk *c = NULL;
	uint32_t w0 = low_of(start) / 64;

	for (uint32_t i = 0; i < nw; i++, p += 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		v = le64toh(v);
		if (!v)
			continue;
		if (!c) {
			c = append_chunk(s, key_of(start));
			if (!c || chunk_to_bitmap(c))
				goto nomem;
		}
		c->bits[w0 + i] |= v;
		c->card += __builtin_popcountll(v);
		s->size += __builtin_popcountll(v);
	}
	return 0;
nomem:
	if (c && !c->card)
		chunk_remove(s, s->n - 1);
	return -ENOMEM;
}

static int set_decode(struct sdm_idset *s, struct dec *d)
{
	uint64_t cursor = 0;

	for (;;) {
		uint32_t head, arg;
		uint64_t start;
		int err;

		if (dec_varint(d, &head))
			return -EBADMSG;
		start = cursor + (head >> 2);
		switch (head & 3) {
		case REC_END:
			return head == REC_END ? 0 : -EBADMSG;
		case REC_RUN:
			if (dec_varint(d, &arg) || start + arg > SDM_SET_MAX_ID)
				return -EBADMSG;
			err = append_range(s, start, start + arg);
			cursor = start + arg + 1;
			break;
		case REC_BITMAP:
			if (dec_varint(d, &arg) || start % 64 || start > SDM_SET_MAX_ID ||
			    low_of(start) / 64 + (uint64_t)arg + 1 > CHUNK_WORDS ||
			    (size_t)(d->end - d->p) / 8 < (size_t)arg + 1)
				return -EBADMSG;
			err = append_words(s, start, d->p, arg + 1);
			d->p += ((size_t)arg + 1) * 8;
			cursor = start + ((uint64_t)arg + 1) * 64;
			break;
		default:
			return -EBADMSG;
		}
		if (err)
			return err;
	}
}

ssize_t sdm_set_deserialize(struct sdm_idset *set, const void *buf, size_t len)
{
	struct dec d = { .p = buf, .end = (const uint8_t *)buf + len };
	struct sdm_idset tmp = { 0 };
	int err;

	err = set_decode(&tmp, &d);
	if (err) {
		sdm_set_clear(&tmp);
		return err;
	}
	for (uint32_t i = 0; i < tmp.n; i++)
		chunk_normalize(&tmp.chunks[i]);
	sdm_set_clear(set);
	set->chunks = tmp.chunks;
	set->n = tmp.n;
	set->cap = tmp.cap;
	set->size = tmp.size;
	return d.p - (const uint8_t *)buf;
}

/* ---- display form ------------------------------------------------------------ */

int sdm_set_format(const struct sdm_idset *set, char *buf, size_t size)
{
	size_t len = 0;
	sdm_id first, last;

	if (size)
		buf[0] = '\0';
	sdm_set_for_each_range(first, last, set) {
		char item[32];
		int n;

		if (first == last)
			n = snprintf(item, sizeof(item), "%s%u", len ? "," : "", first);
		else
			n = snprintf(item, sizeof(item), "%s%u-%u", len ? "," : "", first, last);
		if (len + n < size)
			memcpy(buf + len, item, n + 1);
		else if (size && len < size)
			buf[len] = '\0';	/* keep what fitted, as snprintf would not */
		len += n;
	}
	return len;
}

char *sdm_set_to_string(const struct sdm_idset *set)
{
	size_t len = sdm_set_format(set, NULL, 0);
	char *s = malloc(len + 1);

	if (s)
		sdm_set_format(set, s, len + 1);
	return s;
}

static const char *skip_spaces(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* A decimal id at *p (after spaces); advances *p past it. */
static int parse_id(const char **p, sdm_id *ret)
{
	const char *s = skip_spaces(*p);
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > SDM_SET_MAX_ID)
			return -ERANGE;
	}
	*p = s;
	*ret = v;
	return 0;
}

int sdm_set_parse(struct sdm_idset *set, const char *str, const char **ret_end)
{
	struct sdm_idset tmp = { 0 };
	const char *p = str;
	int err = 0;

	if (*skip_spaces(p) >= '0' && *skip_spaces(p) <= '9') {
		for (;;) {
			sdm_id first, last;
			const char *q;

			err = parse_id(&p, &first);
			if (err)
				break;
			last = first;
			q = skip_spaces(p);
			if (*q == '-') {
				p = q + 1;
				err = parse_id(&p, &last);
				if (err)
					break;
				if (last < first) {
					err = -EINVAL;
					break;
				}
			}
			err = sdm_set_add_range(&tmp, first, last);
			if (err)
				break;
			q = skip_spaces(p);
			if (*q != ',')
				break;
			p = q + 1;
		}
	}
	if (!err && !ret_end && *skip_spaces(p))
		err = -EINVAL;
	if (!err)
		err = sdm_set_union(set, &tmp);
	sdm_set_clear(&tmp);
	if (!err && ret_end)
		*ret_end = p;
	return err;
}
