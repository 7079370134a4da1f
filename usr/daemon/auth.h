/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who may the service act for, on what (Documentation/security.md,
 * "Authorization"): the caller is SO_PEERCRED's; a process tree is the
 * caller's when the caller proved ptrace access to its root (a pidfd and
 * an fd of its /proc/PID/mem, both opened by the caller) and every task
 * of it has the caller's uid in all four ids and is dumpable.
 */
#ifndef CRDBGD_AUTH_H
#define CRDBGD_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct crdbgd_caller {
	pid_t pid;
	uid_t uid;
	gid_t gid;
};

/* The peer of the connected socket fd. */
int crdbgd_caller_of(int fd, struct crdbgd_caller *ret);

/*
 * 0 if the caller may checkpoint the tree of pid (with descendants, or
 * pid alone): root always; else pidfd and memfd must both be pid's and
 * every task of the tree the caller's. -EPERM (or -ESRCH) with one line
 * naming the process and why.
 */
int crdbgd_auth_tree(const struct crdbgd_caller *c, pid_t pid, bool descendants, int pidfd,
		     int memfd, char *err, size_t errlen);

/*
 * 0 if dirfd is a store directory the caller may have root write into:
 * a directory owned by the caller (or root), writable by no one else.
 */
int crdbgd_auth_store(const struct crdbgd_caller *c, int dirfd, char *err, size_t errlen);

/* Whether dirfd is the node's store (CRS_STORE_DEFAULT) itself. */
bool crdbgd_store_is_nodes(int dirfd);

#endif /* CRDBGD_AUTH_H */
