// SPDX-License-Identifier: GPL-2.0
/*
 * Incremental checkpoint chains: picking a parent and recording tracked
 * dumps (chain.h), verifying a chain and finding a checkpoint's
 * dependents (<crdbg/crs.h>).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chain.h"
#include "error.h"
#include "store.h"

#define PM_SOFT_DIRTY (1ull << 55)

bool crs_mem_tracking_supported(void)
{
	static int known = -1;
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t ent = 0;
	volatile char *page;
	int fd;

	if (known >= 0)
		return known;
	known = 0;
	page = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return false;
	page[0] = 1;	/* a freshly written page is soft-dirty where the kernel tracks */
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && pread(fd, &ent, sizeof(ent), (off_t)((uintptr_t)page / (uintptr_t)psz *
							      sizeof(ent))) == sizeof(ent))
		known = !!(ent & PM_SOFT_DIRTY);
	if (fd >= 0)
		close(fd);
	munmap((void *)page, (size_t)psz);
	return known;
}

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* "<boot id> <start time of pid in clock ticks>": who pid is, this boot. */
static int incarnation(pid_t pid, char *out, size_t len)
{
	char path[64], stat[1024], boot[64], *p;
	unsigned long long start;
	int i;

	read_line("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	read_line(path, stat, sizeof(stat));
	p = strrchr(stat, ')');
	if (!boot[0] || !p)
		return -ESRCH;
	/* starttime is field 22; the state after ')' is field 3 */
	for (i = 3; i < 22 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return -EBADMSG;
	snprintf(out, len, "%s %llu", boot, start);
	return 0;
}

static void tracking_path(const char *root, pid_t pid, char *out, size_t len)
{
	snprintf(out, len, "%s/" CRS_TRACKING_DIR "/%d", root, (int)pid);
}

/* The handle of pid's last tracked dump in this store, "" if none or another incarnation's. */
static void last_tracked(const char *root, pid_t pid, char *handle, size_t len)
{
	char path[PATH_MAX], line[256], me[128];
	size_t ml;

	handle[0] = '\0';
	tracking_path(root, pid, path, sizeof(path));
	read_line(path, line, sizeof(line));
	if (incarnation(pid, me, sizeof(me)))
		return;
	ml = strlen(me);
	if (!strncmp(line, me, ml) && line[ml] == ' ' && crs_handle_valid(line + ml + 1))
		snprintf(handle, len, "%s", line + ml + 1);
}

/* The one handle every live process of m last had a tracked dump in, or "". */
static void common_parent(const char *root, const struct crs_meta *m, char *out, size_t len)
{
	char h[CRS_HANDLE_MAX];
	size_t i;

	out[0] = '\0';
	last_tracked(root, m->root, out, len);
	for (i = 0; out[0] && i < m->nr_procs; i++) {
		if (m->procs[i].zombie)
			continue;
		last_tracked(root, m->procs[i].pid, h, sizeof(h));
		/* A process born since has no record: all its pages are new. */
		if (h[0] && strcmp(h, out))
			out[0] = '\0';
	}
}

void crs_chain_begin(const char *root, struct crs_meta *m, bool full, FILE *log)
{
	char parent[CRS_HANDLE_MAX], path[PATH_MAX], why[512];
	struct crs_meta pm;
	size_t i;

	m->parent[0] = '\0';
	m->track_mem = crs_mem_tracking_supported();
	if (!m->track_mem)
		return;
	common_parent(root, m, parent, sizeof(parent));
	if (parent[0] && !full) {
		if (crs_store_load(root, parent, &pm, why, sizeof(why)) == 0) {
			if (pm.track_mem &&
			    crs_store_verify_chain(root, parent, &pm, true, why, sizeof(why)) == 0)
				snprintf(m->parent, sizeof(m->parent), "%s", parent);
			else if (log)
				fprintf(log, "crdbg: a full checkpoint: the last one, %s, cannot be a parent: %s\n",
					parent, why);
			crs_meta_free(&pm);
		}
	}
	/* CRIU is about to reset every process's tracking: forget the old dump. */
	for (i = 0; i < m->nr_procs; i++) {
		tracking_path(root, m->procs[i].pid, path, sizeof(path));
		unlink(path);
	}
}

static void prune_tracking(const char *root)
{
	char dir[PATH_MAX], path[PATH_MAX + 300], line[256], me[128];
	struct dirent *d;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/" CRS_TRACKING_DIR, root);
	dp = opendir(dir);
	if (!dp)
		return;
	while ((d = readdir(dp))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		if (d->d_name[0] == '.' || *end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		read_line(path, line, sizeof(line));
		if (incarnation((pid_t)pid, me, sizeof(me)) || strncmp(line, me, strlen(me)))
			unlink(path);	/* that process is gone */
	}
	closedir(dp);
}

void crs_chain_commit(const char *root, const struct crs_meta *m)
{
	char dir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX + 8], me[128];
	size_t i;
	FILE *f;

	if (!m->track_mem)
		return;
	snprintf(dir, sizeof(dir), "%s/" CRS_TRACKING_DIR, root);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return;
	prune_tracking(root);
	for (i = 0; i < m->nr_procs; i++) {
		if (m->procs[i].zombie || incarnation(m->procs[i].pid, me, sizeof(me)))
			continue;
		tracking_path(root, m->procs[i].pid, path, sizeof(path));
		snprintf(tmp, sizeof(tmp), "%s.part", path);
		f = fopen(tmp, "we");
		if (!f)
			continue;
		fprintf(f, "%s %s\n", me, m->handle);
		if (fclose(f) == 0)
			rename(tmp, path);
		else
			unlink(tmp);
	}
}

int crs_store_verify_chain(const char *root, const char *handle, const struct crs_meta *m,
			   bool quick, char *err, size_t errlen)
{
	return crs_store_verify_chain_part(root, handle, m,
					   quick ? CRS_VERIFY_SIZES : CRS_VERIFY_ALL, err, errlen);
}

int crs_store_verify_chain_part(const char *root, const char *handle, const struct crs_meta *m,
				enum crs_verify_part part, char *err, size_t errlen)
{
	char child[CRS_HANDLE_MAX], parent[CRS_HANDLE_MAX], why[768];
	struct crs_meta pm;
	int r, depth;

	r = crs_store_verify_part(root, handle, m, part, err, errlen);
	if (r)
		return r;
	snprintf(child, sizeof(child), "%s", handle);
	snprintf(parent, sizeof(parent), "%s", m->parent);
	for (depth = 0; parent[0]; depth++) {
		if (depth >= CRS_CHAIN_MAX || !strcmp(parent, handle))
			return crs_fail(err, errlen, -ELOOP,
				    "incremental chain of %s is broken: it loops or is longer than %d",
				    handle, CRS_CHAIN_MAX);
		r = crs_store_load(root, parent, &pm, why, sizeof(why));
		if (r == -ENOENT)
			return crs_fail(err, errlen, -ENODATA,
				    "incremental chain of %s is broken: %s needs its parent %s, which is missing",
				    handle, child, parent);
		if (!r)
			r = crs_store_verify_part(root, parent, &pm, part, why, sizeof(why));
		if (r) {
			crs_meta_free(&pm);
			return crs_fail(err, errlen, r, "incremental chain of %s is broken: %s", handle,
				    why);
		}
		snprintf(child, sizeof(child), "%s", parent);
		snprintf(parent, sizeof(parent), "%s", pm.parent);
		crs_meta_free(&pm);
	}
	return 0;
}

int crs_store_dependents(const char *root, const char *handle, char *out, size_t outlen)
{
	struct dirent *d;
	size_t len = 0;
	int nr = 0;
	DIR *dp;

	if (out && outlen)
		out[0] = '\0';
	dp = opendir(root);
	if (!dp)
		return errno == ENOENT ? 0 : -errno;
	while ((d = readdir(dp))) {
		struct crs_meta m;

		if (!crs_handle_valid(d->d_name) || !strcmp(d->d_name, handle))
			continue;
		if (crs_store_load(root, d->d_name, &m, NULL, 0))
			continue;
		if (!strcmp(m.parent, handle)) {
			if (out && len < outlen)
				len += (size_t)snprintf(out + len, outlen - len, "%s%s", nr ? ", " : "",
							d->d_name);
			nr++;
		}
		crs_meta_free(&m);
	}
	closedir(dp);
	return nr;
}
