// SPDX-License-Identifier: GPL-2.0
/*
 * SHA-256 over OpenSSL's libcrypto (already a dependency of the SDM's
 * authentication), whose SHA-NI/AVX2 code matters on gigabytes of pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "sha256.h"

void crs_sha256(const void *data, size_t len, uint8_t out[CRS_SHA256_LEN])
{
	unsigned int dlen = CRS_SHA256_LEN;

	/* EVP_Digest only fails on allocation failure; leave a hash no file has. */
	if (!EVP_Digest(data, len, out, &dlen, EVP_sha256(), NULL))
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

int crs_sha256_file(int dirfd, const char *name, uint8_t out[CRS_SHA256_LEN],
		    uint64_t *ret_size)
{
	size_t bufsz = 1 << 20;
	uint64_t size = 0;
	unsigned int dlen = 0;
	EVP_MD_CTX *ctx;
	char *buf;
	ssize_t n;
	int fd, err = 0;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	buf = malloc(bufsz);
	ctx = EVP_MD_CTX_new();
	if (!buf || !ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		err = -ENOMEM;
		goto out;
	}
	while ((n = read(fd, buf, bufsz)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (!EVP_DigestUpdate(ctx, buf, (size_t)n)) {
			err = -EIO;
			goto out;
		}
		size += (uint64_t)n;
	}
	if (!EVP_DigestFinal_ex(ctx, out, &dlen) || dlen != CRS_SHA256_LEN) {
		err = -EIO;
		goto out;
	}
	*ret_size = size;
out:
	EVP_MD_CTX_free(ctx);
	free(buf);
	close(fd);
	return err;
}
