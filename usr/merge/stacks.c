// SPDX-License-Identifier: GPL-2.0
/*
 * Merged stacks as a prefix tree (STAT style): one node per distinct
 * call path prefix, carrying the set of ranks whose stack has it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crdbg/merge.h"
#include "sdm/idset.h"

struct node {
	char *name;
	struct sdm_idset *ranks;
	struct node **child;
	size_t n, cap;
};

struct merge_stacks {
	struct node root;		/* unnamed; its ranks are all ranks added */
};

static void node_free(struct node *nd)
{
	for (size_t i = 0; i < nd->n; i++) {
		node_free(nd->child[i]);
		free(nd->child[i]);
	}
	free(nd->child);
	free(nd->name);
	sdm_set_free(nd->ranks);
}

struct merge_stacks *merge_stacks_new(void)
{
	struct merge_stacks *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->root.ranks = sdm_set_new();
	if (!t->root.ranks) {
		free(t);
		return NULL;
	}
	return t;
}

void merge_stacks_free(struct merge_stacks *t)
{
	if (!t)
		return;
	node_free(&t->root);
	free(t);
}

/* Frame names are cut at MERGE_MAX_NAME bytes, marked with "...". */
static char *name_copy(const char *s)
{
	size_t len = strnlen(s, MERGE_MAX_NAME + 1);
	char *name;

	if (len <= MERGE_MAX_NAME)
		return strdup(s);
	name = malloc(MERGE_MAX_NAME + 4);
	if (name) {
		memcpy(name, s, MERGE_MAX_NAME);
		memcpy(name + MERGE_MAX_NAME, "...", 4);
	}
	return name;
}

static struct node *get_child(struct node *parent, const char *frame)
{
	size_t len = strnlen(frame, MERGE_MAX_NAME + 1);
	struct node *nd;

	for (size_t i = 0; i < parent->n; i++) {
		const char *name = parent->child[i]->name;

		/* Names cut at the limit compare on their kept prefix. */
		if (len > MERGE_MAX_NAME ? !strncmp(name, frame, MERGE_MAX_NAME) &&
					 !strcmp(name + MERGE_MAX_NAME, "...")
				       : !strcmp(name, frame))
			return parent->child[i];
	}
	if (parent->n == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 4;
		struct node **nc = realloc(parent->child, cap * sizeof(*nc));

		if (!nc)
			return NULL;
		parent->child = nc;
		parent->cap = cap;
	}
	nd = calloc(1, sizeof(*nd));
	if (!nd)
		return NULL;
	nd->name = name_copy(frame);
	nd->ranks = sdm_set_new();
	if (!nd->name || !nd->ranks) {
		free(nd->name);
		sdm_set_free(nd->ranks);
		free(nd);
		return NULL;
	}
	parent->child[parent->n++] = nd;
	return nd;
}

int merge_stacks_add(struct merge_stacks *t, uint32_t rank, const char *const *frames, size_t n)
{
	struct node *nd = &t->root;
	int err;

	if (rank > SDM_SET_MAX_ID)
		return -ERANGE;
	if (sdm_set_contains(t->root.ranks, rank))
		return -EEXIST;
	if (n > MERGE_MAX_FRAMES)
		n = MERGE_MAX_FRAMES;
	/*
	 * On ENOMEM part of the path may already carry the rank; the tree
	 * stays consistent (every node's ranks are within its parent's).
	 */
	err = sdm_set_add_element(t->root.ranks, rank);
	for (size_t i = 0; i < n && !err; i++) {
		nd = get_child(nd, frames[i] ? frames[i] : "??");
		if (!nd)
			return -ENOMEM;
		err = sdm_set_add_element(nd->ranks, rank);
	}
	return err;
}

static sdm_id lowest(const struct node *nd)
{
	sdm_id id = SDM_SET_MAX_ID + 1u;

	sdm_set_find_next(nd->ranks, 0, &id);
	return id;
}

static int cmp_lowest(const void *a, const void *b)
{
	sdm_id x = lowest(*(const struct node *const *)a);
	sdm_id y = lowest(*(const struct node *const *)b);

	return x < y ? -1 : x > y;
}

static int print_node(struct node *nd, FILE *out, int depth)
{
	int err = 0;

	if (depth >= 0) {
		char *set = sdm_set_to_string(nd->ranks);

		if (!set)
			return -ENOMEM;
		if (fprintf(out, "%*s[%s] %s\n", 2 * depth, "", set, nd->name) < 0)
			err = -EIO;
		free(set);
	}
	/* Sorting here: the lowest rank of a branch depends on every add. */
	qsort(nd->child, nd->n, sizeof(*nd->child), cmp_lowest);
	for (size_t i = 0; i < nd->n && !err; i++)
		err = print_node(nd->child[i], out, depth + 1);
	return err;
}

int merge_stacks_print(const struct merge_stacks *t, FILE *out)
{
	/* Only the children's order changes: the tree's content is const. */
	return print_node((struct node *)&t->root, out, -1);
}

static int print_json_node(struct node *nd, FILE *out)
{
	int err = 0;

	if (nd->name) {
		char *set = sdm_set_to_string(nd->ranks);

		if (!set)
			return -ENOMEM;
		if (fputs("{\"name\":", out) == EOF ||
		    merge_json_string(out, nd->name, strlen(nd->name)) ||
		    fprintf(out, ",\"ranks\":\"%s\",\"children\":", set) < 0)
			err = -EIO;
		free(set);
		if (err)
			return err;
	}
	qsort(nd->child, nd->n, sizeof(*nd->child), cmp_lowest);
	if (fputc('[', out) == EOF)
		return -EIO;
	for (size_t i = 0; i < nd->n && !err; i++) {
		if (i && fputc(',', out) == EOF)
			return -EIO;
		err = print_json_node(nd->child[i], out);
	}
	if (!err && fputc(']', out) == EOF)
		err = -EIO;
	if (!err && nd->name && fputc('}', out) == EOF)
		err = -EIO;
	return err;
}

int merge_stacks_print_json(const struct merge_stacks *t, FILE *out)
{
	int err;

	if (fputs("{\"type\":\"stacks\",\"tree\":", out) == EOF)
		return -EIO;
	err = print_json_node((struct node *)&t->root, out);
	if (!err && fputs("}\n", out) == EOF)
		err = -EIO;
	return err;
}

char *merge_stacks_format(const struct merge_stacks *t)
{
	struct merge_text text;
	FILE *f = merge_text_open(&text);

	return f ? merge_text_close(&text, f, merge_stacks_print(t, f)) : NULL;
}
