/* SPDX-License-Identifier: GPL-2.0 */
/* The socket inodes a set of processes holds open, from /proc/PID/fd. */
#ifndef CRDBG_CRS_SOCK_INODES_H
#define CRDBG_CRS_SOCK_INODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct crs_sock_inode {
	uint64_t ino;
	pid_t pid;	/* the first process found holding it ... */
	int fd;		/* ... and its descriptor there */
};

struct crs_sock_inodes {
	struct crs_sock_inode *at;
	size_t nr;
};

/* Add the socket inodes of pid's fds not in s yet (a pid gone adds none): 0 or -ENOMEM. */
int crs_sock_inodes_add(struct crs_sock_inodes *s, pid_t pid);

/* Where ino was found, or NULL: not one of s. */
const struct crs_sock_inode *crs_sock_inodes_find(const struct crs_sock_inodes *s, uint64_t ino);

static inline bool crs_sock_inodes_has(const struct crs_sock_inodes *s, uint64_t ino)
{
	return crs_sock_inodes_find(s, ino);
}

void crs_sock_inodes_free(struct crs_sock_inodes *s);

#endif /* CRDBG_CRS_SOCK_INODES_H */
