// SPDX-License-Identifier: GPL-2.0
/*
 * CRIU reopens a file a process maps shared, but does not store its
 * contents. Files on tmpfs mapped that way (Open MPI's shared-memory
 * segments in /dev/shm, hwloc.sm in its session directory) change or
 * vanish once the job goes on or ends, so crdbg copies them, while the
 * tree is still frozen, into the checkpoint as "tmpfs-<kind>-<path, / as
 * :>" and puts them back before a restore (see tmpfs.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "meta.h"
#include "proc.h"
#include "tmpfs.h"

#define TMPFS_PREFIX	"tmpfs-"
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC	0x01021994
#endif

static int copy_file(const char *from, int dfd, const char *to, int flags, mode_t mode)
{
	char buf[65536];
	int in, out, r = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = openat(dfd, to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | flags, mode);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			r = errno ? -errno : -EIO;
			break;
		}
	if (n < 0)
		r = -errno;
	if (close(out) && !r)
		r = -errno;
	close(in);
	return r;
}

/* Is file a regular file or FIFO on tmpfs, with a name we can encode? */
static bool tmpfs_candidate(const char *file, char kind, mode_t *mode)
{
	struct statfs sfs;
	struct stat st;

	if (file[0] != '/' || strchr(file, ':') || strchr(file, ' ') ||
	    strlen(TMPFS_PREFIX) + 2 + strlen(file) >= CRS_NAME_MAX)
		return false;
	if (statfs(file, &sfs) || sfs.f_type != TMPFS_MAGIC || stat(file, &st))
		return false;
	*mode = st.st_mode;
	return kind == 'p' ? S_ISFIFO(st.st_mode) : S_ISREG(st.st_mode);
}

static void tmpfs_name(char *name, size_t len, char kind, const char *file)
{
	char *c;

	snprintf(name, len, TMPFS_PREFIX "%c-%s", kind, file);
	for (c = name + strlen(TMPFS_PREFIX) + 2; *c; c++)
		if (*c == '/')
			*c = ':';
}

/* Save file into dfd as kind m (mapped shared), f (open) or p (FIFO). */
static int save_one(int dfd, char kind, const char *file, char *err, size_t errlen)
{
	char name[CRS_NAME_MAX + 8];
	mode_t mode;
	int r, fd;

	if (!tmpfs_candidate(file, kind == 'f' ? 'x' : kind, &mode) &&
	    !(kind == 'f' && tmpfs_candidate(file, 'p', &mode)))
		return 0;
	if (kind == 'f' && S_ISFIFO(mode))
		kind = 'p';
	tmpfs_name(name, sizeof(name), 'm', file);
	if (faccessat(dfd, name, F_OK, 0) == 0)
		return 0;
	tmpfs_name(name, sizeof(name), kind, file);
	if (faccessat(dfd, name, F_OK, 0) == 0)
		return 0;
	if (kind == 'p') {
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0777);
		r = fd < 0 ? -errno : 0;
		if (fd >= 0)
			close(fd);
	} else {
		r = copy_file(file, dfd, name, O_EXCL, mode & 0777);
	}
	if (r)
		snprintf(err, errlen, "cannot save %s: %s", file, strerror(-r));
	return r;
}

int crs_tmpfs_save(pid_t root, const char *dir, char *err, size_t errlen)
{
	char path[300], line[4400];
	pid_t *pids = NULL;
	size_t nr = 0, i;
	int dfd, r = 0;

	if (crs_proc_tree(root, true, &pids, &nr))
		return 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* Shared mappings first: their contents are part of the memory. */
	for (i = 0; i < nr && dfd >= 0 && !r; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pids[i]);
		f = fopen(path, "re");
		while (f && !r && fgets(line, sizeof(line), f)) {
			char perms[8], *file = strchr(line, '/');

			line[strcspn(line, "\n")] = '\0';
			if (sscanf(line, "%*s %7s", perms) == 1 && perms[3] == 's' && file)
				r = save_one(dfd, 'm', file, err, errlen);
		}
		if (f)
			fclose(f);
	}
	for (i = 0; i < nr && dfd >= 0 && !r; i++) {
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/fd", (int)pids[i]);
		d = opendir(path);
		while (d && !r && (de = readdir(d))) {
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pids[i], de->d_name);
			n = readlink(path, line, sizeof(line) - 1);
			if (n <= 0)
				continue;
			line[n] = '\0';
			r = save_one(dfd, 'f', line, err, errlen);
		}
		if (d)
			closedir(d);
	}
	if (dfd >= 0)
		close(dfd);
	free(pids);
	return r;
}

bool crs_tmpfs_kept(const char *dir, const char *file)
{
	char name[CRS_NAME_MAX + 8], path[PATH_MAX + CRS_NAME_MAX + 16];

	if (file[0] != '/' || strchr(file, ':') || strchr(file, ' ') ||
	    strlen(TMPFS_PREFIX) + 2 + strlen(file) >= CRS_NAME_MAX)
		return false;
	for (const char *k = "mf"; *k; k++) {
		tmpfs_name(name, sizeof(name), *k, file);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

/*
 * The directory that will hold file, made where missing, walked from "/"
 * one component at a time without following a symlink: an O_PATH fd, or
 * -errno. Root puts files back on its callers' behalf, and a user may
 * have swapped any component for a link to somewhere only root writes.
 */
static int open_parent_beneath(const char *file, const char **ret_base)
{
	char comp[CRS_NAME_MAX];
	const char *p = file + 1, *slash;
	int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), next;

	while (dfd >= 0 && (slash = strchr(p, '/'))) {
		size_t len = (size_t)(slash - p);

		if (!len || len >= sizeof(comp)) {
			close(dfd);
			return -EINVAL;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		if (mkdirat(dfd, comp, 0700) && errno != EEXIST) {
			next = -errno;
		} else {
			next = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (next < 0)
				next = errno == ENOTDIR || errno == ELOOP ? -ELOOP : -errno;
		}
		close(dfd);
		dfd = next;
		p = slash + 1;
	}
	if (dfd < 0)
		return dfd < -1 ? dfd : -errno;
	*ret_base = p;
	return dfd;
}

/* Put one file back: kind p a FIFO, else its content copied from from. */
static int put_back_one(const char *from, const char *file, char kind, mode_t mode)
{
	const char *base = NULL;
	int pfd = open_parent_beneath(file, &base), r;

	if (pfd < 0)
		return pfd;
	if (!*base)
		r = -EINVAL;
	else if (kind == 'p')
		r = mkfifoat(pfd, base, mode) ? -errno : 0;
	else
		r = copy_file(from, pfd, base, O_NOFOLLOW, mode);
	close(pfd);
	return r;
}

/*
 * A name from a checkpoint directory is data: write back only to an
 * absolute path without "." or ".." components whose nearest existing
 * ancestor is on tmpfs, so a crafted checkpoint cannot reach /etc, and
 * follow no symlink on the way (open_parent_beneath).
 */
static bool safe_target(const char *file)
{
	char dir[CRS_NAME_MAX], *slash;
	struct statfs sfs;

	if (file[0] != '/' || strstr(file, "/../") || strstr(file, "/./") ||
	    snprintf(dir, sizeof(dir), "%s", file) >= (int)sizeof(dir))
		return false;
	while ((slash = strrchr(dir, '/')) && slash != dir) {
		*slash = '\0';
		if (statfs(dir, &sfs) == 0)
			return sfs.f_type == TMPFS_MAGIC;
		if (errno != ENOENT)
			return false;
	}
	return false;
}

/*
 * Shared mappings are always written back (CRIU restores the memory from
 * them); open files and FIFOs only if they are missing (an output file
 * that exists is the user's).
 */
int crs_tmpfs_put_back(const char *dir, char *err, size_t errlen)
{
	char from[4400], file[CRS_NAME_MAX], *c;
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t pre = strlen(TMPFS_PREFIX);
	int r = 0;

	if (!d)
		return 0;
	while (!r && (de = readdir(d))) {
		struct stat st;
		char kind;

		if (strncmp(de->d_name, TMPFS_PREFIX, pre) || strlen(de->d_name) < pre + 3 ||
		    de->d_name[pre + 1] != '-')
			continue;
		kind = de->d_name[pre];
		snprintf(file, sizeof(file), "%s", de->d_name + pre + 2);
		for (c = file; *c; c++)
			if (*c == ':')
				*c = '/';
		if (!safe_target(file)) {
			snprintf(err, errlen, "checkpoint file %s names %s, not a file on tmpfs",
				 de->d_name, file);
			r = -EPERM;
			break;
		}
		if (kind != 'm' && lstat(file, &st) == 0)
			continue;
		snprintf(from, sizeof(from), "%s/%s", dir, de->d_name);
		if (stat(from, &st))
			st.st_mode = 0600;
		r = put_back_one(from, file, kind, st.st_mode & 0777);
		if (r)
			snprintf(err, errlen, "cannot put back %s: %s", file, strerror(-r));
	}
	closedir(d);
	return r;
}

