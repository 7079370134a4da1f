/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A hand-written record text sealed as crdbg seals its own, so that a test
 * of a record parser gets past the seal, which is checked first.
 */
#ifndef CRDBG_TESTS_SEALED_TEXT_H
#define CRDBG_TESTS_SEALED_TEXT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "seal-key.h"
#include "sha256.h"

/* body followed by its "end HEX" line in out (size n): its length, or 0. */
static inline size_t seal_text(const char *body, char *out, size_t n)
{
	uint8_t d[CRS_SHA256_LEN];
	char hex[CRS_SHA256_HEX];
	size_t len = strlen(body);
	int w;

	if (crs_seal(body, len, d))
		return 0;
	crs_sha256_hex(d, hex);
	w = snprintf(out, n, "%send %s\n", body, hex);
	return w > 0 && (size_t)w < n ? (size_t)w : 0;
}

#endif /* CRDBG_TESTS_SEALED_TEXT_H */
