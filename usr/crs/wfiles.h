/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The regular files a tree holds open for writing, kept with its
 * checkpoint (Documentation/checkpoint.md, "Files the program writes").
 * The record is the checkpoint's file "wfiles", text, one line per file
 * after a version line:
 *
 *   crdbg-wfiles 1
 *   wfile <index> <dev hex> <ino> <size> <mtime s> <mtime ns> <mode octal> <uid> <gid> <copied 0|1> <path, rest of line>
 *
 * A file of at most CRS_WFILE_COPY_MAX bytes is copied whole into the
 * checkpoint as "wfile-<index>"; a bigger one is only recorded. Record
 * and copies are files of the checkpoint: the metadata's digests cover
 * them.
 */
#ifndef CRDBG_CRS_WFILES_H
#define CRDBG_CRS_WFILES_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <crdbg/crs.h>
#include <crdbg/restart-check.h>

#define CRS_WFILES_NAME		"wfiles"
#define CRS_WFILE_COPY_PREFIX	"wfile-"
#define CRS_WFILE_COPY_MAX	CRS_FILES_COPY_MAX
#define CRS_WFILES_MAX		1024
#define CRS_WFILES_FORMAT	1

struct crs_wfile {
	unsigned int index;
	uint64_t dev;
	uint64_t ino;
	uint64_t size;
	int64_t mtime_s;
	long mtime_ns;
	unsigned int mode;
	unsigned int uid;
	unsigned int gid;
	bool copied;
	char path[PATH_MAX];
};

struct crs_wfiles {
	struct crs_wfile *f;
	size_t nr;
};

/* Append one record line of w to out (a path with a newline is -EINVAL). */
int crs_wfiles_format_one(FILE *out, const struct crs_wfile *w);

/*
 * Parse a whole record; -EBADMSG and the reason in err when malformed
 * (absolute paths only, indexes distinct and below CRS_WFILES_MAX,
 * copied only up to the cap).
 */
int crs_wfiles_parse(const char *buf, size_t len, struct crs_wfiles *ret, char *err,
		     size_t errlen);
void crs_wfiles_free(struct crs_wfiles *w);

/*
 * At checkpoint, the tree frozen: record (and copy) every regular file a
 * process of m holds open for writing into the pending directory dir.
 * Files under the store (store_root) are not the program's. -v lines
 * to log.
 */
int crs_wfiles_record(const struct crs_meta *m, const char *dir, const char *store_root,
		      FILE *log, char *err, size_t errlen);

/*
 * Before anything is killed or restored: 0 when every recorded file of
 * the checkpoint in dir (its metadata m, NULL: none read) can be put
 * back as it was, else -EXDEV and one line naming the file and what
 * changed. A file on a process's fd 0-2 that is gone is left to the
 * stdio rules (tree-stdio.h).
 */
int crs_wfiles_check(const char *dir, const char *handle, const struct crs_meta *m, char *err,
		     size_t errlen);

/*
 * Once the tree's processes are gone: put every recorded file back as
 * it was at the checkpoint. What is cut off or replaced is kept aside
 * in PATH.crdbg-after-<handle> (a line to log says where).
 */
int crs_wfiles_restore(const char *dir, const char *handle, const struct crs_meta *m,
		       FILE *log, char *err, size_t errlen);

#endif /* CRDBG_CRS_WFILES_H */
