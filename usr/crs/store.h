/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The store's writing side (the reading side and the layout are public,
 * in <crdbg/crs.h>): a checkpoint is built in a temporary directory and
 * committed by one rename once complete.
 */
#ifndef CRDBG_CRS_STORE_H
#define CRDBG_CRS_STORE_H

#include <limits.h>
#include <sys/types.h>

#include <crdbg/crs.h>

/* CRIU's symlink from an incremental dump to its parent's images. */
#define CRS_PARENT_LINK "parent"

struct crs_pending {
	char root[PATH_MAX];
	char handle[CRS_HANDLE_MAX];
	char dir[PATH_MAX];	/* the temporary directory images go to */
};

/* Create the store if needed and a fresh temporary checkpoint directory. */
int crs_store_begin(const char *root, pid_t pid, struct crs_pending *ret, char *err,
		    size_t errlen);

/*
 * Checksum every file of the pending directory into m->files, write the
 * metadata, sync, and rename the directory to its handle.
 */
int crs_store_commit(struct crs_pending *p, struct crs_meta *m, char *err, size_t errlen);

/* Remove a pending directory (after a failure). */
void crs_store_abort(struct crs_pending *p);

/* The valid handle names in dir, sorted (malloc'd, each too); none if dir is missing. */
int crs_store_names(const char *dir, char ***ret, size_t *ret_n);

/*
 * A whole small file: a regular file (no symlink followed) of at most max
 * bytes into *ret_buf (malloc'd) and *ret_len. 0, -EFBIG, or -errno.
 */
int crs_read_file(const char *path, size_t max, char **ret_buf, size_t *ret_len);

/* Remove a directory tree below dirfd (no symlinks followed). */
int crs_rmtree(int dirfd, const char *name);

#endif /* CRDBG_CRS_STORE_H */
