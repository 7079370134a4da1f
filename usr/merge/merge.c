// SPDX-License-Identifier: GPL-2.0
/*
 * Rank-set reply merging: identical replies share one group, looked up
 * through a hash of the text with a full compare, so a collision never
 * merges two different replies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crdbg/merge.h"
#include "sdm/idset.h"

struct group {
	char *text;
	size_t len;
	uint64_t hash;
	struct sdm_idset *ranks;
};

struct merge {
	struct group *groups;	/* in creation order */
	size_t n, cap;
	size_t *table;		/* open addressing: index + 1, 0 = empty */
	size_t tsize;		/* power of two, > 2 * n */
	struct sdm_idset *all;	/* every rank seen */
};

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (len--) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ull;
	}
	return h;
}

struct merge *merge_new(void)
{
	struct merge *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->all = sdm_set_new();
	if (!m->all) {
		free(m);
		return NULL;
	}
	return m;
}

void merge_free(struct merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->groups[i].text);
		sdm_set_free(m->groups[i].ranks);
	}
	free(m->groups);
	free(m->table);
	sdm_set_free(m->all);
	free(m);
}

static int rehash(struct merge *m)
{
	size_t tsize = m->tsize ? m->tsize * 2 : 16, i;
	size_t *table = calloc(tsize, sizeof(*table));

	if (!table)
		return -ENOMEM;
	for (i = 0; i < m->n; i++) {
		size_t h = m->groups[i].hash & (tsize - 1);

		while (table[h])
			h = (h + 1) & (tsize - 1);
		table[h] = i + 1;
	}
	free(m->table);
	m->table = table;
	m->tsize = tsize;
	return 0;
}

/* The group for text (created if new); NULL on ENOMEM. */
static struct group *find_group(struct merge *m, const char *text, size_t len)
{
	uint64_t hash = fnv1a(text, len);
	struct group *g;
	size_t h;

	if (m->tsize) {
		for (h = hash & (m->tsize - 1); m->table[h]; h = (h + 1) & (m->tsize - 1)) {
			g = &m->groups[m->table[h] - 1];
			if (g->hash == hash && g->len == len && !memcmp(g->text, text, len))
				return g;
		}
	}
	if (2 * (m->n + 1) >= m->tsize && rehash(m))
		return NULL;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 8;
		struct group *ng = realloc(m->groups, cap * sizeof(*ng));

		if (!ng)
			return NULL;
		m->groups = ng;
		m->cap = cap;
	}
	g = &m->groups[m->n];
	g->text = malloc(len + 1);
	g->ranks = sdm_set_new();
	if (!g->text || !g->ranks) {
		free(g->text);
		sdm_set_free(g->ranks);
		return NULL;
	}
	memcpy(g->text, text, len);
	g->text[len] = '\0';
	g->len = len;
	g->hash = hash;
	for (h = hash & (m->tsize - 1); m->table[h]; h = (h + 1) & (m->tsize - 1))
		;
	m->table[h] = ++m->n;
	return g;
}

static size_t reply_len(const char *reply)
{
	size_t len = strnlen(reply, MERGE_MAX_REPLY);

	while (len && reply[len - 1] == '\n')
		len--;
	return len;
}

int merge_add_set(struct merge *m, const struct sdm_idset *ranks, const char *reply)
{
	struct group *g;
	int err;

	if (sdm_set_intersects(m->all, ranks))
		return -EEXIST;
	g = find_group(m, reply, reply_len(reply));
	if (!g)
		return -ENOMEM;
	err = sdm_set_union(g->ranks, ranks);
	if (!err)
		err = sdm_set_union(m->all, ranks);
	return err;
}

int merge_add(struct merge *m, uint32_t rank, const char *reply)
{
	struct group *g;
	int err;

	if (rank > SDM_SET_MAX_ID)
		return -ERANGE;
	if (sdm_set_contains(m->all, rank))
		return -EEXIST;
	g = find_group(m, reply, reply_len(reply));
	if (!g)
		return -ENOMEM;
	err = sdm_set_add_element(g->ranks, rank);
	if (!err)
		err = sdm_set_add_element(m->all, rank);
	return err;
}

size_t merge_groups(const struct merge *m)
{
	return m->n;
}

static sdm_id lowest(const struct sdm_idset *set)
{
	sdm_id id = SDM_SET_MAX_ID + 1u;

	sdm_set_find_next(set, 0, &id);
	return id;
}

static int cmp_lowest(const void *a, const void *b)
{
	sdm_id x = lowest((*(const struct group *const *)a)->ranks);
	sdm_id y = lowest((*(const struct group *const *)b)->ranks);

	return x < y ? -1 : x > y;
}

static const struct group **sorted_groups(const struct merge *m);

int merge_print(const struct merge *m, FILE *out)
{
	const struct group **order = sorted_groups(m);
	size_t i;
	int err = 0;

	if (!order)
		return -ENOMEM;
	for (i = 0; i < m->n && !err; i++) {
		char *set = sdm_set_to_string(order[i]->ranks);
		const char *line = order[i]->text, *end = line + order[i]->len;

		if (!set) {
			err = -ENOMEM;
			break;
		}
		/* One prefix per line, also for an empty reply. */
		do {
			const char *nl = memchr(line, '\n', end - line);
			size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);

			if (fprintf(out, "[%s]: %.*s\n", set, (int)n, line) < 0)
				err = -EIO;
			line += n + 1;
		} while (line < end && !err);
		free(set);
	}
	free(order);
	return err;
}

/* Groups in print order (by lowest rank); caller frees; NULL on ENOMEM. */
static const struct group **sorted_groups(const struct merge *m)
{
	const struct group **order = malloc((m->n ? m->n : 1) * sizeof(*order));

	if (!order)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		order[i] = &m->groups[i];
	qsort(order, m->n, sizeof(*order), cmp_lowest);
	return order;
}

int merge_print_json(const struct merge *m, FILE *out, const char *type)
{
	const struct group **order = sorted_groups(m);
	int err = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < m->n && !err; i++) {
		char *set = sdm_set_to_string(order[i]->ranks);

		if (!set) {
			err = -ENOMEM;
			break;
		}
		if (fputs("{\"type\":", out) == EOF ||
		    merge_json_string(out, type, strlen(type)) ||
		    fprintf(out, ",\"ranks\":\"%s\",\"text\":", set) < 0 ||
		    merge_json_string(out, order[i]->text, order[i]->len) ||
		    fputs("}\n", out) == EOF)
			err = -EIO;
		free(set);
	}
	free(order);
	return err;
}

FILE *merge_text_open(struct merge_text *t)
{
	t->buf = NULL;
	t->size = 0;
	return open_memstream(&t->buf, &t->size);
}

char *merge_text_close(struct merge_text *t, FILE *f, int err)
{
	if (fclose(f) || err) {
		free(t->buf);
		return NULL;
	}
	return t->buf;
}

char *merge_format(const struct merge *m)
{
	struct merge_text t;
	FILE *f = merge_text_open(&t);

	return f ? merge_text_close(&t, f, merge_print(m, f)) : NULL;
}
