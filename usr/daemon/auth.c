// SPDX-License-Identifier: GPL-2.0
/* See auth.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <crdbg/crs.h>

#include "auth.h"
#include "error.h"
#include "proc.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

int crdbgd_caller_of(int fd, struct crdbgd_caller *ret)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) || len != sizeof(uc))
		return -errno;
	ret->pid = uc.pid;
	ret->uid = uc.uid;
	ret->gid = uc.gid;
	return 0;
}

/* The pid a pidfd refers to (its fdinfo's "Pid:"), -ESRCH once it exited. */
static pid_t pidfd_pid(int pidfd)
{
	char path[64], line[256];
	pid_t pid = -EBADF;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return -EBADF;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid == -1 ? -ESRCH : pid;
}

/* The pid whose /proc/PID/mem memfd is: -EBADF when it is not such a file. */
static pid_t memfd_pid(int memfd)
{
	char path[64], link[128];
	struct statfs sfs;
	ssize_t n;
	int pid, end = 0;

	if (fstatfs(memfd, &sfs) || sfs.f_type != PROC_SUPER_MAGIC)
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return -EBADF;
	link[n] = '\0';
	if (sscanf(link, "/proc/%d/mem%n", &pid, &end) != 1 || (size_t)end != (size_t)n ||
	    pid <= 0)
		return -EBADF;
	return pid;
}

/* A task's four uids from its status: 0, or why not ("" when they are uid's). */
static int task_uids(pid_t pid, pid_t tid, uid_t want, const char **why)
{
	char path[96], line[256];
	unsigned int r, e, s, f;
	bool seen = false;
	FILE *st;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	st = fopen(path, "re");
	if (!st)
		return -errno;
	while (fgets(line, sizeof(line), st))
		if (sscanf(line, "Uid: %u %u %u %u", &r, &e, &s, &f) == 4) {
			seen = true;
			break;
		}
	fclose(st);
	if (!seen)
		return -ESRCH;
	*why = r != want || e != want || s != want || f != want ? "runs as another user" : "";
	return 0;
}

/*
 * Whether pid (each of its threads) is want's and dumpable: the files of
 * a task that is not dumpable are root's (proc(5); the directories keep
 * the task's uid, for ps), so the owner of /proc/PID/task/TID/mem is
 * checked beside the uids.
 */
static int proc_is_callers(pid_t pid, uid_t want, char *err, size_t errlen)
{
	pid_t *tids = NULL;
	size_t nr = 0, i;
	const char *why = "";
	char path[96];
	struct stat st;
	int r;

	r = crs_proc_tids(pid, &tids, &nr);
	for (i = 0; !r && i < nr && !*why; i++) {
		r = task_uids(pid, tids[i], want, &why);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/mem", (int)pid, (int)tids[i]);
		if (!r && !*why && (stat(path, &st) ? (r = -errno) : st.st_uid != want))
			why = "is not dumpable (set-id, or prctl PR_SET_DUMPABLE 0)";
	}
	free(tids);
	if (r)
		return crs_fail(err, errlen, r == -ENOENT ? -ESRCH : r, "pid %d: cannot be read: %s",
				(int)pid, strerror(r == -ENOENT ? ESRCH : -r));
	if (*why)
		return crs_fail(err, errlen, -EPERM, "pid %d %s: refused, nothing was frozen",
				(int)pid, why);
	return 0;
}

int crdbgd_auth_tree(const struct crdbgd_caller *c, pid_t pid, bool descendants, int pidfd,
		     int memfd, char *err, size_t errlen)
{
	pid_t *pids = NULL, p;
	size_t nr = 0, i;
	int r;

	if (c->uid == 0)
		return 0;
	p = pidfd_pid(pidfd);
	if (p != pid)
		return crs_fail(err, errlen, -EPERM,
				"pid %d: the pidfd given is not of this process: refused", (int)pid);
	if (memfd_pid(memfd) != pid)
		return crs_fail(err, errlen, -EPERM,
				"pid %d: no /proc/%d/mem opened by the caller was given: refused",
				(int)pid, (int)pid);
	r = crs_proc_tree(pid, descendants, &pids, &nr);
	if (r)
		return crs_fail(err, errlen, r, "pid %d: cannot read its tree: %s", (int)pid,
				strerror(-r));
	for (i = 0; i < nr && !r; i++)
		r = proc_is_callers(pids[i], c->uid, err, errlen);
	free(pids);
	/* the pidfd still names a live process: the pid read above was not recycled */
	if (!r && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0))
		r = crs_fail(err, errlen, -ESRCH, "pid %d exited while it was checked", (int)pid);
	return r;
}

bool crdbgd_store_is_nodes(int dirfd)
{
	struct stat st, def;

	return !fstat(dirfd, &st) && !stat(CRS_STORE_DEFAULT, &def) && def.st_dev == st.st_dev &&
	       def.st_ino == st.st_ino;
}

int crdbgd_auth_store(const struct crdbgd_caller *c, int dirfd, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(dirfd, &st))
		return crs_fail(err, errlen, -errno, "the store given cannot be read: %s",
				strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return crs_fail(err, errlen, -ENOTDIR, "the store given is not a directory");
	if (c->uid == 0)
		return 0;
	/* the node's store is root's; any other must be the caller's own */
	if (crdbgd_store_is_nodes(dirfd))
		return 0;
	if (st.st_uid != c->uid || (st.st_mode & 022))
		return crs_fail(err, errlen, -EPERM,
				"the store given is %s: a store must be your own directory, writable by no one else",
				st.st_uid != c->uid ? (st.st_uid ? "another user's" : "root's") :
				"writable by others");
	return 0;
}
