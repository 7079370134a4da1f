// SPDX-License-Identifier: GPL-2.0
/* XXH3-128 of a file, in its canonical (big-endian) byte order. */
#include <errno.h>
#include <string.h>

#include <xxhash.h>

#include "file-chunks.h"
#include "xxh128.h"

_Static_assert(sizeof(XXH128_canonical_t) == CRS_XXH128_LEN, "XXH128 is 16 bytes");

static int xxh128_feed(void *st, const void *buf, size_t len)
{
	return XXH3_128bits_update(st, buf, len) == XXH_OK ? 0 : -EIO;
}

int crs_xxh128_file(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
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
