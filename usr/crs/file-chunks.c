// SPDX-License-Identifier: GPL-2.0
/* See file-chunks.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "file-chunks.h"

#define CHUNK (1 << 20)

int crs_file_chunks(int dirfd, const char *name, int (*feed)(void *arg, const void *buf, size_t len),
		    void *arg, uint64_t *ret_size)
{
	uint64_t size = 0;
	char *buf;
	ssize_t n;
	int fd, err = 0;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	buf = malloc(CHUNK);
	if (!buf)
		err = -ENOMEM;
	while (!err && (n = read(fd, buf, CHUNK)) != 0) {
		if (n < 0) {
			if (errno != EINTR)
				err = -errno;
			continue;
		}
		err = feed(arg, buf, (size_t)n);
		size += (uint64_t)n;
	}
	free(buf);
	close(fd);
	if (!err)
		*ret_size = size;
	return err;
}
