// SPDX-License-Identifier: GPL-2.0
/* See seal-key.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "seal-key.h"
#include "sha256.h"

static uint8_t seal_key[CRS_SEAL_KEY_LEN];
static bool seal_key_loaded;
static int seal_key_state;	/* crs_seal_key_load()'s answer, once loaded */

static int read_key(void)
{
	struct stat st;
	ssize_t n;
	int fd, r;

	fd = open(CRS_SEAL_KEY_PATH, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == EACCES ? 0 : -errno;
	if (fstat(fd, &st)) {
		r = -errno;
	} else if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077) ||
		   st.st_size != CRS_SEAL_KEY_LEN) {
		r = -EKEYREJECTED;	/* not a key only root reads: seal nothing with it */
	} else {
		n = read(fd, seal_key, sizeof(seal_key));
		r = n == (ssize_t)sizeof(seal_key) ? 1 : n < 0 ? -errno : -EKEYREJECTED;
	}
	close(fd);
	return r;
}

int crs_seal_key_load(void)
{
	if (!seal_key_loaded) {
		seal_key_state = read_key();
		seal_key_loaded = true;
	}
	return seal_key_state;
}

int crs_seal(const void *data, size_t len, uint8_t out[32])
{
	unsigned int olen = 0;
	int k = crs_seal_key_load();

	if (k < 0)
		return k;
	if (!k) {
		crs_sha256(data, len, out);
		return 0;
	}
	if (!HMAC(EVP_sha256(), seal_key, sizeof(seal_key), data, len, out, &olen) ||
	    olen != 32)
		return -ENOMEM;
	return 0;
}
