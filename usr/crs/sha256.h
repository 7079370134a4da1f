/* SPDX-License-Identifier: GPL-2.0 */
/* SHA-256 checksums of checkpoint images and metadata (libcrypto). */
#ifndef CRDBG_CRS_SHA256_H
#define CRDBG_CRS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define CRS_SHA256_LEN 32
#define CRS_SHA256_HEX (2 * CRS_SHA256_LEN + 1)

/* Hash one buffer. */
void crs_sha256(const void *data, size_t len, uint8_t out[CRS_SHA256_LEN]);
void crs_sha256_hex(const uint8_t d[CRS_SHA256_LEN], char out[CRS_SHA256_HEX]);

/* Hash a file; returns 0 and its size, or -errno. */
int crs_sha256_file(int dirfd, const char *name, uint8_t out[CRS_SHA256_LEN],
		    uint64_t *ret_size);

#endif /* CRDBG_CRS_SHA256_H */
