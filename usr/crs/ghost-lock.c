// SPDX-License-Identifier: GPL-2.0
/* Restores that carry ghost files take turns on the host (ghost-lock.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "ghost-lock.h"

/* CRIU's images of a ghost file: ghost-file-ID.img. */
static bool has_ghosts(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *d;
	bool found = false;

	while (dp && !found && (d = readdir(dp)))
		found = !strncmp(d->d_name, "ghost-file-", 11);
	if (dp)
		closedir(dp);
	return found;
}

int crs_ghost_lock(const char *dir, int *fd, char *err, size_t errlen)
{
	struct timespec nap = { .tv_nsec = 50 * 1000 * 1000 };
	time_t deadline = time(NULL) + CRS_GHOST_LOCK_WAIT_S;
	struct stat st;
	int dfd, lfd;

	*fd = -1;
	if (!has_ghosts(dir))
		return 0;
	/*
	 * A host where the directory cannot be made (a read-only /run) has
	 * no turns: its restores go on as CRIU's alone would.
	 */
	if (mkdir(CRS_GHOST_LOCK_DIR, 0755) && errno != EEXIST)
		return 0;
	dfd = open(CRS_GHOST_LOCK_DIR, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	if (fstat(dfd, &st) || st.st_uid != 0 || (st.st_mode & 022)) {
		close(dfd);
		return crs_fail(err, errlen, -EPERM,
				"%s is not a directory only root writes: no restore with ghost files trusts it",
				CRS_GHOST_LOCK_DIR);
	}
	lfd = openat(dfd, CRS_GHOST_LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dfd);
	if (lfd < 0)
		return crs_fail(err, errlen, -errno, "cannot open %s/%s: %s", CRS_GHOST_LOCK_DIR,
				CRS_GHOST_LOCK_FILE, strerror(errno));
	/*
	 * A record lock, the process's own: the children a restore forks
	 * (the lineage keeper outlives the restore) do not inherit it, as
	 * they would share a flock().
	 */
	while (fcntl(lfd, F_SETLK, &(struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET })) {
		if (errno != EAGAIN && errno != EACCES && errno != EINTR) {
			int e = errno;

			close(lfd);
			return crs_fail(err, errlen, -e, "cannot lock %s/%s: %s",
					CRS_GHOST_LOCK_DIR, CRS_GHOST_LOCK_FILE, strerror(e));
		}
		if (time(NULL) >= deadline) {
			close(lfd);
			return crs_fail(err, errlen, -ETIMEDOUT,
					"another restore with ghost files on this host has not let go in %d s",
					CRS_GHOST_LOCK_WAIT_S);
		}
		nanosleep(&nap, NULL);
	}
	*fd = lfd;
	return 0;
}

void crs_ghost_unlock(int *fd)
{
	if (*fd < 0)
		return;
	close(*fd);	/* the lock goes with the file */
	*fd = -1;
}
