/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The body of one XXH3-128 file digest, compiled once per vector unit
 * (xxh128-scalar.c, xxh128-avx2.c: each sets XXH_VECTOR first) from
 * xxHash's inline header. Every unit gives the same digest; only the speed
 * differs (see xxh128.c for which runs). Include from those files only.
 */
#ifndef CRDBG_CRS_XXH128_IMPL_H
#define CRDBG_CRS_XXH128_IMPL_H

#include <errno.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "file-chunks.h"
#include "xxh128.h"

_Static_assert(sizeof(XXH128_canonical_t) == CRS_XXH128_LEN, "XXH128 is 16 bytes");

static int xxh128_feed(void *st, const void *buf, size_t len)
{
	return XXH3_128bits_update(st, buf, len) == XXH_OK ? 0 : -EIO;
}

static int xxh128_file(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
		       uint64_t *ret_size)
{
	XXH3_state_t *st = XXH3_createState();
	XXH128_canonical_t c;
	int err;

	if (!st || XXH3_128bits_reset(st) != XXH_OK)
		err = -ENOMEM;
	else
		err = crs_file_chunks(dirfd, name, xxh128_feed, st, ret_size);
	if (!err) {
		XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
		memcpy(out, c.digest, CRS_XXH128_LEN);
	}
	XXH3_freeState(st);
	return err;
}

#endif /* CRDBG_CRS_XXH128_IMPL_H */
