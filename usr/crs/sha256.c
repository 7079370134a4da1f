// SPDX-License-Identifier: GPL-2.0
/*
 * SHA-256 over OpenSSL's libcrypto (also the SDM's HMAC): one buffer
 * (the sealed metadata and job manifests) or a file read in chunks
 * (checkpoint images digested with SHA-256 rather than XXH3-128).
 */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "file-chunks.h"
#include <crdbg/crs.h>
#include "sha256.h"

void crs_sha256(const void *data, size_t len, uint8_t out[CRS_SHA256_LEN])
{
	unsigned int dlen = 0;

	/* only an allocation can fail: a zero digest then matches nothing sealed */
	if (!EVP_Digest(data, len, out, &dlen, EVP_sha256(), NULL) || dlen != CRS_SHA256_LEN)
		memset(out, 0, CRS_SHA256_LEN);
}

void crs_sha256_hex(const uint8_t d[CRS_SHA256_LEN], char out[CRS_SHA256_HEX])
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < CRS_SHA256_LEN; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[2 * CRS_SHA256_LEN] = '\0';
}

static int sha256_feed(void *ctx, const void *buf, size_t len)
{
	return EVP_DigestUpdate(ctx, buf, len) ? 0 : -EIO;
}

int crs_sha256_file(int dirfd, const char *name, uint8_t out[CRS_SHA256_LEN],
		    uint64_t *ret_size)
{
	unsigned int dlen = 0;
	EVP_MD_CTX *ctx;
	int err;

	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
		err = -ENOMEM;
	else
		err = crs_file_chunks(dirfd, name, sha256_feed, ctx, ret_size);
	if (!err && (!EVP_DigestFinal_ex(ctx, out, &dlen) || dlen != CRS_SHA256_LEN))
		err = -EIO;
	EVP_MD_CTX_free(ctx);
	return err;
}

bool crs_digest_from_hex(const char *s, uint8_t *out, size_t len)
{
	size_t i;

	if (strlen(s) != 2 * len)
		return false;
	for (i = 0; i < 2 * len; i++) {
		char c = s[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (v < 0)
			return false;
		if (i % 2 == 0)
			out[i / 2] = (uint8_t)(v << 4);
		else
			out[i / 2] |= (uint8_t)v;
	}
	return true;
}
