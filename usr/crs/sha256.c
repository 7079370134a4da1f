// SPDX-License-Identifier: GPL-2.0
/*
 * SHA-256 of files over OpenSSL's libcrypto (already a dependency of the
 * SDM's authentication), whose SHA-NI/AVX2 code matters on gigabytes of
 * pages; one buffer in memory: sha256-small.c. libcrypto is loaded on
 * first use (sdm/lazylib.h): only checkpoints whose files were digested
 * with SHA-256 (before XXH3-128, or with CRDBG_DIGEST=sha256) need it.
 */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "file-chunks.h"
#include <crdbg/crs.h>
#include <sdm/lazylib.h>
#include "sha256.h"

static struct {
	__typeof__(EVP_sha256) *sha256;
	__typeof__(EVP_MD_CTX_new) *ctx_new;
	__typeof__(EVP_MD_CTX_free) *ctx_free;
	__typeof__(EVP_DigestInit_ex) *init;
	__typeof__(EVP_DigestUpdate) *update;
	__typeof__(EVP_DigestFinal_ex) *final;
} ossl;

static const struct lazylib_sym ossl_syms[] = {
	{ "EVP_sha256", (void **)&ossl.sha256 },
	{ "EVP_MD_CTX_new", (void **)&ossl.ctx_new },
	{ "EVP_MD_CTX_free", (void **)&ossl.ctx_free },
	{ "EVP_DigestInit_ex", (void **)&ossl.init },
	{ "EVP_DigestUpdate", (void **)&ossl.update },
	{ "EVP_DigestFinal_ex", (void **)&ossl.final },
};

static struct lazylib libcrypto = LAZYLIB_INIT("libcrypto.so.3", ossl_syms);

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
	return ossl.update(ctx, buf, len) ? 0 : -EIO;
}

int crs_sha256_file(int dirfd, const char *name, uint8_t out[CRS_SHA256_LEN],
		    uint64_t *ret_size)
{
	unsigned int dlen = 0;
	EVP_MD_CTX *ctx;
	int err;

	if (lazylib_load(&libcrypto, NULL, 0))
		return -ELIBACC;
	ctx = ossl.ctx_new();
	if (!ctx || !ossl.init(ctx, ossl.sha256(), NULL))
		err = -ENOMEM;
	else
		err = crs_file_chunks(dirfd, name, sha256_feed, ctx, ret_size);
	if (!err && (!ossl.final(ctx, out, &dlen) || dlen != CRS_SHA256_LEN))
		err = -EIO;
	ossl.ctx_free(ctx);
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
