/* SPDX-License-Identifier: GPL-2.0 */
/* Whether CRIU has handed a tree back held: shared by checkpoint.c and restart.c. */
#ifndef CRDBG_CRS_HELD_H
#define CRDBG_CRS_HELD_H

#include <stdbool.h>
#include <sys/types.h>

#include <crdbg/crs.h>
#include <crdbg/freeze.h>

/* pid is frozen by b and no thread of it runs (each parked or stopped). */
bool crs_proc_parked(struct freeze_backend *b, pid_t pid);

/* When CRIU lets go of the tree: after its dump, or after its restore. */
enum crs_held_after {
	CRS_HELD_AFTER_DUMP,
	CRS_HELD_AFTER_RESTORE,
};

/*
 * CRIU has let go of every process of m (zombies aside): untraced, and
 * held again, either parked by crdbg.ko (kmod: its handle when it froze
 * the tree, else NULL) or, for a process m records as stopped or when
 * kmod is NULL, in its group stop. After a restore, also every thread m
 * records exists again (see held.c for why the two differ).
 */
bool crs_tree_held(const struct crs_meta *m, struct freeze_backend *kmod,
		   enum crs_held_after after);

#endif /* CRDBG_CRS_HELD_H */
