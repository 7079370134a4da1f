// SPDX-License-Identifier: GPL-2.0
/*
 * The files a tree writes, kept with its checkpoint and put back at
 * restart (wfiles.h). A file is the program's when a process of the tree
 * holds it open for writing at the freeze. Root reads it through
 * /proc/PID/fd (the open file itself, no path followed) and, at restart,
 * opens its recorded path with no symlink followed anywhere on it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "store.h"
#include "tmpfs.h"
#include "wfiles.h"

#define COPY_BUF	(1u << 20)

/* What a restart does to put one file back. */
enum wfile_action {
	WF_KEEP,	/* as at the checkpoint */
	WF_TRUNCATE,	/* only appended to: the tail is cut, kept aside */
	WF_REWRITE,	/* changed in place: kept aside whole, the copy written back */
	WF_RECREATE,	/* gone: made again from the copy */
	WF_REPLACE,	/* another file at its path: moved aside, made again */
};

/*
 * Root restarting a user's checkpoint (crdbgd) reaches the program's
 * paths with the owner's file-system ids: the paths are the user's to
 * change, so no directory of theirs may make root write, rename or
 * create where they could not. The fds it then holds are used as root
 * (the copies in the store are root's, and fchown needs it).
 */
static struct {
	bool on;
	uid_t uid;
	gid_t gid;
} as_owner;

static void as_owner_set(const struct crs_meta *m)
{
	as_owner.on = m && m->has_owner && m->owner_uid && !geteuid();
	if (!as_owner.on)
		return;
	as_owner.uid = m->owner_uid;
	as_owner.gid = m->owner_gid;
}

static void as_owner_enter(void)
{
	if (as_owner.on) {
		setfsgid(as_owner.gid);	/* while fsuid 0 still has CAP_SETGID's file rights */
		setfsuid(as_owner.uid);
	}
}

static void as_owner_leave(void)
{
	int e = errno;

	if (as_owner.on) {
		setfsuid(0);
		setfsgid(0);
	}
	errno = e;
}

static int open_path(const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	as_owner_enter();
	fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	as_owner_leave();
	return fd < 0 ? -errno : (int)fd;
}

/* Copy len bytes of in from off to out at its offset out_off. 0 or -errno. */
static int copy_range(int in, off_t off, int out, off_t out_off, uint64_t len, char *buf)
{
	while (len) {
		size_t want = len < COPY_BUF ? len : COPY_BUF;
		ssize_t n = pread(in, buf, want, off), w;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;	/* shorter than recorded */
		for (ssize_t done = 0; done < n; done += w) {
			w = pwrite(out, buf + done, n - done, out_off + done);
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0)
				return -errno;
		}
		off += n;
		out_off += n;
		len -= n;
	}
	return 0;
}

/* ---- at checkpoint ---- */

struct recording {
	const char *dir;
	const char *store;
	FILE *out;		/* the record being written */
	FILE *log;
	char *buf;
	unsigned int nr;
	uint64_t *devino;	/* 2 per file: seen already */
};

static bool seen(const struct recording *rc, const struct stat *st)
{
	for (unsigned int i = 0; i < rc->nr; i++)
		if (rc->devino[2 * i] == st->st_dev && rc->devino[2 * i + 1] == st->st_ino)
			return true;
	return false;
}

/* The fd's open flags (fdinfo's "flags:", octal), or -1. */
static int fd_flags(pid_t pid, int fd)
{
	char path[64], line[128];
	unsigned int flags;
	int r = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "flags: %o", &flags) == 1) {
			r = (int)flags;
			break;
		}
	fclose(f);
	return r;
}

/*
 * Files of the kernel's and of shared memory (/dev/shm: an MPI library's
 * segments, CRIU's to restore) are not the program's output.
 */
static bool system_path(const char *path)
{
	return !strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6) ||
	       !strncmp(path, "/sys/", 5);
}

/* Is path the store's (its images are not the program's files)? */
static bool under(const char *path, const char *root)
{
	size_t n = strlen(root);

	return root[0] && !strncmp(path, root, n) && (path[n] == '/' || !path[n]);
}

/* The copy of the open file fd (st its stat) as wfile-<index> of the checkpoint. */
static int copy_in(struct recording *rc, int fd, const struct stat *st, unsigned int index)
{
	char name[PATH_MAX + 32];
	int out, r;

	snprintf(name, sizeof(name), "%s/" CRS_WFILE_COPY_PREFIX "%u", rc->dir, index);
	out = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	r = copy_range(fd, 0, out, 0, st->st_size, rc->buf);
	if (close(out) && !r)
		r = -errno;
	return r;
}

static int record_fd(struct recording *rc, pid_t pid, int fd, char *err, size_t errlen)
{
	char proc[64], path[PATH_MAX];
	struct crs_wfile w = { 0 };
	struct stat st;
	ssize_t n;
	int flags, f, r;
	uint64_t *di;

	snprintf(proc, sizeof(proc), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(proc, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	flags = fd_flags(pid, fd);
	/* a deleted file is CRIU's (a ghost file); a path no record holds is left alone */
	if (path[0] != '/' || strchr(path, '\n') || (n > 10 && !strcmp(path + n - 10, " (deleted)")) ||
	    flags < 0 || (flags & O_ACCMODE) == O_RDONLY || under(path, rc->store) ||
	    system_path(path))
		return 0;
	f = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (f < 0)
		return 0;	/* closed meanwhile, or not ours to read */
	if (fstat(f, &st) || !S_ISREG(st.st_mode) || seen(rc, &st)) {
		close(f);
		return 0;
	}
	if (rc->nr >= CRS_WFILES_MAX) {
		close(f);
		return crs_fail(err, errlen, -E2BIG,
				"the tree writes more than %d files: crdbg keeps at most that many",
				CRS_WFILES_MAX);
	}
	di = realloc(rc->devino, 2 * (rc->nr + 1) * sizeof(*di));
	if (!di) {
		close(f);
		return crs_fail(err, errlen, -ENOMEM, "out of memory");
	}
	rc->devino = di;
	di[2 * rc->nr] = st.st_dev;
	di[2 * rc->nr + 1] = st.st_ino;
	w = (struct crs_wfile){
		.index = rc->nr, .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
		.mtime_s = st.st_mtim.tv_sec, .mtime_ns = st.st_mtim.tv_nsec,
		.mode = st.st_mode & 07777, .uid = st.st_uid, .gid = st.st_gid,
		.copied = (uint64_t)st.st_size <= CRS_WFILE_COPY_MAX,
	};
	memcpy(w.path, path, n + 1);
	r = w.copied ? copy_in(rc, f, &st, w.index) : 0;
	close(f);
	if (r)
		return crs_fail(err, errlen, r, "cannot copy %s into the checkpoint: %s", path,
				strerror(-r));
	rc->nr++;
	crs_wfiles_format_one(rc->out, &w);
	if (rc->log)
		fprintf(rc->log, "crdbg: checkpoint: %s (%" PRIu64 " bytes) %s\n", path, w.size,
			w.copied ? "copied" : "recorded, not copied: over the cap");
	return 0;
}

static int record_process(struct recording *rc, pid_t pid, char *err, size_t errlen)
{
	char path[64];
	struct dirent *d;
	DIR *dp;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dp = opendir(path);
	if (!dp)
		return 0;	/* exited */
	while (!r && (d = readdir(dp))) {
		char *end;
		long fd = strtol(d->d_name, &end, 10);

		if (d->d_name[0] != '.' && !*end && fd >= 0 && fd <= INT_MAX)
			r = record_fd(rc, pid, (int)fd, err, errlen);
	}
	closedir(dp);
	return r;
}

int crs_wfiles_record(const struct crs_meta *m, const char *dir, const char *store_root,
		      FILE *log, char *err, size_t errlen)
{
	struct recording rc = { .dir = dir, .store = store_root ? store_root : "", .log = log };
	char path[PATH_MAX + 32];
	int r = 0;

	snprintf(path, sizeof(path), "%s/" CRS_WFILES_NAME, dir);
	rc.buf = malloc(COPY_BUF);
	rc.out = rc.buf ? fopen(path, "wxe") : NULL;
	if (!rc.out) {
		r = crs_fail(err, errlen, rc.buf ? -errno : -ENOMEM, "cannot write %s: %s", path,
			     strerror(rc.buf ? errno : ENOMEM));
		free(rc.buf);
		return r;
	}
	fprintf(rc.out, "crdbg-wfiles %d\n", CRS_WFILES_FORMAT);
	for (size_t i = 0; !r && i < m->nr_procs; i++)
		if (!m->procs[i].zombie)
			r = record_process(&rc, m->procs[i].pid, err, errlen);
	if ((fflush(rc.out) || fsync(fileno(rc.out))) && !r)
		r = crs_fail(err, errlen, -errno, "cannot write %s: %s", path, strerror(errno));
	fclose(rc.out);
	free(rc.devino);
	free(rc.buf);
	return r;
}

/* ---- at restart ---- */

static int load(const char *dir, struct crs_wfiles *w, char *err, size_t errlen)
{
	char path[PATH_MAX + 32], why[256];
	size_t len;
	char *buf;
	int r;

	snprintf(path, sizeof(path), "%s/" CRS_WFILES_NAME, dir);
	r = crs_read_file(path, (size_t)CRS_WFILES_MAX * (PATH_MAX + 128), &buf, &len);
	if (r == -ENOENT) {
		*w = (struct crs_wfiles){ 0 };	/* taken by an older crdbg: no files kept */
		return 0;
	}
	if (r)
		return crs_fail(err, errlen, r, "cannot read %s: %s", path, strerror(-r));
	r = crs_wfiles_parse(buf, len, w, why, sizeof(why));
	free(buf);
	return r ? crs_fail(err, errlen, r, "%s: %s", path, why) : 0;
}

static int open_copy(const char *dir, const struct crs_wfile *w)
{
	char path[PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/" CRS_WFILE_COPY_PREFIX "%u", dir, w->index);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

/* The first len bytes of a and b are the same: 1, 0, or -errno. */
static int same_bytes(int a, int b, uint64_t len, char *buf)
{
	char *bb = buf + COPY_BUF / 2;
	off_t off = 0;

	while (len) {
		size_t want = len < COPY_BUF / 2 ? len : COPY_BUF / 2;
		ssize_t x = pread(a, buf, want, off), y = pread(b, bb, want, off);

		if (x < 0 || y < 0)
			return -errno;
		if ((size_t)x != want || (size_t)y != want)
			return 0;
		if (memcmp(buf, bb, want))
			return 0;
		off += want;
		len -= want;
	}
	return 1;
}

static const char *type_name(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISLNK(m) ? "a symbolic link" :
	       S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "a device";
}

/* The directory of path still exists (a gone one is not crdbg's to make). */
static int dir_of(const char *path, char *ret, size_t len)
{
	char *slash;
	int fd;

	snprintf(ret, len, "%s", path);
	slash = strrchr(ret, '/');
	if (slash == ret)
		slash[1] = '\0';
	else
		*slash = '\0';
	fd = open_path(ret, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/*
 * A process's fd 0-2 led to path: when it is gone, crdbg restart's own fd
 * stands in (tree-stdio.h), rather than a file made again.
 */
static bool is_stdio(const struct crs_meta *m, const char *path)
{
	for (size_t i = 0; m && i < m->nr_stdio; i++)
		if (!strcmp(m->stdio[i].link, path))
			return true;
	return false;
}

/* What a restart must do for w, or an error naming what cannot be put back. */
static int decide(const char *dir, const char *handle, const struct crs_meta *m,
		  const struct crs_wfile *w, char *buf, enum wfile_action *ret, char *err,
		  size_t errlen)
{
	char parent[PATH_MAX];
	struct stat st;
	int fd, copy, r;

	fd = open_path(w->path, O_RDONLY | O_NONBLOCK, 0);
	if (fd == -ENOENT || fd == -ELOOP) {
		r = lstat(w->path, &st) ? -errno : 0;
		if (!r && !S_ISLNK(st.st_mode))
			r = -ENOTDIR;
		if (fd == -ELOOP && !r)
			return crs_fail(err, errlen, -EXDEV,
					"restart of %s refused, nothing was restored: %s is now a symbolic link; move it away to restart",
					handle, w->path);
		/* gone with its directory, a tmpfs file (an MPI session's) is tmpfs.h's */
		if (fd == -ENOENT && (is_stdio(m, w->path) || crs_tmpfs_kept(dir, w->path))) {
			*ret = WF_KEEP;
			return 0;
		}
		if (dir_of(w->path, parent, sizeof(parent)))
			return crs_fail(err, errlen, -EXDEV,
					"restart of %s refused, nothing was restored: the program's file %s cannot be put back: its directory %s is gone or not a plain directory",
					handle, w->path, parent);
		if (!w->copied)
			return crs_fail(err, errlen, -EXDEV,
					"restart of %s refused, nothing was restored: the program's file %s is gone and was over the %llu MiB cap: crdbg has no copy",
					handle, w->path, CRS_WFILE_COPY_MAX >> 20);
		*ret = WF_RECREATE;
		return 0;
	}
	if (fd < 0)
		return crs_fail(err, errlen, -EXDEV,
				"restart of %s refused, nothing was restored: cannot open the program's file %s: %s",
				handle, w->path, strerror(-fd));
	if (fstat(fd, &st)) {
		r = -errno;
		close(fd);
		return crs_fail(err, errlen, r, "cannot stat %s: %s", w->path, strerror(-r));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return crs_fail(err, errlen, -EXDEV,
				"restart of %s refused, nothing was restored: the program's file %s is now %s",
				handle, w->path, type_name(st.st_mode));
	}
	if (!w->copied) {
		close(fd);
		if (st.st_dev == w->dev && st.st_ino == w->ino && (uint64_t)st.st_size == w->size &&
		    st.st_mtim.tv_sec == w->mtime_s && st.st_mtim.tv_nsec == w->mtime_ns) {
			*ret = WF_KEEP;
			return 0;
		}
		return crs_fail(err, errlen, -EXDEV,
				"restart of %s refused, nothing was restored: the program's file %s changed since the checkpoint and was over the %llu MiB cap: crdbg has no copy to put back",
				handle, w->path, CRS_WFILE_COPY_MAX >> 20);
	}
	if (st.st_dev != w->dev || st.st_ino != w->ino) {
		close(fd);
		*ret = WF_REPLACE;
		return 0;
	}
	copy = open_copy(dir, w);
	if (copy < 0) {
		close(fd);
		return crs_fail(err, errlen, copy, "cannot open the copy of %s: %s", w->path,
				strerror(-copy));
	}
	r = (uint64_t)st.st_size < w->size ? 0 : same_bytes(fd, copy, w->size, buf);
	close(copy);
	close(fd);
	if (r < 0)
		return crs_fail(err, errlen, r, "cannot read %s: %s", w->path, strerror(-r));
	*ret = !r ? WF_REWRITE : (uint64_t)st.st_size == w->size ? WF_KEEP : WF_TRUNCATE;
	return 0;
}

static int check_all(const char *dir, const char *handle, const struct crs_meta *m,
		     const struct crs_wfiles *w, enum wfile_action *act, char *buf, char *err,
		     size_t errlen)
{
	for (size_t i = 0; i < w->nr; i++) {
		int r = decide(dir, handle, m, &w->f[i], buf, &act[i], err, errlen);

		if (r)
			return r;
	}
	return 0;
}


/*
 * A new file beside path for what is cut off: PATH.crdbg-after-HANDLE
 * (or .1, .2 ... when taken), owned as st. Its fd, the name in aside.
 */
static int make_aside(const char *path, const char *handle, const struct stat *st,
		      char *aside, size_t len)
{
	int fd = -EEXIST;

	for (int i = 0; i < 100 && fd == -EEXIST; i++) {
		if (i)
			snprintf(aside, len, "%s.crdbg-after-%s.%d", path, handle, i);
		else
			snprintf(aside, len, "%s.crdbg-after-%s", path, handle);
		fd = open_path(aside, O_WRONLY | O_CREAT | O_EXCL, st->st_mode & 0666);
	}
	if (fd >= 0 && geteuid() == 0 && fchown(fd, st->st_uid, st->st_gid)) {
		/* kept by root then: still not lost */
	}
	return fd;
}

/* The file's times as at the checkpoint. */
static void set_mtime(int fd, const struct crs_wfile *w)
{
	struct timespec t[2] = { { .tv_nsec = UTIME_OMIT },
				 { .tv_sec = w->mtime_s, .tv_nsec = w->mtime_ns } };

	futimens(fd, t);
}

/* The copy of w written over fd from 0, the file cut at its recorded size. */
static int write_back(const char *dir, const struct crs_wfile *w, int fd, char *buf)
{
	int copy = open_copy(dir, w), r;

	if (copy < 0)
		return copy;
	r = copy_range(copy, 0, fd, 0, w->size, buf);
	close(copy);
	if (!r && ftruncate(fd, w->size))
		r = -errno;
	if (!r)
		set_mtime(fd, w);
	return r;
}

static int recreate(const char *dir, const struct crs_wfile *w, char *buf)
{
	int fd = open_path(w->path, O_WRONLY | O_CREAT | O_EXCL, w->mode & 0777), r;

	if (fd < 0)
		return fd;
	if (geteuid() == 0 && fchown(fd, w->uid, w->gid)) {
		/* root's then, with the program's mode */
	}
	fchmod(fd, w->mode);
	r = write_back(dir, w, fd, buf);
	close(fd);
	return r;
}

/* Cut the tail (or, rewrite, all) of the file aside, then put the copy back. */
static int put_back(const char *dir, const char *handle, const struct crs_wfile *w,
		    bool rewrite, FILE *log, char *buf)
{
	char aside[PATH_MAX + 96];
	struct stat st;
	int fd, out, r;
	off_t from;

	fd = open_path(w->path, O_RDWR | O_NONBLOCK, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		r = -errno;
		goto out;
	}
	from = rewrite ? 0 : (off_t)w->size;
	out = make_aside(w->path, handle, &st, aside, sizeof(aside));
	if (out < 0) {
		r = out;
		goto out;
	}
	r = copy_range(fd, from, out, 0, st.st_size - from, buf);
	if (!r && fsync(out))
		r = -errno;
	close(out);
	if (r)
		goto out;
	r = rewrite ? write_back(dir, w, fd, buf) : ftruncate(fd, w->size) ? -errno : 0;
	if (!r && !rewrite)
		set_mtime(fd, w);
	if (!r && log)
		fprintf(log, "crdbg: restart: %s put back as at checkpoint %s; %s kept in %s\n",
			w->path, handle, rewrite ? "what it held since" : "what was appended since",
			aside);
out:
	close(fd);
	return r;
}

/* Another file took w's path: it is moved aside, w made again. */
static int replace(const char *dir, const char *handle, const struct crs_wfile *w, FILE *log,
		   char *buf)
{
	char aside[PATH_MAX + 96];
	struct stat st;
	int fd = open_path(w->path, O_RDONLY | O_NONBLOCK, 0), r;

	if (fd < 0)
		return fd;
	r = fstat(fd, &st) ? -errno : 0;
	close(fd);
	for (int i = 0; !r && i < 100; i++) {
		if (i)
			snprintf(aside, sizeof(aside), "%s.crdbg-after-%s.%d", w->path, handle, i);
		else
			snprintf(aside, sizeof(aside), "%s.crdbg-after-%s", w->path, handle);
		as_owner_enter();
		r = renameat2(AT_FDCWD, w->path, AT_FDCWD, aside, RENAME_NOREPLACE);
		as_owner_leave();
		if (!r)
			break;
		r = 0;
		if (errno != EEXIST)
			r = -errno;
	}
	if (!r)
		r = recreate(dir, w, buf);
	if (!r && log)
		fprintf(log, "crdbg: restart: %s put back as at checkpoint %s; the file that took its place is kept in %s\n",
			w->path, handle, aside);
	return r;
}

static int apply(const char *dir, const char *handle, const struct crs_wfile *w,
		 enum wfile_action act, FILE *log, char *buf)
{
	int r;

	switch (act) {
	case WF_TRUNCATE:
		return put_back(dir, handle, w, false, log, buf);
	case WF_REWRITE:
		return put_back(dir, handle, w, true, log, buf);
	case WF_RECREATE:
		r = recreate(dir, w, buf);
		if (!r && log)
			fprintf(log, "crdbg: restart: %s was gone: made again as at checkpoint %s\n",
				w->path, handle);
		return r;
	case WF_REPLACE:
		return replace(dir, handle, w, log, buf);
	default:
		return 0;
	}
}

/*
 * Every recorded file checked, then, for a restore, each put back: a
 * restore checks them again, since the program may have run on after
 * the check before the kill.
 */
static int check_then_apply(const char *dir, const char *handle, const struct crs_meta *m,
			    bool restore, FILE *log, char *err, size_t errlen)
{
	struct crs_wfiles w;
	enum wfile_action *act;
	char *buf;
	int r = load(dir, &w, err, errlen);

	as_owner_set(m);
	if (r || !w.nr)
		return r;
	act = calloc(w.nr, sizeof(*act));
	buf = malloc(COPY_BUF);
	r = act && buf ? check_all(dir, handle, m, &w, act, buf, err, errlen) :
			 crs_fail(err, errlen, -ENOMEM, "out of memory");
	for (size_t i = 0; restore && !r && i < w.nr; i++) {
		r = apply(dir, handle, &w.f[i], act[i], log, buf);
		if (r)
			r = crs_fail(err, errlen, r,
				     "restart of %s: cannot put the program's file %s back as at the checkpoint: %s",
				     handle, w.f[i].path, strerror(-r));
	}
	free(buf);
	free(act);
	crs_wfiles_free(&w);
	return r;
}

int crs_wfiles_check(const char *dir, const char *handle, const struct crs_meta *m, char *err,
		     size_t errlen)
{
	return check_then_apply(dir, handle, m, false, NULL, err, errlen);
}

int crs_wfiles_restore(const char *dir, const char *handle, const struct crs_meta *m,
		       FILE *log, char *err, size_t errlen)
{
	return check_then_apply(dir, handle, m, true, log, err, errlen);
}
