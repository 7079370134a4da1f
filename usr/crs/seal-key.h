/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node's seal key (Documentation/security.md): 32 random bytes in
 * CRS_SEAL_KEY_PATH, a root-owned file no one else may read. With it,
 * every sealed file's end line is an HMAC-SHA-256 under the key; without
 * it (a user's own crdbg, the host tests) a plain SHA-256, which the
 * service never accepts since it always has the key.
 */
#ifndef CRDBG_CRS_SEAL_KEY_H
#define CRDBG_CRS_SEAL_KEY_H

#include <stddef.h>
#include <stdint.h>

#ifndef CRS_SEAL_KEY_PATH
#define CRS_SEAL_KEY_PATH "/etc/crdbg/seal.key"
#endif
#define CRS_SEAL_KEY_LEN 32

/*
 * Load the key once: 1 when there is one, 0 when the file is missing or
 * not readable by us, -errno when it exists but is not a key (wrong size,
 * not owned by root, readable by others): sealing then fails.
 */
int crs_seal_key_load(void);

/* The seal of len bytes: HMAC-SHA-256 under the key, or SHA-256 without. */
int crs_seal(const void *data, size_t len, uint8_t out[32]);

#endif /* CRDBG_CRS_SEAL_KEY_H */
