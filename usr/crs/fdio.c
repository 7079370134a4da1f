// SPDX-License-Identifier: GPL-2.0
/* See fdio.h. */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdio.h"

enum fdio_op { FDIO_WRITE, FDIO_SEND, FDIO_PREAD };

static ssize_t once(enum fdio_op op, int fd, char *p, size_t len, uint64_t off)
{
	switch (op) {
	case FDIO_WRITE:
		return write(fd, p, len);
	case FDIO_SEND:
		return send(fd, p, len, MSG_NOSIGNAL);
	default:
		return pread(fd, p, len, (off_t)off);
	}
}

/* op over all len bytes, again after a short count or EINTR. */
static int whole(enum fdio_op op, int fd, char *p, size_t len, uint64_t off)
{
	ssize_t n;

	while (len) {
		n = once(op, fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return op == FDIO_PREAD ? -ENODATA : -EPIPE;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int crs_write_all(int fd, const void *buf, size_t len)
{
	return whole(FDIO_WRITE, fd, (char *)buf, len, 0);
}

int crs_send_all(int sk, const void *buf, size_t len)
{
	return whole(FDIO_SEND, sk, (char *)buf, len, 0);
}

int crs_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	return whole(FDIO_PREAD, fd, buf, len, off);
}
