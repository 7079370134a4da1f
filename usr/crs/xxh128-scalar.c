// SPDX-License-Identifier: GPL-2.0
/* XXH3-128 of a file with 64-bit integer arithmetic only (see xxh128.c). */
#define XXH_VECTOR 0	/* XXH_SCALAR */
#include "xxh128-impl.h"

int crs_xxh128_file_scalar(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
			   uint64_t *ret_size)
{
	return xxh128_file(dirfd, name, out, ret_size);
}

void crs_xxh128_buf_scalar(const void *buf, size_t len, uint8_t out[CRS_XXH128_LEN])
{
	xxh128_buf(buf, len, out);
}

int crs_xxh128_file_chunked_scalar(int dirfd, const char *name, uint64_t chunk,
			       crs_xxh128_chunk_fn cb, void *arg,
			       uint8_t out[CRS_XXH128_LEN], uint64_t *ret_size)
{
	return xxh128_file_chunked(dirfd, name, chunk, cb, arg, out, ret_size);
}
