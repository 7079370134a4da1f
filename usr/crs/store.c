// SPDX-License-Identifier: GPL-2.0
/* The checkpoint store (see store.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "fdio.h"
#include "meta.h"
#include "sha256.h"
#include "store.h"
#include "xxh128.h"

#define TMP_PREFIX ".tmp-"

const char *crs_store_root(const char *explicit_root)
{
	const char *env = getenv("CRDBG_STORE");

	if (explicit_root && *explicit_root)
		return explicit_root;
	if (env && *env)
		return env;
	return CRS_STORE_DEFAULT;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	char *p;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

int crs_store_path(const char *root, const char *handle, char *out, size_t outlen)
{
	size_t rl = strlen(root), hl = strlen(handle);

	if (!crs_handle_valid(handle))
		return -EINVAL;
	if (rl + 1 + hl + 1 > outlen)
		return -ENAMETOOLONG;
	memcpy(out, root, rl);
	out[rl] = '/';
	memcpy(out + rl + 1, handle, hl + 1);
	return 0;
}

int crs_store_begin(const char *root, pid_t pid, struct crs_pending *ret, char *err,
		    size_t errlen)
{
	char stamp[32], final[PATH_MAX];
	struct tm tm;
	time_t now = time(NULL);
	int i, r;

	r = mkdir_p(root, 0700);
	if (r)
		return crs_fail(err, errlen, r, "cannot create store %s: %s", root, strerror(-r));
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	for (i = 0; i < 1000; i++) {
		snprintf(ret->root, sizeof(ret->root), "%s", root);
		if (i == 0)
			snprintf(ret->handle, sizeof(ret->handle), "%s-%d", stamp, (int)pid);
		else
			snprintf(ret->handle, sizeof(ret->handle), "%s-%d.%d", stamp, (int)pid, i);
		if (snprintf(ret->dir, sizeof(ret->dir), "%s/" TMP_PREFIX "%s", root,
			     ret->handle) >= (int)sizeof(ret->dir))
			return crs_fail(err, errlen, -ENAMETOOLONG, "store path too long: %s", root);
		crs_store_path(root, ret->handle, final, sizeof(final));
		if (access(final, F_OK) == 0)
			continue;
		if (mkdir(ret->dir, 0700) == 0)
			return 0;
		if (errno != EEXIST)
			return crs_fail(err, errlen, -errno, "cannot create %s: %s", ret->dir,
				    strerror(errno));
	}
	return crs_fail(err, errlen, -EEXIST, "no free checkpoint name in %s", root);
}

static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) && errno != EINVAL)
		r = -errno;
	close(fd);
	return r;
}

/*
 * New checkpoints record XXH3-128 digests (CRDBG_DIGEST=sha256 keeps the
 * old SHA-256, for comparison); verification uses what each file records.
 */
static enum crs_digest digest_for_new(void)
{
	const char *env = getenv("CRDBG_DIGEST");

	return env && !strcmp(env, "sha256") ? CRS_DIGEST_SHA256 : CRS_DIGEST_XXH128;
}

static int digest_file(int dfd, const char *name, enum crs_digest kind,
		       uint8_t out[CRS_FILE_DIGEST_LEN], uint64_t *size)
{
	memset(out, 0, CRS_FILE_DIGEST_LEN);
	if (kind == CRS_DIGEST_XXH128)
		return crs_xxh128_file(dfd, name, out, size);
	return crs_sha256_file(dfd, name, out, size);
}

/*
 * CRIU's link from an incremental checkpoint to its parent's images:
 * "parent", a symlink to "../<parent handle>" (so the store can move).
 * True when the entry named name in dfd is that link for m.
 */
static bool is_parent_link(int dfd, const char *name, const struct crs_meta *m)
{
	char want[CRS_HANDLE_MAX + 4], got[CRS_HANDLE_MAX + 4];
	ssize_t n;

	if (strcmp(name, CRS_PARENT_LINK) || !m->parent[0])
		return false;
	snprintf(want, sizeof(want), "../%s", m->parent);
	n = readlinkat(dfd, name, got, sizeof(got) - 1);
	if (n < 0)
		return false;
	got[n] = '\0';
	return !strcmp(got, want);
}

struct chunk_to_meta {
	struct crs_meta *m;
	const char *name;
};

static int add_chunk(void *arg, uint64_t off, uint64_t len, const uint8_t d[CRS_XXH128_LEN])
{
	struct chunk_to_meta *c = arg;
	struct crs_chunk ch = { .off = off, .len = len };

	snprintf(ch.name, sizeof(ch.name), "%s", c->name);
	memcpy(ch.digest, d, sizeof(ch.digest));
	return crs_meta_add_chunk(c->m, &ch);
}

/*
 * A new file's digest; a pages image's (XXH3-128) also chunk by chunk, in
 * the same pass, for a lazy restart to check as it serves them.
 */
static int digest_new_file(int dfd, const char *name, enum crs_digest kind, struct crs_meta *m,
			   struct crs_file *f)
{
	struct chunk_to_meta c = { m, name };

	if (kind != CRS_DIGEST_XXH128 || !crs_store_is_pages(name))
		return digest_file(dfd, name, kind, f->sha, &f->size);
	memset(f->sha, 0, sizeof(f->sha));
	return crs_xxh128_file_chunked(dfd, name, CRS_PAGE_CHUNK_BYTES, add_chunk, &c, f->sha,
				       &f->size);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(((const struct crs_file *)a)->name, ((const struct crs_file *)b)->name);
}

int crs_store_commit(struct crs_pending *p, struct crs_meta *m, char *err, size_t errlen)
{
	enum crs_digest kind = digest_for_new();
	char final[PATH_MAX];
	struct dirent *d;
	size_t len;
	char *buf;
	DIR *dir;
	int dfd, fd, r;

	dir = opendir(p->dir);
	if (!dir)
		return crs_fail(err, errlen, -errno, "cannot open %s: %s", p->dir, strerror(errno));
	dfd = dirfd(dir);
	while ((d = readdir(dir))) {
		struct crs_file f = { 0 };
		struct stat st;

		if (d->d_name[0] == '.' || !strcmp(d->d_name, CRS_META_NAME) ||
		    is_parent_link(dfd, d->d_name, m))
			continue;
		if (fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode)) {
			closedir(dir);
			return crs_fail(err, errlen, -EINVAL, "unexpected entry %s in %s", d->d_name,
				    p->dir);
		}
		if (strlen(d->d_name) >= sizeof(f.name)) {
			closedir(dir);
			return crs_fail(err, errlen, -ENAMETOOLONG, "image name too long: %s",
				    d->d_name);
		}
		strcpy(f.name, d->d_name);
		f.digest = kind;
		r = digest_new_file(dfd, d->d_name, kind, m, &f);
		if (!r)
			r = crs_meta_add_file(m, &f);
		if (r) {
			closedir(dir);
			return crs_fail(err, errlen, r, "cannot checksum %s/%s: %s", p->dir, d->d_name,
				    strerror(-r));
		}
	}
	closedir(dir);
	if (m->nr_files)
		qsort(m->files, m->nr_files, sizeof(m->files[0]), cmp_names);
	snprintf(m->handle, sizeof(m->handle), "%s", p->handle);

	r = crs_meta_format(m, &buf, &len);
	if (r)
		return crs_fail(err, errlen, r, "cannot format metadata: %s", strerror(-r));
	/* no symlink followed: root may be writing into a store its caller named */
	dfd = open(p->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		free(buf);
		return crs_fail(err, errlen, -errno, "cannot open %s: %s", p->dir, strerror(errno));
	}
	fd = openat(dfd, CRS_META_NAME ".part",
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
	} else {
		r = crs_write_all(fd, buf, len);
		if (!r && fsync(fd))
			r = -errno;
		if (close(fd) && !r)
			r = -errno;
	}
	free(buf);
	if (!r && renameat(dfd, CRS_META_NAME ".part", dfd, CRS_META_NAME))
		r = -errno;
	if (!r && fsync(dfd))
		r = -errno;
	close(dfd);
	if (r)
		return crs_fail(err, errlen, r, "cannot write metadata in %s: %s", p->dir,
			    strerror(-r));

	crs_store_path(p->root, p->handle, final, sizeof(final));
	if (rename(p->dir, final))
		return crs_fail(err, errlen, -errno, "cannot rename %s to %s: %s", p->dir, final,
			    strerror(errno));
	r = fsync_path(p->root);
	if (r)
		return crs_fail(err, errlen, r, "cannot sync %s: %s", p->root, strerror(-r));
	return 0;
}

int crs_rmtree(int dirfd, const char *name)
{
	struct dirent *d;
	DIR *dir;
	int fd, r = 0;

	if (unlinkat(dirfd, name, 0) == 0)
		return 0;
	if (errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		r = crs_rmtree(fd, d->d_name);
		if (r)
			break;
	}
	closedir(dir);
	if (!r && unlinkat(dirfd, name, AT_REMOVEDIR))
		r = -errno;
	return r;
}

void crs_store_abort(struct crs_pending *p)
{
	if (p && p->dir[0])
		crs_rmtree(AT_FDCWD, p->dir);
}

int crs_read_file(const char *path, size_t max, char **ret_buf, size_t *ret_len)
{
	size_t cap = 4096, len = 0;
	struct stat st;
	char *buf, *nb;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (len == cap) {
			if (cap > max) {	/* it grew while we read */
				close(fd);
				free(buf);
				return -EFBIG;
			}
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				close(fd);
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			free(buf);
			return (int)n;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

int crs_store_load(const char *root, const char *handle, struct crs_meta *m, char *err,
		   size_t errlen)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], why[256];
	struct stat st;
	size_t len = 0;
	char *buf = NULL;
	int r;

	crs_meta_init(m);
	if (crs_store_path(root, handle, dir, sizeof(dir)))
		return crs_fail(err, errlen, -EINVAL, "invalid checkpoint handle \"%s\"", handle);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return crs_fail(err, errlen, -ENOENT, "unknown checkpoint handle \"%s\" in %s, try \"crdbg list\"",
			    handle, root);
	snprintf(path, sizeof(path), "%s/" CRS_META_NAME, dir);
	r = crs_read_file(path, CRS_META_MAX_BYTES, &buf, &len);
	if (r)
		return crs_fail(err, errlen, r == -ENOENT ? -ENODATA : r,
			    "checkpoint %s is incomplete: cannot read its metadata: %s", handle,
			    strerror(-r));
	r = crs_meta_parse(buf, len, m, why, sizeof(why));
	free(buf);
	if (r)
		return crs_fail(err, errlen, r, "checkpoint %s is corrupt: %s", handle, why);
	if (strcmp(m->handle, handle)) {
		crs_meta_free(m);
		return crs_fail(err, errlen, -EBADMSG, "checkpoint %s is corrupt: metadata names %s",
			    handle, m->handle);
	}
	return 0;
}

bool crs_store_is_pages(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, "pages-", 6) && n > 10 && !strcmp(name + n - 4, ".img");
}

/* Whether part reads the digest of file name. */
static bool part_digests(enum crs_verify_part part, const char *name)
{
	switch (part) {
	case CRS_VERIFY_ALL:
		return true;
	case CRS_VERIFY_STRUCTURE:
		return !crs_store_is_pages(name);
	case CRS_VERIFY_PAGES:
		return crs_store_is_pages(name);
	default:
		return false;
	}
}

int crs_store_verify(const char *root, const char *handle, const struct crs_meta *m,
		     bool quick, char *err, size_t errlen)
{
	return crs_store_verify_part(root, handle, m, quick ? CRS_VERIFY_SIZES : CRS_VERIFY_ALL,
				     err, errlen);
}

int crs_store_verify_part(const char *root, const char *handle, const struct crs_meta *m,
			  enum crs_verify_part part, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	uint8_t sha[CRS_FILE_DIGEST_LEN];
	struct dirent *d;
	size_t i, seen = 0;
	DIR *dp;
	int dfd, r = 0;
	bool inventory = false, linked = false;

	if (crs_store_path(root, handle, dir, sizeof(dir)))
		return crs_fail(err, errlen, -EINVAL, "invalid checkpoint handle \"%s\"", handle);
	dp = opendir(dir);
	if (!dp)
		return crs_fail(err, errlen, -errno, "cannot open %s: %s", dir, strerror(errno));
	dfd = dirfd(dp);
	for (i = 0; i < m->nr_files && !r; i++) {
		const struct crs_file *f = &m->files[i];
		struct stat st;
		uint64_t size;

		if (!strcmp(f->name, "inventory.img"))
			inventory = true;
		if (fstatat(dfd, f->name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode)) {
			r = crs_fail(err, errlen, -ENODATA, "checkpoint %s is incomplete: %s is missing",
				 handle, f->name);
			break;
		}
		if ((uint64_t)st.st_size != f->size) {
			r = crs_fail(err, errlen, -EBADMSG,
				 "checkpoint %s is corrupt: %s has %lld bytes, expected %llu",
				 handle, f->name, (long long)st.st_size,
				 (unsigned long long)f->size);
			break;
		}
		if (!part_digests(part, f->name))
			continue;
		r = digest_file(dfd, f->name, f->digest, sha, &size);
		if (r) {
			r = crs_fail(err, errlen, r, "cannot read %s/%s: %s", dir, f->name,
				 strerror(-r));
			break;
		}
		if (size != f->size || memcmp(sha, f->sha, sizeof(sha))) {
			r = crs_fail(err, errlen, -EBADMSG,
				 "checkpoint %s is corrupt: checksum of %s does not match", handle,
				 f->name);
		}
	}
	while (!r && (d = readdir(dp))) {
		if (d->d_name[0] == '.' || !strcmp(d->d_name, CRS_META_NAME))
			continue;
		if (is_parent_link(dfd, d->d_name, m)) {
			linked = true;
			continue;
		}
		seen++;
	}
	closedir(dp);
	if (r)
		return r;
	if (!inventory)
		return crs_fail(err, errlen, -ENODATA,
			    "checkpoint %s is incomplete: no CRIU inventory.img", handle);
	if (m->parent[0] && !linked)
		return crs_fail(err, errlen, -ENODATA,
			    "checkpoint %s is incomplete: its link to its parent %s is missing or wrong",
			    handle, m->parent);
	if (seen != m->nr_files)
		return crs_fail(err, errlen, -EBADMSG,
			    "checkpoint %s is corrupt: %zu files on disk, %zu in its metadata",
			    handle, seen, m->nr_files);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int crs_store_names(const char *dir, char ***ret, size_t *ret_n)
{
	char **names = NULL, **nn;
	size_t nr = 0;
	struct dirent *d;
	DIR *dp;

	*ret = NULL;
	*ret_n = 0;
	dp = opendir(dir);
	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dp))) {
		if (!crs_handle_valid(d->d_name))
			continue;
		nn = realloc(names, (nr + 1) * sizeof(*names));
		if (!nn)
			break;
		names = nn;
		names[nr] = strdup(d->d_name);
		if (names[nr])
			nr++;
	}
	closedir(dp);
	if (nr)
		qsort(names, nr, sizeof(*names), cmp_str);
	*ret = names;
	*ret_n = nr;
	return 0;
}

int crs_store_list(const char *root, crs_store_list_fn fn, void *arg)
{
	char **names, why[512];
	size_t nr, i, j;
	int r = crs_store_names(root, &names, &nr);

	if (r)
		return r;
	for (i = 0; i < nr; i++) {
		struct crs_meta m;
		uint64_t bytes = 0;
		int r;

		r = crs_store_load(root, names[i], &m, why, sizeof(why));
		if (!r)
			r = crs_store_verify_chain(root, names[i], &m, true, why, sizeof(why));
		for (j = 0; !r && j < m.nr_files; j++)
			bytes += m.files[j].size;
		fn(names[i], r ? NULL : &m, bytes, r ? why : NULL, arg);
		crs_meta_free(&m);
		free(names[i]);
	}
	free(names);
	return 0;
}

int crs_store_remove(const char *root, const char *handle)
{
	char dir[PATH_MAX];
	struct stat st;
	int r;

	r = crs_store_path(root, handle, dir, sizeof(dir));
	if (r)
		return r;
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	r = crs_store_dependents(root, handle, NULL, 0);
	if (r)
		return r < 0 ? r : -EBUSY;
	return crs_rmtree(AT_FDCWD, dir);
}

void crs_store_remove_why(const char *root, const char *handle, int r, char *err,
			  size_t errlen)
{
	char deps[512];

	switch (r) {
	case -EBUSY:
		crs_store_dependents(root, handle, deps, sizeof(deps));
		snprintf(err, errlen,
			 "incremental checkpoints depend on %s (their pages are in it): %s; remove them first",
			 handle, deps);
		break;
	case -EINVAL:
		snprintf(err, errlen, "invalid checkpoint handle \"%s\"", handle);
		break;
	case -ENOENT:
		snprintf(err, errlen, "unknown checkpoint handle \"%s\" in %s, try \"crdbg list\"",
			 handle, root);
		break;
	default:
		snprintf(err, errlen, "cannot remove %s from %s: %s", handle, root, strerror(-r));
	}
}

int crs_store_meta_digest(const char *root, const char *handle, uint8_t sha[32], char *err,
			  size_t errlen)
{
	char path[PATH_MAX];
	size_t len;
	char *buf;
	int r;

	if (!crs_handle_valid(handle) ||
	    snprintf(path, sizeof(path), "%s/%s/" CRS_META_NAME, root, handle) >= (int)sizeof(path))
		return crs_fail(err, errlen, -EINVAL, "invalid checkpoint handle \"%s\"", handle);
	r = crs_read_file(path, CRS_META_MAX_BYTES, &buf, &len);
	if (r)
		return crs_fail(err, errlen, r, "cannot read the metadata of %s: %s", handle,
				strerror(-r));
	crs_sha256(buf, len, sha);
	free(buf);
	return 0;
}
