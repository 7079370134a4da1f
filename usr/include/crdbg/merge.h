/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Merging of what many ranks reply, for the console (usr/console/).
 *
 * Reply merging (merge.c): collect (rank, reply text) pairs; identical
 * replies form one group whose ranks print as a range set:
 *
 *   [0-3,5]: x = 4
 *   [4,6-7]: x = 9
 *
 * Groups are ordered by their lowest rank. A reply of several lines gets
 * the prefix on each line. Rank sets are SDM id sets (sdm/idset.h).
 *
 * Merged stacks (stacks.c), as STAT prints them: per-rank backtraces,
 * outermost frame first, merged into a prefix tree; each node carries the
 * set of ranks whose stacks pass through it; children are ordered by
 * their lowest rank, two spaces of indentation per level:
 *
 *   [0-7] main
 *     [0-3] compute
 *       [0-3] MPI_Recv
 *     [4-7] MPI_Barrier
 *
 * Both are bounded: a reply is cut at MERGE_MAX_REPLY bytes, a stack at
 * MERGE_MAX_FRAMES frames and a frame name at MERGE_MAX_NAME bytes (a cut
 * name ends in "..."); ranks are at most SDM_SET_MAX_ID.
 */
#ifndef CRDBG_MERGE_H
#define CRDBG_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MERGE_MAX_REPLY	(64u << 10)
#define MERGE_MAX_FRAMES	1024
#define MERGE_MAX_NAME	512

struct sdm_idset;

struct merge;

struct merge *merge_new(void);			/* NULL on ENOMEM */
void merge_free(struct merge *m);		/* accepts NULL */
/*
 * Add one rank's reply (a trailing newline is ignored). -EEXIST if that
 * rank already replied, -ERANGE for a rank above SDM_SET_MAX_ID, -ENOMEM.
 */
int merge_add(struct merge *m, uint32_t rank, const char *reply);
/* Same, for a reply already merged over a set of ranks (e.g. by the SDM). */
int merge_add_set(struct merge *m, const struct sdm_idset *ranks, const char *reply);
size_t merge_groups(const struct merge *m);
/* Print every group; returns 0 or -errno of the write. */
int merge_print(const struct merge *m, FILE *out);
/* The same text in a malloc'd string (NULL on ENOMEM). */
char *merge_format(const struct merge *m);

/*
 * What a print function writes, as a malloc'd string: open, print into
 * the FILE, then close with the print's result (NULL if either failed).
 */
struct merge_text {
	char *buf;
	size_t size;
};
FILE *merge_text_open(struct merge_text *t);
char *merge_text_close(struct merge_text *t, FILE *f, int err);
/*
 * --json form, one line per group, same order:
 *   {"type":"TYPE","ranks":"0-3,5","text":"x = 4"}
 */
int merge_print_json(const struct merge *m, FILE *out, const char *type);

struct merge_stacks;

struct merge_stacks *merge_stacks_new(void);		/* NULL on ENOMEM */
void merge_stacks_free(struct merge_stacks *t);		/* accepts NULL */
/*
 * Add one rank's stack, frames[0] outermost (main). -EEXIST if that rank
 * already has a stack, -ERANGE, -ENOMEM. A rank with no frames is
 * counted but adds no branch.
 */
int merge_stacks_add(struct merge_stacks *t, uint32_t rank, const char *const *frames, size_t n);
int merge_stacks_print(const struct merge_stacks *t, FILE *out);
char *merge_stacks_format(const struct merge_stacks *t);
/*
 * --json form, one line:
 *   {"type":"stacks","tree":[{"name":"main","ranks":"0-7","children":[...]}]}
 */
int merge_stacks_print_json(const struct merge_stacks *t, FILE *out);

/*
 * Write s (len bytes, any bytes) as a JSON string with its quotes: valid
 * UTF-8 passes through, control characters and stray bytes >= 0x80 are
 * \u escaped, so the output is valid JSON whatever gdb sent. 0 or -EIO.
 */
int merge_json_string(FILE *out, const char *s, size_t len);

#endif /* CRDBG_MERGE_H */
