/* SPDX-License-Identifier: GPL-2.0 */
/*
 * XXH3-128 digests of checkpoint images (xxHash, built by xxh128.c): the fast
 * integrity check a restart runs before restoring anything
 * (Documentation/checkpoint.md, "Integrity checks").
 */
#ifndef CRDBG_CRS_XXH128_H
#define CRDBG_CRS_XXH128_H

#include <stddef.h>
#include <stdint.h>

#define CRS_XXH128_LEN 16
#define CRS_XXH128_HEX (2 * CRS_XXH128_LEN + 1)

/* Hash a file; returns 0 and its size, or -errno. */
int crs_xxh128_file(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
		    uint64_t *ret_size);

/* Hash len bytes at buf. */
void crs_xxh128_buf(const void *buf, size_t len, uint8_t out[CRS_XXH128_LEN]);

/* Called per chunk, in order: 0 or a negative errno, which stops the walk. */
typedef int (*crs_xxh128_chunk_fn)(void *arg, uint64_t off, uint64_t len,
				   const uint8_t digest[CRS_XXH128_LEN]);

/*
 * Hash a file and, in the same pass, each chunk bytes of it (the last one
 * may be shorter; an empty file has none): the file's digest in out and
 * its size, or -errno.
 */
int crs_xxh128_file_chunked(int dirfd, const char *name, uint64_t chunk,
			    crs_xxh128_chunk_fn cb, void *arg, uint8_t out[CRS_XXH128_LEN],
			    uint64_t *ret_size);

#endif /* CRDBG_CRS_XXH128_H */
