/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sealed text files: a magic first line, records one per line, and a
 * last line "end <seal of every byte before it>" (seal-key.h: an
 * HMAC-SHA-256 under the node's key, or a SHA-256 where there is none). A checkpoint's
 * metadata (meta.c) and a job manifest (usr/job/manifest.c) are two forms of
 * it; this is their writing of the seal and their reading of the lines.
 */
#ifndef CRDBG_CRS_SEALED_H
#define CRDBG_CRS_SEALED_H

#include <stddef.h>
#include <stdio.h>

struct crs_sealed_form {
	const char *what;	/* "metadata": the start of every error */
	const char *magic;	/* the first line, its newline included */
	size_t max_bytes;	/* the whole file */
	size_t max_line;	/* a record line, its newline excluded */
};

/*
 * Append the end line to f, an open_memstream() of *buf and *len, and
 * close it: 0, or -ENOMEM (f closed and *buf freed either way).
 */
int crs_sealed_close(FILE *f, char **buf, size_t *len);

/* One record line (NUL-terminated, no newline), numbered from 2. */
typedef int (*crs_sealed_line_fn)(void *arg, char *line, unsigned int lineno, char *err,
				  size_t errlen);

/*
 * Check buf's magic, its lines' shape, the end line and the seal, and
 * only then hand every record line to fn (its error ends the parse), so
 * that no record parser sees text crdbg did not seal: 0, -ENODATA when
 * empty or truncated, -EBADMSG when malformed or the seal does not
 * match, or fn's error. One line naming the problem in err.
 */
int crs_sealed_parse(const struct crs_sealed_form *form, const char *buf, size_t len,
		     crs_sealed_line_fn fn, void *arg, char *err, size_t errlen);

#endif /* CRDBG_CRS_SEALED_H */
