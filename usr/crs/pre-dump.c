// SPDX-License-Identifier: GPL-2.0
/*
 * See pre-dump.h. The merge works per pagemap image of the dump (one per
 * process, one per shared memory segment). Each of its entries is either
 * in its own pages image or "in parent", i.e. in the pre-dump's. When the
 * dump has the very pages the pre-dump had (the tree mapped and unmapped
 * nothing between the two), the pre-dump's pages image is patched in
 * place with the pages written since and becomes the dump's: no page is
 * copied twice. Otherwise a new pages image is written in the dump's
 * order, each run of pages from whichever image holds it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "criu-pagemap.h"
#include "criu.h"
#include "error.h"
#include "fdio.h"
#include "pre-dump.h"
#include "proc.h"
#include "store.h"

#define COPY_BUF_BYTES	(1u << 20)

/* The kB of a "\nName:" line of /proc/PID/status, 0 without one. */
static unsigned long long status_kb(const char *status, const char *key)
{
	const char *line = strstr(status, key);
	unsigned long long kb;

	return line && sscanf(line + strlen(key), " %llu", &kb) == 1 ? kb : 0;
}

/* Anonymous and shared memory the process has resident, in bytes (0 if gone). */
static unsigned long long dumped_bytes(pid_t pid)
{
	char buf[4096];

	if (crs_proc_file(pid, "status", buf, sizeof(buf)) < 0)
		return 0;
	return (status_kb(buf, "\nRssAnon:") + status_kb(buf, "\nRssShmem:")) << 10;
}

static unsigned long long min_bytes(void)
{
	const char *env = getenv("CRDBG_PRE_DUMP_MIN_MB");
	char *end;
	unsigned long long mb;

	if (env && *env) {
		mb = strtoull(env, &end, 10);
		if (!*end)
			return mb << 20;
	}
	return (unsigned long long)CRS_PRE_DUMP_MIN_MB << 20;
}

bool crs_pre_dump_wanted(const struct crs_meta *m, bool continues, const char **why)
{
	unsigned long long bytes = 0;
	bool runs = false;
	size_t i;

	*why = NULL;
	if (!continues)
		*why = "the tree does not run on after the checkpoint";
	else if (m->debugger)
		*why = "a debugger holds the tree";
	else if (m->parent[0])
		*why = "the checkpoint is incremental";
	else if (!m->track_mem)
		*why = "the kernel does not track written pages";
	if (*why)
		return false;
	for (i = 0; i < m->nr_procs; i++) {
		if (m->procs[i].zombie || m->procs[i].stopped)
			continue;
		runs = true;
		bytes += dumped_bytes(m->procs[i].pid);
	}
	if (!runs)
		*why = "no process of the tree runs";
	else if (bytes < min_bytes())
		*why = "the tree holds too little memory for it to pay";
	return !*why;
}

int crs_pre_dump(pid_t pid, const char *dir, const struct crs_meta *m, char *err,
		 size_t errlen)
{
	char pre[PATH_MAX];
	int dfd, r;

	snprintf(pre, sizeof(pre), "%s/%s", dir, CRS_PRE_DUMP_DIR);
	if (mkdir(pre, 0700))
		return crs_fail(err, errlen, -errno, "cannot make %s: %s", pre, strerror(errno));
	r = crs_criu_pre_dump(pid, pre, m, CRS_PRE_DUMP_LOG, err, errlen);
	if (!r)
		return 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		crs_rmtree(dfd, CRS_PRE_DUMP_DIR);
		close(dfd);
	}
	return r;
}

/* Copy len bytes from in at ioff to out at ooff. */
static int copy_bytes(int in, uint64_t ioff, int out, uint64_t ooff, uint64_t len)
{
	char *buf = NULL;
	int r = 0;

	while (len && !r) {
		loff_t i = (loff_t)ioff, o = (loff_t)ooff;
		ssize_t n = copy_file_range(in, &i, out, &o, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
		    errno != EOPNOTSUPP) {
			r = -errno;
			break;
		}
		if (n <= 0) {
			/* no in-kernel copy between these files: through a buffer */
			size_t chunk = len < COPY_BUF_BYTES ? (size_t)len : COPY_BUF_BYTES;

			if (!buf && !(buf = malloc(COPY_BUF_BYTES))) {
				r = -ENOMEM;
				break;
			}
			r = crs_pread_all(in, buf, chunk, ioff);
			if (!r && pwrite(out, buf, chunk, (off_t)ooff) != (ssize_t)chunk)
				r = -EIO;
			n = (ssize_t)chunk;
		}
		ioff += (uint64_t)n;
		ooff += (uint64_t)n;
		len -= (uint64_t)n;
	}
	free(buf);
	return r;
}

/* One image's pagemap, its pages image open read-only or read-write. */
struct image {
	struct crs_pagemap pm;
	int pages;
	char pages_name[32];
};

static void image_close(struct image *im)
{
	crs_pagemap_free(&im->pm);
	if (im->pages >= 0)
		close(im->pages);
	im->pages = -1;
}

static int image_open(int dfd, const char *pagemap, int flags, struct image *im, char *err,
		      size_t errlen)
{
	int r = crs_pagemap_load(dfd, pagemap, &im->pm, err, errlen);
	struct stat st = { 0 };

	im->pages = -1;
	if (r)
		return r;
	snprintf(im->pages_name, sizeof(im->pages_name), "pages-%u.img", im->pm.pages_id);
	im->pages = openat(dfd, im->pages_name, flags | O_CLOEXEC | O_NOFOLLOW);
	if (im->pages < 0) {
		r = crs_fail(err, errlen, -errno, "cannot open %s: %s", im->pages_name,
			     strerror(errno));
	} else if (fstat(im->pages, &st) || (uint64_t)st.st_size != im->pm.bytes) {
		/* a short image would be patched or copied into a wrong one */
		r = crs_fail(err, errlen, -EBADMSG, "%s holds %lld bytes, its pagemap %llu",
			     im->pages_name, (long long)st.st_size,
			     (unsigned long long)im->pm.bytes);
	}
	if (r)
		image_close(im);
	return r;
}

static uint64_t total_pages(const struct crs_pagemap *pm)
{
	uint64_t n = 0;

	for (size_t k = 0; k < pm->nr; k++)
		n += pm->e[k].nr_pages;
	return n;
}

/*
 * Call fn for each run of the pre-dump's pages image that holds the
 * pages [vaddr, vaddr + len): the pre-dump's entry it is in, its offset
 * in the pages image, the run's vaddr and length (fn NULL: only look).
 * -EBADMSG when a page of the range is not in the pre-dump.
 */
typedef int run_fn(void *arg, const struct crs_pagemap_entry *p, uint64_t off, uint64_t vaddr,
		   uint64_t len);

static int pre_runs(const struct crs_pagemap *pre, uint64_t vaddr, uint64_t len, run_fn *fn,
		    void *arg)
{
	while (len) {
		const struct crs_pagemap_entry *p = crs_pagemap_find(pre, vaddr);
		uint64_t in, n;
		int r;

		if (!p || !(p->flags & CRS_PE_PRESENT))
			return -EBADMSG;
		in = vaddr - p->vaddr;
		n = (uint64_t)p->nr_pages * CRS_PAGE_SIZE - in;
		if (n > len)
			n = len;
		r = fn ? fn(arg, p, p->off + in, vaddr, n) : 0;
		if (r)
			return r;
		vaddr += n;
		len -= n;
	}
	return 0;
}

/* The dump's pages are the pre-dump's, run for run (nothing mapped or unmapped). */
static bool same_pages(const struct crs_pagemap *dump, const struct crs_pagemap *pre)
{
	if (total_pages(dump) != total_pages(pre))
		return false;
	for (size_t k = 0; k < dump->nr; k++) {
		const struct crs_pagemap_entry *e = &dump->e[k];

		if (pre_runs(pre, e->vaddr, (uint64_t)e->nr_pages * CRS_PAGE_SIZE, NULL, NULL))
			return false;
	}
	return true;
}

struct copy_to {
	int from, to;
	uint64_t from_off;	/* in place: where the next run is read */
	uint64_t to_off;	/* by copy: where the next run is written */
	struct crs_pagemap *pm;	/* by copy: the new pagemap */
	size_t cap;
};

/* In place: the dump's own run at vaddr goes where the pre-dump has it. */
static int patch_run(void *arg, const struct crs_pagemap_entry *p, uint64_t off,
		     uint64_t vaddr, uint64_t len)
{
	struct copy_to *c = arg;
	int r = copy_bytes(c->from, c->from_off, c->to, off, len);

	(void)p, (void)vaddr;
	c->from_off += len;
	return r;
}

/*
 * Add [vaddr, vaddr + len) to the new pagemap with flags (less "in
 * parent"). Runs are not joined: each stays within an entry CRIU wrote.
 */
static int add_entry(struct copy_to *c, uint64_t vaddr, uint64_t len, uint32_t flags)
{
	struct crs_pagemap *pm = c->pm;

	if (pm->nr == c->cap) {
		struct crs_pagemap_entry *n;

		c->cap = c->cap ? 2 * c->cap : 64;
		n = realloc(pm->e, c->cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		pm->e = n;
	}
	pm->e[pm->nr++] = (struct crs_pagemap_entry){
		.vaddr = vaddr, .nr_pages = (uint32_t)(len / CRS_PAGE_SIZE),
		.flags = (flags & ~CRS_PE_PARENT) | CRS_PE_PRESENT,
	};
	return 0;
}

/* By copy: the pre-dump's run at off, appended to the new pages image. */
static int append_run(void *arg, const struct crs_pagemap_entry *p, uint64_t off,
		      uint64_t vaddr, uint64_t len)
{
	struct copy_to *c = arg;
	int r = copy_bytes(c->from, off, c->to, c->to_off, len);

	c->to_off += len;
	return r ? r : add_entry(c, vaddr, len, p->flags);
}

/* Write pm as name in dfd, through a temporary name. */
static int replace_pagemap(int dfd, const char *name, const struct crs_pagemap *pm)
{
	char part[300];
	int fd, r;

	snprintf(part, sizeof(part), "%s.part", name);
	fd = openat(dfd, part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = crs_pagemap_write(fd, pm);
	if (close(fd) && !r)
		r = -errno;
	if (!r && renameat(dfd, part, dfd, name))
		r = -errno;
	if (r)
		unlinkat(dfd, part, 0);
	return r;
}

/*
 * The pre-dump's pages image, patched with the dump's own pages, becomes
 * the dump's pages image; the pagemap the pre-dump's, under the dump's
 * pages id.
 */
static int merge_in_place(int dfd, int pdfd, const char *name, struct image *dump,
			  struct image *pre)
{
	struct copy_to c = { .from = dump->pages, .to = pre->pages };
	struct crs_pagemap pm = pre->pm;
	int r = 0;

	for (size_t k = 0; k < dump->pm.nr && !r; k++) {
		const struct crs_pagemap_entry *e = &dump->pm.e[k];

		if (!(e->flags & CRS_PE_PRESENT))
			continue;
		c.from_off = e->off;
		r = pre_runs(&pre->pm, e->vaddr, (uint64_t)e->nr_pages * CRS_PAGE_SIZE, patch_run,
			     &c);
	}
	if (r)
		return r;
	pm.pages_id = dump->pm.pages_id;
	if (renameat(pdfd, pre->pages_name, dfd, dump->pages_name))
		return -errno;
	return replace_pagemap(dfd, name, &pm);
}

/* A new pages image in the dump's order, each run from whichever image has it. */
static int merge_by_copy(int dfd, const char *name, struct image *dump, struct image *pre)
{
	struct crs_pagemap pm = { .pages_id = dump->pm.pages_id };
	struct copy_to c = { .from = pre->pages, .pm = &pm };
	char part[64];
	int r = 0;

	snprintf(part, sizeof(part), "%s.part", dump->pages_name);
	c.to = openat(dfd, part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (c.to < 0)
		return -errno;
	for (size_t k = 0; k < dump->pm.nr && !r; k++) {
		const struct crs_pagemap_entry *e = &dump->pm.e[k];
		uint64_t len = (uint64_t)e->nr_pages * CRS_PAGE_SIZE;

		if (e->flags & CRS_PE_PRESENT) {
			r = copy_bytes(dump->pages, e->off, c.to, c.to_off, len);
			c.to_off += len;
			if (!r)
				r = add_entry(&c, e->vaddr, len, e->flags);
		} else {
			r = pre_runs(&pre->pm, e->vaddr, len, append_run, &c);
		}
	}
	if (close(c.to) && !r)
		r = -errno;
	if (!r && renameat(dfd, part, dfd, dump->pages_name))
		r = -errno;
	if (r)
		unlinkat(dfd, part, 0);
	else
		r = replace_pagemap(dfd, name, &pm);
	crs_pagemap_free(&pm);
	return r;
}

static int merge_pagemap(int dfd, int pdfd, const char *name, struct crs_pre_dump_merged *how,
			 char *err, size_t errlen)
{
	struct image dump, pre;
	bool parent = false;
	int r;

	r = image_open(dfd, name, O_RDONLY, &dump, err, errlen);
	if (r)
		return r;
	for (size_t k = 0; k < dump.pm.nr; k++) {
		uint32_t f = dump.pm.e[k].flags;

		if ((f & CRS_PE_PARENT) && !(f & CRS_PE_PRESENT))
			parent = true;
		else if (!(f & CRS_PE_PRESENT)) {
			image_close(&dump);
			return crs_fail(err, errlen, -EBADMSG,
					"%s: an entry neither present nor in the pre-dump", name);
		}
	}
	if (!parent) {
		image_close(&dump);
		return 0;	/* dumped in full (a process the pre-dump did not see) */
	}
	r = image_open(pdfd, name, O_RDWR, &pre, err, errlen);
	if (r) {
		image_close(&dump);
		if (r == -ENOENT)
			return crs_fail(err, errlen, r,
					"the dump takes pages from a pre-dump of %s it does not have", name);
		return r;
	}
	for (size_t k = 0; k < pre.pm.nr && !r; k++)
		if ((pre.pm.e[k].flags & CRS_PE_PARENT) || !(pre.pm.e[k].flags & CRS_PE_PRESENT))
			r = -EBADMSG;
	if (!r && same_pages(&dump.pm, &pre.pm)) {
		r = merge_in_place(dfd, pdfd, name, &dump, &pre);
		how->in_place++;
	} else if (!r) {
		r = merge_by_copy(dfd, name, &dump, &pre);
		how->copied++;
	}
	image_close(&dump);
	image_close(&pre);
	if (r == -EBADMSG)
		return crs_fail(err, errlen, r, "%s: pages in the pre-dump's images it does not hold",
				name);
	if (r)
		return crs_fail(err, errlen, r, "cannot merge the pre-dump's pages of %s: %s", name,
				strerror(-r));
	return 0;
}

/* CRIU's pagemap images: pagemap-<pid>.img, pagemap-shmem-<id>.img. */
static int is_pagemap(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return !strncmp(d->d_name, "pagemap-", 8) && n > 12 && !strcmp(d->d_name + n - 4, ".img");
}

int crs_pre_dump_merge(const char *dir, struct crs_pre_dump_merged *how, char *err,
		       size_t errlen)
{
	struct dirent **names = NULL;
	int dfd, pdfd, nr, k, r = 0;

	memset(how, 0, sizeof(*how));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return crs_fail(err, errlen, -errno, "cannot open %s: %s", dir, strerror(errno));
	pdfd = openat(dfd, CRS_PRE_DUMP_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	/* the names first: the merge renames files into the directory */
	nr = pdfd < 0 ? -1 : scandir(dir, &names, is_pagemap, alphasort);
	if (nr < 0) {
		r = crs_fail(err, errlen, -errno, "cannot read the pre-dump in %s: %s", dir,
			     strerror(errno));
		goto out;
	}
	for (k = 0; k < nr; k++) {
		if (!r)
			r = merge_pagemap(dfd, pdfd, names[k]->d_name, how, err, errlen);
		free(names[k]);
	}
	free(names);
	if (r)
		goto out;
	if (unlinkat(dfd, CRS_PARENT_LINK, 0) && errno != ENOENT) {
		r = crs_fail(err, errlen, -errno, "cannot remove the link to the pre-dump: %s",
			     strerror(errno));
		goto out;
	}
	renameat(pdfd, CRS_PRE_DUMP_LOG, dfd, CRS_PRE_DUMP_LOG);
	r = crs_rmtree(dfd, CRS_PRE_DUMP_DIR);
	if (r)
		r = crs_fail(err, errlen, r, "cannot remove the pre-dump: %s", strerror(-r));
out:
	if (pdfd >= 0)
		close(pdfd);
	close(dfd);
	return r;
}
