/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The checkpoint store: one directory per checkpoint under the store root
 * (default /var/lib/crdbg, CRDBG_STORE or --store to change). A checkpoint
 * is built in ".tmp-<handle>" and renamed to "<handle>" only once its
 * images are complete and its metadata (with the image checksums) is
 * written and synced; anything starting with '.' is never listed.
 */
#ifndef CRDBG_CRS_STORE_H
#define CRDBG_CRS_STORE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "meta.h"

#define CRS_STORE_DEFAULT "/var/lib/crdbg"

/* The store root: explicit (non-NULL) > $CRDBG_STORE > default. */
const char *crs_store_root(const char *explicit_root);

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

/* Path of a checkpoint directory; -EINVAL for a malformed handle. */
int crs_store_path(const char *root, const char *handle, char *out, size_t outlen);

/* Load and parse the metadata of a checkpoint. */
int crs_store_load(const char *root, const char *handle, struct crs_meta *m, char *err,
		   size_t errlen);

/*
 * Full check before a restore: metadata intact, every listed file present
 * with its size and checksum, no unlisted file. With quick, sizes only.
 */
int crs_store_verify(const char *root, const char *handle, const struct crs_meta *m,
		     bool quick, char *err, size_t errlen);

/* Call fn for every checkpoint (sorted by name); fn gets NULL meta if bad. */
typedef void (*crs_store_list_fn)(const char *handle, const struct crs_meta *m,
				  uint64_t bytes, const char *problem, void *arg);
int crs_store_list(const char *root, crs_store_list_fn fn, void *arg);

int crs_store_remove(const char *root, const char *handle);

/* Remove a directory tree below dirfd (no symlinks followed). */
int crs_rmtree(int dirfd, const char *name);

#endif /* CRDBG_CRS_STORE_H */
