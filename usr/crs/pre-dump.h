/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pre-dump of a checkpoint that continues (Documentation/checkpoint.md,
 * "The pre-dump"): most of a running tree's pages are copied before
 * crdbg freezes it, so that the stop holds only the pages written since.
 *
 *  1. `criu pre-dump --track-mem` into <pending>/pre-dump while the tree
 *     runs: CRIU stops it only to splice its pages into pipes, writes
 *     them once the tree runs again, and resets the tree's dirty tracking.
 *  2. The dump (frozen, as always) takes the pre-dump as its parent: its
 *     images hold the pages written since step 1, the rest "in parent".
 *  3. After the release, the pre-dump's pages are merged into the dump's
 *     own images and the pre-dump removed: the checkpoint stored is
 *     self-contained, exactly as one without a pre-dump (a later
 *     incremental checkpoint, a restart, a lazy restart see no
 *     difference).
 *
 * Any failure of step 1 only costs the time it took: the dump is full.
 */
#ifndef CRDBG_CRS_PRE_DUMP_H
#define CRDBG_CRS_PRE_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "meta.h"

/* Below the dump directory, and CRIU's --prev-images-dir for the dump. */
#define CRS_PRE_DUMP_DIR	"pre-dump"
#define CRS_PRE_DUMP_LOG	"pre-dump.log"

/*
 * A tree holding less than this in anonymous and shared memory is dumped
 * in one go: a pre-dump's own stop (seizing the tree, CRIU's parasite)
 * would cost more than the pages it takes out of the dump's
 * (Documentation/performance.md, "The pre-dump"). $CRDBG_PRE_DUMP_MIN_MB
 * overrides it.
 */
#define CRS_PRE_DUMP_MIN_MB	24

/*
 * Should the checkpoint of m's tree (continues: it is released after)
 * pre-dump? No when it does not continue, when a debugger holds the tree
 * (it does not run), when the dump is incremental already (m->parent),
 * without dirty tracking, when every process is stopped, or when the
 * tree holds less than CRS_PRE_DUMP_MIN_MB. *why says why not.
 */
bool crs_pre_dump_wanted(const struct crs_meta *m, bool continues, const char **why);

/*
 * Step 1 into dir/CRS_PRE_DUMP_DIR: 0, or an error in err with nothing
 * left of the pre-dump.
 */
int crs_pre_dump(pid_t pid, const char *dir, const struct crs_meta *m, char *err,
		 size_t errlen);

/* How the pagemaps of a dump took their pages from the pre-dump. */
struct crs_pre_dump_merged {
	unsigned int in_place;	/* the pre-dump's pages image, patched */
	unsigned int copied;	/* a new pages image (memory mapped or unmapped since) */
};

/*
 * Step 3 for the dump in dir: every pagemap of the dump with pages in
 * the pre-dump gets them into its own pages image; then the pre-dump
 * and CRIU's parent link go (its log stays, as CRS_PRE_DUMP_LOG). 0, or
 * -EBADMSG / -errno with the reason in err (the checkpoint is not valid).
 */
int crs_pre_dump_merge(const char *dir, struct crs_pre_dump_merged *how, char *err,
		       size_t errlen);

#endif /* CRDBG_CRS_PRE_DUMP_H */
