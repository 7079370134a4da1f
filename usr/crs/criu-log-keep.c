// SPDX-License-Identifier: GPL-2.0
/*
 * A failed restore's CRIU log kept in the store (criu.h): the work
 * directory it was written in is under $TMPDIR on the node that ran the
 * restore, gone with the next clean-up and, for a job's part, on a node
 * the user is not on. The store's CRS_CRIU_LOG_DIR is a dot directory:
 * never a checkpoint, and the checkpoint's own directory stays exactly
 * what its metadata seals.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "criu.h"

/* Copy from into to (created, 0600); 0 or -errno. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out, r = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			r = -EIO;
			break;
		}
	if (n < 0)
		r = -errno;
	if (close(out) && !r)
		r = -errno;
	close(in);
	if (r)
		unlink(to);
	return r;
}

/* s with its first "old" replaced by "new", in place (cut to len). */
static void replace_once(char *s, size_t len, const char *old, const char *new)
{
	char *p = strstr(s, old), tail[1024];

	if (!p)
		return;
	snprintf(tail, sizeof(tail), "%s", p + strlen(old));
	snprintf(p, len - (size_t)(p - s), "%s%s", new, tail);
}

void crs_criu_keep_restore_log(const char *root, const char *handle, const char *work,
			       char *err, size_t errlen)
{
	char from[PATH_MAX], dir[PATH_MAX], to[PATH_MAX];
	size_t l;

	if (!root[0] || !handle[0] || !work[0] ||
	    snprintf(from, sizeof(from), "%s/%s", work, CRS_CRIU_RESTORE_LOG) >= (int)sizeof(from) ||
	    snprintf(dir, sizeof(dir), "%s/%s", root, CRS_CRIU_LOG_DIR) >= (int)sizeof(dir) ||
	    snprintf(to, sizeof(to), "%s/%s.%s", dir, handle, CRS_CRIU_RESTORE_LOG) >=
		    (int)sizeof(to) ||
	    (mkdir(dir, 0700) && errno != EEXIST) || copy_file(from, to))
		return;
	replace_once(err, errlen, from, to);
	l = strlen(err);
	if (strstr(err, to))
		snprintf(err + l, errlen - l, "; the checkpoint is unchanged: restart it again once what CRIU names is gone (CRDBG_CRIU_VERBOSITY=4 logs every step)");
}
