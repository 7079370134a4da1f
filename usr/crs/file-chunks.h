/* SPDX-License-Identifier: GPL-2.0 */
/* Feeding a file to a digest: the one loop both digests use. */
#ifndef CRDBG_CRS_FILE_CHUNKS_H
#define CRDBG_CRS_FILE_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Open name in dirfd (no symlink followed) and call feed(arg, buf, len)
 * on every chunk; feed returns 0 or a negative errno, which stops the
 * walk. 0 and the file's size in *ret_size, or a negative errno.
 */
int crs_file_chunks(int dirfd, const char *name, int (*feed)(void *arg, const void *buf, size_t len),
		    void *arg, uint64_t *ret_size);

#endif /* CRDBG_CRS_FILE_CHUNKS_H */
