// SPDX-License-Identifier: GPL-2.0
/* The socket inodes a set of processes holds open (sock-inodes.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sock-inodes.h"

const struct crs_sock_inode *crs_sock_inodes_find(const struct crs_sock_inodes *s, uint64_t ino)
{
	for (size_t i = 0; i < s->nr; i++)
		if (s->at[i].ino == ino)
			return &s->at[i];
	return NULL;
}

int crs_sock_inodes_add(struct crs_sock_inodes *s, pid_t pid)
{
	char path[64], link[64], fd[400];
	unsigned long long ino;
	struct dirent *d;
	DIR *dp;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dp = opendir(path);
	if (!dp)
		return 0;
	while ((d = readdir(dp))) {
		struct crs_sock_inode *p;
		ssize_t n;

		snprintf(fd, sizeof(fd), "%s/%.255s", path, d->d_name);
		n = readlink(fd, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (sscanf(link, "socket:[%llu]", &ino) != 1 || crs_sock_inodes_has(s, ino))
			continue;
		p = realloc(s->at, (s->nr + 1) * sizeof(*p));
		if (!p) {
			closedir(dp);
			return -ENOMEM;
		}
		s->at = p;
		s->at[s->nr++] = (struct crs_sock_inode){ .ino = ino, .pid = pid,
							  .fd = atoi(d->d_name) };
	}
	closedir(dp);
	return 0;
}

void crs_sock_inodes_free(struct crs_sock_inodes *s)
{
	free(s->at);
	s->at = NULL;
	s->nr = 0;
}
