// SPDX-License-Identifier: GPL-2.0
/* XXH3-128 of a file, in its canonical (big-endian) byte order. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "xxh128.h"

_Static_assert(sizeof(XXH128_canonical_t) == CRS_XXH128_LEN, "XXH128 is 16 bytes");

int crs_xxh128_file(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
		    uint64_t *ret_size)
{
	size_t bufsz = 1 << 20;
	XXH128_canonical_t c;
	XXH3_state_t *st;
	uint64_t size = 0;
	char *buf;
	ssize_t n;
	int fd, err = 0;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	buf = malloc(bufsz);
	st = XXH3_createState();
	if (!buf || !st || XXH3_128bits_reset(st) != XXH_OK) {
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
		XXH3_128bits_update(st, buf, (size_t)n);
		size += (uint64_t)n;
	}
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
	memcpy(out, c.digest, CRS_XXH128_LEN);
	*ret_size = size;
out:
	XXH3_freeState(st);
	free(buf);
	close(fd);
	return err;
}
