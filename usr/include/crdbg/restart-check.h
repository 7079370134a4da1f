/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a restart of a checkpoint needs, asked before anything is killed
 * or restored (crdbg verify, a job part's verify, the console's restart
 * before it ends the ranks). Documentation/checkpoint.md, "A restart
 * kills nothing it cannot restore" and "Files the program writes".
 */
#ifndef CRDBG_RESTART_CHECK_H
#define CRDBG_RESTART_CHECK_H

#include <stddef.h>

#include <crdbg/crs.h>

/* The cap on a file crdbg copies whole into a checkpoint (bytes). */
#define CRS_FILES_COPY_MAX	(64ull << 20)

/*
 * 0 when a restart of handle (the store at root, its metadata m read)
 * can happen once the job's own processes are ended: the checkpoint is
 * whole (every image and its digest, the chain's links), every file the
 * tree wrote can be put back, every address of this host its TCP sockets
 * were bound to is one this host has, and every pid of the tree is free or held
 * by the job's own process (the same pid, group and session as at the
 * checkpoint: its running incarnation, which the caller ends first) or
 * one on its way out. Else a negative errno and one line in err.
 */
int crs_restart_check(const char *root, const char *handle, const struct crs_meta *m,
		      char *err, size_t errlen);

#endif /* CRDBG_RESTART_CHECK_H */
