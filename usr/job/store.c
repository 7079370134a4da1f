// SPDX-License-Identifier: GPL-2.0
/*
 * Job manifests in the store: <root>/.jobs/<handle>, written to a
 * temporary file, synced and renamed, so a manifest is whole or absent.
 * The directory starts with '.', so crs_store_list() never takes it for
 * a checkpoint.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <crdbg/job.h>
#include "error.h"
#include "fdio.h"
#include "store.h"

static int job_path(const char *root, const char *handle, char *out, size_t len)
{
	if (!crs_handle_valid(handle))
		return -EINVAL;
	if (snprintf(out, len, "%s/" CRS_JOB_DIR "/%s", root, handle) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

bool crs_job_exists(const char *root, const char *handle)
{
	char path[PATH_MAX];
	struct stat st;

	return !job_path(root, handle, path, sizeof(path)) && !lstat(path, &st) &&
	       S_ISREG(st.st_mode);
}

int crs_job_store_check(const char *root, char *err, size_t errlen)
{
	struct stat st, node;

	if (!geteuid())
		return 0;
	if (stat(root, &st))
		return crs_fail(err, errlen, -errno,
				"a job checkpoint of yours needs a store of your own: %s: %s", root,
				strerror(errno));
	if (!stat(CRS_STORE_DEFAULT, &node) && st.st_dev == node.st_dev && st.st_ino == node.st_ino)
		return crs_fail(err, errlen, -EPERM,
				"a job checkpoint of yours needs a store of your own on every node its parts are on: --store DIR or CRDBG_STORE=DIR, not the node's %s",
				CRS_STORE_DEFAULT);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return crs_fail(err, errlen, -EPERM,
				"store %s is not a directory of yours that only you may write", root);
	return 0;
}

/* Write the manifest as dir/.tmp-NAME, sync, rename to dir/NAME. */
static int write_manifest(const char *dir, const char *name, const char *buf, size_t len)
{
	char tmp[PATH_MAX], final[PATH_MAX];
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%s/.tmp-%s", dir, name) >= (int)sizeof(tmp) ||
	    snprintf(final, sizeof(final), "%s/%s", dir, name) >= (int)sizeof(final))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = crs_write_all(fd, buf, len);
	if (!r && fsync(fd))
		r = -errno;
	if (close(fd) && !r)
		r = -errno;
	if (!r && link(tmp, final))	/* never replaces another job's manifest */
		r = -errno;
	unlink(tmp);
	if (!r) {
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			fsync(fd);
			close(fd);
		}
	}
	return r;
}

int crs_job_save(const char *root, struct crs_job *j, char *err, size_t errlen)
{
	char dir[PATH_MAX], stamp[32];
	size_t len;
	char *buf;
	struct tm tm;
	time_t now = time(NULL);
	int i, r;

	if (snprintf(dir, sizeof(dir), "%s/" CRS_JOB_DIR, root) >= (int)sizeof(dir))
		return crs_fail(err, errlen, -ENAMETOOLONG, "store path too long: %s", root);
	if ((mkdir(root, 0700) && errno != EEXIST) || (mkdir(dir, 0700) && errno != EEXIST))
		return crs_fail(err, errlen, -errno, "cannot create %s: %s", dir, strerror(errno));
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	j->time = now;
	for (i = 0; i < 1000; i++) {
		if (i)
			snprintf(j->handle, sizeof(j->handle), "job-%s-%d.%d", stamp, (int)getpid(), i);
		else
			snprintf(j->handle, sizeof(j->handle), "job-%s-%d", stamp, (int)getpid());
		r = crs_job_format(j, &buf, &len);
		if (r)
			return crs_fail(err, errlen, r, "cannot write the job manifest: %s",
					strerror(-r));
		r = write_manifest(dir, j->handle, buf, len);
		free(buf);
		if (r != -EEXIST)
			break;
	}
	if (r) {
		j->handle[0] = 0;
		return crs_fail(err, errlen, r, "cannot write the job manifest in %s: %s", dir,
				strerror(-r));
	}
	return 0;
}

int crs_job_load(const char *root, const char *handle, struct crs_job *j, char *err,
		 size_t errlen)
{
	char path[PATH_MAX], why[256];
	size_t len;
	char *buf;
	int r;

	crs_job_init(j);
	if (job_path(root, handle, path, sizeof(path)))
		return crs_fail(err, errlen, -EINVAL, "invalid job checkpoint handle \"%s\"", handle);
	r = crs_read_file(path, CRS_JOB_MAX_BYTES, &buf, &len);
	if (r == -ENOENT)
		return crs_fail(err, errlen, r, "unknown job checkpoint \"%s\" in %s, try \"crdbg list\"",
				handle, root);
	if (r)
		return crs_fail(err, errlen, r, "cannot read job manifest %s: %s", path, strerror(-r));
	r = crs_job_parse(buf, len, j, why, sizeof(why));
	free(buf);
	if (r)
		return crs_fail(err, errlen, r, "job checkpoint %s is corrupt: %s", handle, why);
	if (strcmp(j->handle, handle)) {
		crs_job_free(j);
		return crs_fail(err, errlen, -EBADMSG, "job checkpoint %s is corrupt: it names %s",
				handle, j->handle);
	}
	return 0;
}

int crs_job_remove_manifest(const char *root, const char *handle)
{
	char path[PATH_MAX];
	int r = job_path(root, handle, path, sizeof(path));

	if (r)
		return r;
	return unlink(path) ? -errno : 0;
}

int crs_job_list(const char *root, crs_job_list_fn fn, void *arg)
{
	char dir[PATH_MAX], why[256], **names;
	size_t nr, i;
	int r;

	snprintf(dir, sizeof(dir), "%s/" CRS_JOB_DIR, root);
	r = crs_store_names(dir, &names, &nr);
	if (r)
		return r;
	for (i = 0; i < nr; i++) {
		struct crs_job j;

		r = crs_job_load(root, names[i], &j, why, sizeof(why));
		fn(names[i], r ? NULL : &j, r ? why : NULL, arg);
		crs_job_free(&j);
		free(names[i]);
	}
	free(names);
	return 0;
}

struct owning_ctx {
	const char *part;
	char *job;
	size_t len;
};

static void owning_one(const char *handle, const struct crs_job *j, const char *problem,
		       void *arg)
{
	struct owning_ctx *c = arg;
	size_t i;

	(void)problem;
	for (i = 0; j && !c->job[0] && i < j->nr_parts; i++)
		if (!strcmp(j->parts[i].handle, c->part))
			snprintf(c->job, c->len, "%s", handle);
}

int crs_job_owning(const char *root, const char *part_handle, char *job, size_t len)
{
	struct owning_ctx c = { part_handle, job, len };

	job[0] = 0;
	return crs_job_list(root, owning_one, &c);
}
