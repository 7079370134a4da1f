// SPDX-License-Identifier: GPL-2.0
/*
 * The merge of a pre-dump's pages into a checkpoint (usr/crs/pre-dump.c),
 * on CRIU images made here: a dump whose pages are the pre-dump's gets
 * the pre-dump's pages image patched in place with the pages written
 * since; a dump that mapped and unmapped memory since gets a new pages
 * image in its own order; either way every page reads back as the one
 * the tree had at the dump, the pre-dump and CRIU's parent link go, its
 * log stays. A dump that takes a page from the pre-dump the pre-dump
 * does not have, or a pages image shorter than its pagemap, is refused. (tests/crs/test_pre_dump.sh runs it with
 * CRIU on real processes.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "criu-pagemap.h"
#include "pre-dump.h"
#include "store.h"

#define PG CRS_PAGE_SIZE

struct run {
	uint64_t vaddr;
	uint32_t pages;
	uint32_t flags;
	char fill;		/* present runs: page k of the run is fill + k */
};

/* The byte a page of the tree holds: which image wrote it, and where. */
static char page_byte(char fill, uint32_t k)
{
	return (char)(fill + k);
}

/* pagemap-<name>.img with runs, and pages-<id>.img with their present pages, in dir. */
static int put_image(const char *dir, const char *name, uint32_t id, const struct run *runs,
		     size_t nr)
{
	struct crs_pagemap pm = { .pages_id = id, .nr = nr };
	char path[512], page[PG];
	int fd, pfd, r = 0;

	pm.e = calloc(nr, sizeof(*pm.e));
	snprintf(path, sizeof(path), "%s/pages-%u.img", dir, id);
	pfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (size_t i = 0; i < nr && pfd >= 0; i++) {
		pm.e[i].vaddr = runs[i].vaddr;
		pm.e[i].nr_pages = runs[i].pages;
		pm.e[i].flags = runs[i].flags;
		if (!(runs[i].flags & CRS_PE_PRESENT))
			continue;
		for (uint32_t k = 0; k < runs[i].pages; k++) {
			memset(page, page_byte(runs[i].fill, k), sizeof(page));
			if (write(pfd, page, sizeof(page)) != sizeof(page))
				r = -1;
		}
	}
	snprintf(path, sizeof(path), "%s/pagemap-%s.img", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || pfd < 0 || crs_pagemap_write(fd, &pm))
		r = -1;
	close(fd);
	close(pfd);
	free(pm.e);
	return r;
}

/* The byte every page of the checkpoint in dir holds at vaddr, or -1. */
static int byte_at(const char *dir, const char *name, uint64_t vaddr)
{
	const struct crs_pagemap_entry *e;
	struct crs_pagemap pm;
	char path[512], file[64], err[256], page[PG];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY), fd, b = -1;

	snprintf(file, sizeof(file), "pagemap-%s.img", name);
	if (crs_pagemap_load(dfd, file, &pm, err, sizeof(err))) {
		close(dfd);
		return -1;
	}
	close(dfd);
	e = crs_pagemap_find(&pm, vaddr);
	snprintf(path, sizeof(path), "%s/pages-%u.img", dir, pm.pages_id);
	fd = open(path, O_RDONLY);
	if (e && (e->flags & CRS_PE_PRESENT) && !(e->flags & CRS_PE_PARENT) && fd >= 0 &&
	    pread(fd, page, PG, e->off + (vaddr - e->vaddr)) == PG) {
		b = (unsigned char)page[0];
		for (size_t i = 1; i < PG; i++)
			if (page[i] != page[0])
				b = -1;
	}
	if (fd >= 0)
		close(fd);
	crs_pagemap_free(&pm);
	return b;
}

static bool exists(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

static ino_t inode(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) ? 0 : st.st_ino;
}

FIXTURE(merge) {
	char dir[64];
	char pre[128];
};

FIXTURE_SETUP(merge)
{
	char path[256];
	int fd;

	snprintf(self->dir, sizeof(self->dir), "/tmp/crdbg-pre-dump-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->pre, sizeof(self->pre), "%s/%s", self->dir, CRS_PRE_DUMP_DIR);
	ASSERT_EQ(0, mkdir(self->pre, 0700));
	/* as CRIU leaves them: the link to the parent, the pre-dump's log */
	snprintf(path, sizeof(path), "%s/%s", self->dir, CRS_PARENT_LINK);
	ASSERT_EQ(0, symlink(CRS_PRE_DUMP_DIR, path));
	snprintf(path, sizeof(path), "%s/%s", self->pre, CRS_PRE_DUMP_LOG);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	ASSERT_LE(0, fd);
	close(fd);
}

FIXTURE_TEARDOWN(merge)
{
	int fd = open("/tmp", O_RDONLY | O_DIRECTORY);

	crs_rmtree(fd, self->dir + 5);
	close(fd);
}

/* The pre-dump: 4 + 2 pages, the second run lazy (as CRIU marks anonymous memory). */
static const struct run pre_runs[] = {
	{ 0x10000, 4, CRS_PE_PRESENT, 'a' },
	{ 0x20000, 2, CRS_PE_LAZY | CRS_PE_PRESENT, 'p' },
};

TEST_F(merge, same_pages_patched_in_place)
{
	/* page 0x11000 and both of 0x20000's written since; the rest in parent */
	const struct run dump[] = {
		{ 0x10000, 1, CRS_PE_PARENT, 0 },
		{ 0x11000, 1, CRS_PE_PRESENT, 'X' },
		{ 0x12000, 2, CRS_PE_PARENT, 0 },
		{ 0x20000, 2, CRS_PE_LAZY | CRS_PE_PRESENT, 'Y' },
	};
	/* a process the pre-dump did not see: dumped in full, left alone */
	const struct run other[] = { { 0x40000, 1, CRS_PE_PRESENT, 'o' } };
	struct crs_pre_dump_merged how;
	char err[256];
	ino_t pre_pages;

	ASSERT_EQ(0, put_image(self->pre, "7", 1, pre_runs, 2));
	ASSERT_EQ(0, put_image(self->dir, "7", 3, dump, 4));
	ASSERT_EQ(0, put_image(self->dir, "8", 4, other, 1));
	pre_pages = inode(self->pre, "pages-1.img");

	ASSERT_EQ(0, crs_pre_dump_merge(self->dir, &how, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ('a', byte_at(self->dir, "7", 0x10000));
	EXPECT_EQ('X', byte_at(self->dir, "7", 0x11000));
	EXPECT_EQ('c', byte_at(self->dir, "7", 0x12000));
	EXPECT_EQ('d', byte_at(self->dir, "7", 0x13000));
	EXPECT_EQ('Y', byte_at(self->dir, "7", 0x20000));
	EXPECT_EQ('Z', byte_at(self->dir, "7", 0x21000));
	EXPECT_EQ(-1, byte_at(self->dir, "7", 0x14000));	/* no such page */
	EXPECT_EQ('o', byte_at(self->dir, "8", 0x40000));
	EXPECT_EQ(1u, how.in_place);
	EXPECT_EQ(0u, how.copied);
	/* the pre-dump's pages image became the dump's: no page copied twice */
	EXPECT_EQ(pre_pages, inode(self->dir, "pages-3.img"));
	EXPECT_FALSE(exists(self->dir, CRS_PRE_DUMP_DIR));
	EXPECT_FALSE(exists(self->dir, CRS_PARENT_LINK));
	EXPECT_TRUE(exists(self->dir, CRS_PRE_DUMP_LOG));
	EXPECT_FALSE(exists(self->dir, "pages-1.img"));
}

TEST_F(merge, mapped_and_unmapped_since_copied_in_order)
{
	/*
	 * 0x12000-0x13fff unmapped since, 0x20000 still there, 0x30000 new;
	 * a shared memory segment's pagemap is merged the same way.
	 */
	const struct run dump[] = {
		{ 0x10000, 1, CRS_PE_PRESENT, 'M' },
		{ 0x11000, 1, CRS_PE_PARENT, 0 },
		{ 0x20000, 2, CRS_PE_PARENT, 0 },
		{ 0x30000, 1, CRS_PE_PRESENT, 'N' },
	};
	const struct run shm_pre[] = { { 0x0, 3, CRS_PE_PRESENT, 's' } };
	const struct run shm[] = { { 0x0, 1, CRS_PE_PARENT, 0 }, { 0x1000, 2, CRS_PE_PRESENT, 'S' } };
	struct crs_pre_dump_merged how;
	struct crs_pagemap pm;
	char err[256];
	int dfd;

	ASSERT_EQ(0, put_image(self->pre, "7", 1, pre_runs, 2));
	ASSERT_EQ(0, put_image(self->dir, "7", 2, dump, 4));
	ASSERT_EQ(0, put_image(self->pre, "shmem-9", 5, shm_pre, 1));
	ASSERT_EQ(0, put_image(self->dir, "shmem-9", 6, shm, 2));

	ASSERT_EQ(0, crs_pre_dump_merge(self->dir, &how, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ('M', byte_at(self->dir, "7", 0x10000));
	EXPECT_EQ('b', byte_at(self->dir, "7", 0x11000));
	EXPECT_EQ(-1, byte_at(self->dir, "7", 0x12000));
	EXPECT_EQ('p', byte_at(self->dir, "7", 0x20000));
	EXPECT_EQ('q', byte_at(self->dir, "7", 0x21000));
	EXPECT_EQ('N', byte_at(self->dir, "7", 0x30000));
	EXPECT_EQ('s', byte_at(self->dir, "shmem-9", 0x0));
	EXPECT_EQ('S', byte_at(self->dir, "shmem-9", 0x1000));
	EXPECT_EQ('T', byte_at(self->dir, "shmem-9", 0x2000));
	EXPECT_EQ(1u, how.in_place);	/* the segment */
	EXPECT_EQ(1u, how.copied);	/* the process */
	/* every entry present, none in a parent; the lazy mark kept */
	dfd = open(self->dir, O_RDONLY | O_DIRECTORY);
	ASSERT_EQ(0, crs_pagemap_load(dfd, "pagemap-7.img", &pm, err, sizeof(err)));
	close(dfd);
	EXPECT_EQ(2u, pm.pages_id);
	EXPECT_EQ(5u * PG, pm.bytes);
	for (size_t i = 0; i < pm.nr; i++)
		EXPECT_EQ(0u, pm.e[i].flags & CRS_PE_PARENT);
	EXPECT_EQ(CRS_PE_LAZY | CRS_PE_PRESENT, crs_pagemap_find(&pm, 0x20000)->flags);
	crs_pagemap_free(&pm);
	EXPECT_FALSE(exists(self->dir, CRS_PRE_DUMP_DIR));
	EXPECT_FALSE(exists(self->dir, "pages-2.img.part"));
}

TEST_F(merge, page_the_pre_dump_lacks_refused)
{
	const struct run dump[] = {
		{ 0x10000, 4, CRS_PE_PARENT, 0 },
		{ 0x14000, 1, CRS_PE_PARENT, 0 },	/* never in the pre-dump */
	};
	struct crs_pre_dump_merged how;
	char err[256] = "";

	ASSERT_EQ(0, put_image(self->pre, "7", 1, pre_runs, 2));
	ASSERT_EQ(0, put_image(self->dir, "7", 2, dump, 2));
	EXPECT_EQ(-EBADMSG, crs_pre_dump_merge(self->dir, &how, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "pagemap-7.img")) TH_LOG("%s", err);
	EXPECT_EQ(NULL, strchr(err, '\n'));
}

TEST_F(merge, pre_dump_of_the_process_missing_refused)
{
	const struct run dump[] = { { 0x10000, 1, CRS_PE_PARENT, 0 } };
	struct crs_pre_dump_merged how;
	char err[256] = "";

	ASSERT_EQ(0, put_image(self->dir, "7", 2, dump, 1));
	EXPECT_GT(0, crs_pre_dump_merge(self->dir, &how, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "pagemap-7.img")) TH_LOG("%s", err);
}

TEST_F(merge, short_pre_dump_pages_refused)
{
	const struct run dump[] = { { 0x10000, 4, CRS_PE_PARENT, 0 } };
	struct crs_pre_dump_merged how;
	char err[256] = "", path[256];

	ASSERT_EQ(0, put_image(self->pre, "7", 1, pre_runs, 2));
	ASSERT_EQ(0, put_image(self->dir, "7", 2, dump, 1));
	snprintf(path, sizeof(path), "%s/pages-1.img", self->pre);
	ASSERT_EQ(0, truncate(path, 5 * PG));
	EXPECT_EQ(-EBADMSG, crs_pre_dump_merge(self->dir, &how, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "pages-1.img")) TH_LOG("%s", err);
}

TEST_HARNESS_MAIN
