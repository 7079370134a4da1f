/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Contents CRIU does not keep: tmpfs files the tree maps shared, holds
 * open or uses as FIFOs, saved into and restored from a checkpoint
 * directory (usr/crs/tmpfs.c).
 */
#ifndef CRDBG_CRS_TMPFS_H
#define CRDBG_CRS_TMPFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Copy them, for the tree rooted at root, into dir (the tree is frozen). */
int crs_tmpfs_save(pid_t root, const char *dir, char *err, size_t errlen);

/*
 * Before a restore: write shared mappings back, recreate missing open
 * files and FIFOs. Refuses a name that points outside tmpfs.
 */
int crs_tmpfs_put_back(const char *dir, char *err, size_t errlen);

/* dir holds a copy of file that crs_tmpfs_put_back() makes again when missing. */
bool crs_tmpfs_kept(const char *dir, const char *file);

#endif /* CRDBG_CRS_TMPFS_H */
