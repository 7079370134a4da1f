// SPDX-License-Identifier: GPL-2.0
/*
 * The checkpoint store without CRIU: write, verify, corruption, truncation,
 * incompleteness, list and rm, on fake image files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "meta.h"
#include "store.h"

static void put(const char *dir, const char *name, const char *data, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

struct seen {
	int ok, bad;
	char handle[CRS_HANDLE_MAX];
	char problem[512];
	uint64_t bytes;
};

static void on_entry(const char *handle, const struct crs_meta *m, uint64_t bytes,
		     const char *problem, void *arg)
{
	struct seen *s = arg;

	snprintf(s->handle, sizeof(s->handle), "%s", handle);
	if (m) {
		s->ok++;
		s->bytes = bytes;
	} else {
		s->bad++;
		snprintf(s->problem, sizeof(s->problem), "%s", problem);
	}
}

FIXTURE(store) {
	char root[64];
	char handle[CRS_HANDLE_MAX];
	char dir[PATH_MAX];
};

FIXTURE_SETUP(store)
{
	struct crs_pending p;
	struct crs_meta m;
	struct crs_proc proc = { .pid = 4242, .ppid = 1, .pgid = 4242, .sid = 4242 };
	struct crs_thread t = { .pid = 4242, .tid = 4242, .pc = 0x401000, .sp = 0x7ffd0000 };
	char err[512], big[100000];

	strcpy(self->root, "/tmp/crdbg-test_store-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->root));
	/* The store may not exist yet: begin creates it. */
	strcat(self->root, "/store");
	ASSERT_EQ(0, crs_store_begin(self->root, 4242, &p, err, sizeof(err))) TH_LOG("%s", err);
	memset(big, 'x', sizeof(big));
	put(p.dir, "inventory.img", "inv", 3);
	put(p.dir, "pages-1.img", big, sizeof(big));
	put(p.dir, "core-4242.img", "core", 4);
	crs_meta_init(&m);
	m.root = 4242;
	m.time = 1;
	strcpy(m.program, "/bin/true");
	crs_meta_add_proc(&m, &proc);
	crs_meta_add_thread(&m, &t);
	ASSERT_EQ(0, crs_store_commit(&p, &m, err, sizeof(err))) TH_LOG("%s", err);
	crs_meta_free(&m);
	strcpy(self->handle, p.handle);
	ASSERT_EQ(0, crs_store_path(self->root, p.handle, self->dir, sizeof(self->dir)));
	ASSERT_NE(0, access(p.dir, F_OK)) TH_LOG("temporary directory left behind");
}

FIXTURE_TEARDOWN(store)
{
	char *slash = strrchr(self->root, '/');

	if (slash) {
		*slash = '\0';
		EXPECT_EQ(0, crs_rmtree(AT_FDCWD, self->root));
	}
}

static int load_verify(const char *root, const char *handle, char *err, size_t errlen)
{
	struct crs_meta m;
	int r = crs_store_load(root, handle, &m, err, errlen);

	if (r)
		return r;
	r = crs_store_verify(root, handle, &m, false, err, errlen);
	crs_meta_free(&m);
	return r;
}

TEST_F(store, written_and_verified)
{
	struct crs_meta m;
	struct seen s = { 0 };
	char err[512];

	ASSERT_EQ(0, crs_store_load(self->root, self->handle, &m, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(3, m.nr_files);
	EXPECT_EQ(4242, m.root);
	EXPECT_EQ(0x401000ULL, m.threads[0].pc);
	EXPECT_EQ(0, crs_store_verify(self->root, self->handle, &m, false, err, sizeof(err)))
		TH_LOG("%s", err);
	crs_meta_free(&m);
	ASSERT_EQ(0, crs_store_list(self->root, on_entry, &s));
	EXPECT_EQ(1, s.ok);
	EXPECT_EQ(0, s.bad);
	EXPECT_STREQ(self->handle, s.handle);
	EXPECT_EQ(100007, s.bytes);
}

TEST_F(store, corrupt_image_refused)
{
	char path[PATH_MAX + 32], err[512];
	int fd;

	snprintf(path, sizeof(path), "%s/pages-1.img", self->dir);
	fd = open(path, O_WRONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(1, pwrite(fd, "y", 1, 5000));
	close(fd);
	EXPECT_EQ(-EBADMSG, load_verify(self->root, self->handle, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "checksum of pages-1.img")) TH_LOG("%s", err);
}

TEST_F(store, truncated_image_refused)
{
	char path[PATH_MAX + 32], err[512];
	struct seen s = { 0 };

	snprintf(path, sizeof(path), "%s/pages-1.img", self->dir);
	ASSERT_EQ(0, truncate(path, 4096));
	EXPECT_EQ(-EBADMSG, load_verify(self->root, self->handle, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "pages-1.img")) TH_LOG("%s", err);
	ASSERT_EQ(0, crs_store_list(self->root, on_entry, &s));
	EXPECT_EQ(0, s.ok);
	EXPECT_EQ(1, s.bad);
}

/* Flip one byte of name at off. */
static int flip(const char *dir, const char *name, off_t off)
{
	char path[PATH_MAX + 32];
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	r = pwrite(fd, "y", 1, off) == 1 ? 0 : -1;
	close(fd);
	return r;
}

static int verify_part(const char *root, const char *handle, enum crs_verify_part part,
		       char *err, size_t errlen)
{
	struct crs_meta m;
	int r = crs_store_load(root, handle, &m, err, errlen);

	if (r)
		return r;
	r = crs_store_verify_chain_part(root, handle, &m, part, err, errlen);
	crs_meta_free(&m);
	return r;
}

/*
 * A restart checks the structure before criu restore and the pages beside
 * it: a corrupt page passes the first part and fails the second, naming
 * the file; a corrupt structural image fails the first.
 */
TEST_F(store, parts_split_pages_from_structure)
{
	char err[512];

	EXPECT_TRUE(crs_store_is_pages("pages-1.img"));
	EXPECT_TRUE(crs_store_is_pages("pages-12.img"));
	EXPECT_FALSE(crs_store_is_pages("pagemap-4242.img"));
	EXPECT_FALSE(crs_store_is_pages("pages-.img"));
	EXPECT_FALSE(crs_store_is_pages("core-4242.img"));
	ASSERT_EQ(0, flip(self->dir, "pages-1.img", 5000));
	EXPECT_EQ(0, verify_part(self->root, self->handle, CRS_VERIFY_STRUCTURE, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(-EBADMSG, verify_part(self->root, self->handle, CRS_VERIFY_PAGES, err,
					sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "checksum of pages-1.img")) TH_LOG("%s", err);
	EXPECT_EQ(-EBADMSG, verify_part(self->root, self->handle, CRS_VERIFY_ALL, err, sizeof(err)));
}

TEST_F(store, structure_part_refuses_corrupt_core_and_truncated_pages)
{
	char path[PATH_MAX + 32], err[512];

	ASSERT_EQ(0, flip(self->dir, "core-4242.img", 1));
	EXPECT_EQ(0, verify_part(self->root, self->handle, CRS_VERIFY_PAGES, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(-EBADMSG, verify_part(self->root, self->handle, CRS_VERIFY_STRUCTURE, err,
					sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "checksum of core-4242.img")) TH_LOG("%s", err);
	/* A truncated pages image is a size: refused by the first part. */
	put(self->dir, "core-4242.img", "core", 4);
	snprintf(path, sizeof(path), "%s/pages-1.img", self->dir);
	ASSERT_EQ(0, truncate(path, 4096));
	EXPECT_EQ(-EBADMSG, verify_part(self->root, self->handle, CRS_VERIFY_STRUCTURE, err,
					sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "pages-1.img has 4096 bytes")) TH_LOG("%s", err);
}

TEST_F(store, truncated_metadata_refused)
{
	char path[PATH_MAX + 32], err[512];
	struct stat st;
	struct seen s = { 0 };

	snprintf(path, sizeof(path), "%s/metadata", self->dir);
	ASSERT_EQ(0, stat(path, &st));
	ASSERT_EQ(0, truncate(path, st.st_size / 2));
	EXPECT_EQ(-ENODATA, load_verify(self->root, self->handle, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "truncated")) TH_LOG("%s", err);
	ASSERT_EQ(0, crs_store_list(self->root, on_entry, &s));
	EXPECT_EQ(0, s.ok);
	EXPECT_EQ(1, s.bad);
}

TEST_F(store, missing_image_refused)
{
	char path[PATH_MAX + 32], err[512];

	snprintf(path, sizeof(path), "%s/core-4242.img", self->dir);
	ASSERT_EQ(0, unlink(path));
	EXPECT_EQ(-ENODATA, load_verify(self->root, self->handle, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "incomplete")) TH_LOG("%s", err);
}

TEST_F(store, missing_metadata_refused)
{
	char path[PATH_MAX + 32], err[512];

	snprintf(path, sizeof(path), "%s/metadata", self->dir);
	ASSERT_EQ(0, unlink(path));
	EXPECT_EQ(-ENODATA, load_verify(self->root, self->handle, err, sizeof(err)));
}

TEST_F(store, extra_file_refused)
{
	char err[512];

	put(self->dir, "pages-2.img", "zz", 2);
	EXPECT_EQ(-EBADMSG, load_verify(self->root, self->handle, err, sizeof(err)));
}

TEST_F(store, pending_not_listed)
{
	struct crs_pending p;
	struct seen s = { 0 };
	char err[512];

	ASSERT_EQ(0, crs_store_begin(self->root, 77, &p, err, sizeof(err)));
	put(p.dir, "inventory.img", "inv", 3);
	ASSERT_EQ(0, crs_store_list(self->root, on_entry, &s));
	EXPECT_EQ(1, s.ok);
	EXPECT_EQ(0, s.bad);
	EXPECT_STREQ(self->handle, s.handle);
	crs_store_abort(&p);
	EXPECT_NE(0, access(p.dir, F_OK));
}

TEST_F(store, unknown_and_bad_handles)
{
	struct crs_meta m;
	char err[512];

	EXPECT_EQ(-ENOENT, crs_store_load(self->root, "20000101T000000-1", &m, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "unknown checkpoint")) TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, crs_store_load(self->root, "../store", &m, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, crs_store_remove(self->root, "../store"));
	EXPECT_EQ(-ENOENT, crs_store_remove(self->root, "nothere"));
}

TEST_F(store, rm_removes)
{
	struct seen s = { 0 };

	ASSERT_EQ(0, crs_store_remove(self->root, self->handle));
	EXPECT_NE(0, access(self->dir, F_OK));
	ASSERT_EQ(0, crs_store_list(self->root, on_entry, &s));
	EXPECT_EQ(0, s.ok + s.bad);
}

TEST_F(store, two_checkpoints_distinct_handles)
{
	struct crs_pending p;
	struct crs_meta m;
	struct crs_proc proc = { .pid = 4242, .ppid = 1, .pgid = 4242, .sid = 4242 };
	struct seen s = { 0 };
	char err[512];

	ASSERT_EQ(0, crs_store_begin(self->root, 4242, &p, err, sizeof(err)));
	EXPECT_STRNE(self->handle, p.handle);
	put(p.dir, "inventory.img", "inv", 3);
	crs_meta_init(&m);
	m.root = 4242;
	crs_meta_add_proc(&m, &proc);
	ASSERT_EQ(0, crs_store_commit(&p, &m, err, sizeof(err))) TH_LOG("%s", err);
	crs_meta_free(&m);
	ASSERT_EQ(0, crs_store_list(self->root, on_entry, &s));
	EXPECT_EQ(2, s.ok);
}

static bool meta_has(const char *dir, const char *what)
{
	char path[PATH_MAX + 16], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/metadata", dir);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f))
		found = !strncmp(line, what, strlen(what));
	if (f)
		fclose(f);
	return found;
}

TEST_F(store, new_checkpoints_record_xxh128)
{
	EXPECT_TRUE(meta_has(self->dir, "file-xxh128 "));
	EXPECT_FALSE(meta_has(self->dir, "file "));
}

/* CRDBG_DIGEST=sha256: the old records, still verified byte for byte. */
TEST_F(store, sha256_records_still_verified)
{
	char handle[CRS_HANDLE_MAX], dir[PATH_MAX], err[512], path[PATH_MAX + 32];
	struct crs_pending p;
	struct crs_meta m;
	struct crs_proc proc = { .pid = 4242, .ppid = 1, .pgid = 4242, .sid = 4242 };
	int fd;

	setenv("CRDBG_DIGEST", "sha256", 1);
	ASSERT_EQ(0, crs_store_begin(self->root, 4242, &p, err, sizeof(err))) TH_LOG("%s", err);
	put(p.dir, "inventory.img", "inv", 3);
	put(p.dir, "pages-1.img", "some pages of memory", 20);
	crs_meta_init(&m);
	m.root = 4242;
	crs_meta_add_proc(&m, &proc);
	ASSERT_EQ(0, crs_store_commit(&p, &m, err, sizeof(err))) TH_LOG("%s", err);
	unsetenv("CRDBG_DIGEST");
	crs_meta_free(&m);
	strcpy(handle, p.handle);
	ASSERT_EQ(0, crs_store_path(self->root, handle, dir, sizeof(dir)));
	EXPECT_TRUE(meta_has(dir, "file "));
	EXPECT_FALSE(meta_has(dir, "file-xxh128 "));
	EXPECT_EQ(0, load_verify(self->root, handle, err, sizeof(err))) TH_LOG("%s", err);
	snprintf(path, sizeof(path), "%s/pages-1.img", dir);
	fd = open(path, O_WRONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(1, pwrite(fd, "S", 1, 0));
	close(fd);
	EXPECT_EQ(-EBADMSG, load_verify(self->root, handle, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "checksum of pages-1.img")) TH_LOG("%s", err);
}

/* A child checkpoint of the fixture's, with CRIU's "parent" link in place. */
static int add_child(const char *root, const char *parent, char *ret_handle, const char *link)
{
	struct crs_pending p;
	struct crs_meta m;
	struct crs_proc proc = { .pid = 4242, .ppid = 1, .pgid = 4242, .sid = 4242 };
	char err[512], path[PATH_MAX + 16];
	int r;

	r = crs_store_begin(root, 4242, &p, err, sizeof(err));
	if (r)
		return r;
	put(p.dir, "inventory.img", "inv", 3);
	put(p.dir, "pages-1.img", "child pages", 11);
	snprintf(path, sizeof(path), "%s/parent", p.dir);
	if (symlink(link, path))
		return -errno;
	crs_meta_init(&m);
	m.root = 4242;
	m.track_mem = true;
	snprintf(m.parent, sizeof(m.parent), "%s", parent);
	crs_meta_add_proc(&m, &proc);
	r = crs_store_commit(&p, &m, err, sizeof(err));
	crs_meta_free(&m);
	strcpy(ret_handle, p.handle);
	return r;
}

static int load_verify_chain(const char *root, const char *handle, char *err, size_t errlen)
{
	struct crs_meta m;
	int r = crs_store_load(root, handle, &m, err, errlen);

	if (r)
		return r;
	r = crs_store_verify_chain(root, handle, &m, false, err, errlen);
	crs_meta_free(&m);
	return r;
}

TEST_F(store, chain_verified_link_by_link)
{
	char child[CRS_HANDLE_MAX], grand[CRS_HANDLE_MAX], link[CRS_HANDLE_MAX + 4];
	char err[512], path[PATH_MAX + 32], away[PATH_MAX + 32];
	int fd;

	snprintf(link, sizeof(link), "../%s", self->handle);
	ASSERT_EQ(0, add_child(self->root, self->handle, child, link));
	snprintf(link, sizeof(link), "../%s", child);
	ASSERT_EQ(0, add_child(self->root, child, grand, link));
	EXPECT_EQ(0, load_verify_chain(self->root, grand, err, sizeof(err))) TH_LOG("%s", err);

	/* a corrupt ancestor two links up */
	snprintf(path, sizeof(path), "%s/pages-1.img", self->dir);
	fd = open(path, O_WRONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(1, pwrite(fd, "y", 1, 5000));
	close(fd);
	EXPECT_EQ(-EBADMSG, load_verify_chain(self->root, grand, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, self->handle)) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "checksum")) TH_LOG("%s", err);
	EXPECT_EQ(NULL, strchr(err, '\n'));
	fd = open(path, O_WRONLY);
	ASSERT_EQ(1, pwrite(fd, "x", 1, 5000));
	close(fd);

	/* a missing parent */
	snprintf(path, sizeof(path), "%s/%s", self->root, child);
	snprintf(away, sizeof(away), "%s/.away", self->root);
	ASSERT_EQ(0, rename(path, away));
	EXPECT_EQ(-ENODATA, load_verify_chain(self->root, grand, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "missing")) TH_LOG("%s", err);
	ASSERT_EQ(0, rename(away, path));
	EXPECT_EQ(0, load_verify_chain(self->root, grand, err, sizeof(err))) TH_LOG("%s", err);
}

TEST_F(store, wrong_parent_link_refused)
{
	char child[CRS_HANDLE_MAX], link[CRS_HANDLE_MAX + 4], err[512], path[PATH_MAX + 80];

	/* CRIU's link pointing elsewhere than the recorded parent: not stored */
	EXPECT_NE(0, add_child(self->root, self->handle, child, "../elsewhere"));
	/* changed after the checkpoint was stored: refused */
	snprintf(link, sizeof(link), "../%s", self->handle);
	ASSERT_EQ(0, add_child(self->root, self->handle, child, link));
	snprintf(path, sizeof(path), "%s/%s/parent", self->root, child);
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, symlink("../elsewhere", path));
	EXPECT_EQ(-ENODATA, load_verify_chain(self->root, child, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "link to its parent")) TH_LOG("%s", err);
}

TEST_F(store, rm_refuses_a_parent)
{
	char child[CRS_HANDLE_MAX], link[CRS_HANDLE_MAX + 4], deps[256];

	snprintf(link, sizeof(link), "../%s", self->handle);
	ASSERT_EQ(0, add_child(self->root, self->handle, child, link));
	EXPECT_EQ(1, crs_store_dependents(self->root, self->handle, deps, sizeof(deps)));
	EXPECT_STREQ(child, deps);
	EXPECT_EQ(-EBUSY, crs_store_remove(self->root, self->handle));
	EXPECT_EQ(0, access(self->dir, F_OK));
	EXPECT_EQ(0, crs_store_remove(self->root, child));
	EXPECT_EQ(0, crs_store_remove(self->root, self->handle));
}

TEST_HARNESS_MAIN
