/* SPDX-License-Identifier: GPL-2.0 */
/*
 * XXH3-128 digests of checkpoint images (xxHash, built by xxh128.c): the fast
 * integrity check a restart runs before restoring anything
 * (Documentation/checkpoint.md, "Integrity checks").
 */
#ifndef CRDBG_CRS_XXH128_H
#define CRDBG_CRS_XXH128_H

#include <stdint.h>

#define CRS_XXH128_LEN 16
#define CRS_XXH128_HEX (2 * CRS_XXH128_LEN + 1)

/* Hash a file; returns 0 and its size, or -errno. */
int crs_xxh128_file(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
		    uint64_t *ret_size);

#endif /* CRDBG_CRS_XXH128_H */
