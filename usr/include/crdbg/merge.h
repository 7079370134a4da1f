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
 * Both are bounded: a reply is cut at CON_MAX_REPLY bytes, a stack at
 * CON_MAX_FRAMES frames and a frame name at CON_MAX_NAME bytes (a cut
 * name ends in "..."); ranks are at most SDM_SET_MAX_ID.
 */
#ifndef CRDBG_MERGE_H
#define CRDBG_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CON_MAX_REPLY	(64u << 10)
#define CON_MAX_FRAMES	1024
#define CON_MAX_NAME	512

struct sdm_idset;

struct con_merge;

struct con_merge *con_merge_new(void);			/* NULL on ENOMEM */
void con_merge_free(struct con_merge *m);		/* accepts NULL */
/*
 * Add one rank's reply (a trailing newline is ignored). -EEXIST if that
 * rank already replied, -ERANGE for a rank above SDM_SET_MAX_ID, -ENOMEM.
 */
int con_merge_add(struct con_merge *m, uint32_t rank, const char *reply);
/* Same, for a reply already merged over a set of ranks (e.g. by the SDM). */
int con_merge_add_set(struct con_merge *m, const struct sdm_idset *ranks, const char *reply);
size_t con_merge_groups(const struct con_merge *m);
/* Print every group; returns 0 or -errno of the write. */
int con_merge_print(const struct con_merge *m, FILE *out);
/* The same text in a malloc'd string (NULL on ENOMEM). */
char *con_merge_format(const struct con_merge *m);

/*
 * What a print function writes, as a malloc'd string: open, print into
 * the FILE, then close with the print's result (NULL if either failed).
 */
struct con_text {
	char *buf;
	size_t size;
};
FILE *con_text_open(struct con_text *t);
char *con_text_close(struct con_text *t, FILE *f, int err);
/*
 * --json form, one line per group, same order:
 *   {"type":"TYPE","ranks":"0-3,5","text":"x = 4"}
 */
int con_merge_print_json(const struct con_merge *m, FILE *out, const char *type);

struct con_stacks;

struct con_stacks *con_stacks_new(void);		/* NULL on ENOMEM */
void con_stacks_free(struct con_stacks *t);		/* accepts NULL */
/*
 * Add one rank's stack, frames[0] outermost (main). -EEXIST if that rank
 * already has a stack, -ERANGE, -ENOMEM. A rank with no frames is
 * counted but adds no branch.
 */
int con_stacks_add(struct con_stacks *t, uint32_t rank, const char *const *frames, size_t n);
int con_stacks_print(const struct con_stacks *t, FILE *out);
char *con_stacks_format(const struct con_stacks *t);
/*
 * --json form, one line:
 *   {"type":"stacks","tree":[{"name":"main","ranks":"0-7","children":[...]}]}
 */
int con_stacks_print_json(const struct con_stacks *t, FILE *out);

/*
 * Write s (len bytes, any bytes) as a JSON string with its quotes: valid
 * UTF-8 passes through, control characters and stray bytes >= 0x80 are
 * \u escaped, so the output is valid JSON whatever gdb sent. 0 or -EIO.
 */
int con_json_string(FILE *out, const char *s, size_t len);

#endif /* CRDBG_MERGE_H */
