// SPDX-License-Identifier: GPL-2.0
/* XXH3-128 of a file with 64-bit integer arithmetic only (see xxh128.c). */
#define XXH_VECTOR 0	/* XXH_SCALAR */
#include "xxh128-impl.h"

int crs_xxh128_file_scalar(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
			   uint64_t *ret_size)
{
	return xxh128_file(dirfd, name, out, ret_size);
}
