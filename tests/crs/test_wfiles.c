// SPDX-License-Identifier: GPL-2.0
/*
 * The files a tree writes (usr/crs/wfiles.c), without CRIU: a real child
 * process holds files open, crdbg records and copies the ones it writes,
 * the files change as a program's would, and the check and the put-back
 * a restart runs do what Documentation/checkpoint.md says.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "meta.h"
#include "store.h"
#include "wfiles.h"

static void put(const char *path, const char *data, int flags)
{
	int fd = open(path, O_WRONLY | O_CREAT | flags, 0640);

	if (fd >= 0) {
		if (write(fd, data, strlen(data)) < 0)
			perror(path);
		close(fd);
	}
}

/* The whole small file, "" when missing. */
static const char *slurp(const char *path)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? 0 : read(fd, buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	return buf;
}

/* The index of path's line in the record rec (the test's own fds 0-2 come first), or -1. */
static int index_of(const char *rec, const char *path)
{
	const char *line;
	size_t n = strlen(path);

	for (line = rec; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *end = strchr(line, '\n');
		unsigned int i;

		if (end && (size_t)(end - line) > n && !strncmp(end - n, path, n) &&
		    end[-n - 1] == ' ' && sscanf(line, "wfile %u ", &i) == 1)
			return (int)i;
	}
	return -1;
}

FIXTURE(wf) {
	char top[64];
	char ck[128], log[128], ro[128], big[128], aside[256];
	pid_t child;
	struct crs_meta m;
	char err[1024];
};

/*
 * The "program": holds log (append), ro (read only) and big (a sparse
 * file over the cap) open, until killed.
 */
FIXTURE_SETUP(wf)
{
	int go[2];
	char c;

	strcpy(self->top, "/tmp/crdbg-wfiles-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->top));
	snprintf(self->ck, sizeof(self->ck), "%s/ck", self->top);
	snprintf(self->log, sizeof(self->log), "%s/log.txt", self->top);
	snprintf(self->ro, sizeof(self->ro), "%s/ro.txt", self->top);
	snprintf(self->big, sizeof(self->big), "%s/big.dat", self->top);
	snprintf(self->aside, sizeof(self->aside), "%s.crdbg-after-H1", self->log);
	ASSERT_EQ(0, mkdir(self->ck, 0700));
	put(self->ro, "read only\n", O_TRUNC);
	ASSERT_EQ(0, pipe(go));
	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (!self->child) {
		int a = open(self->log, O_WRONLY | O_APPEND | O_CREAT, 0640);
		int b = open(self->ro, O_RDONLY);
		int big = open(self->big, O_RDWR | O_CREAT, 0600);

		if (a < 0 || b < 0 || big < 0 || write(a, "step 1\nstep 2\n", 14) != 14 ||
		    ftruncate(big, CRS_WFILE_COPY_MAX + 4096))
			_exit(1);
		if (write(go[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(go[1]);
	ASSERT_EQ(1, read(go[0], &c, 1));
	close(go[0]);
	crs_meta_init(&self->m);
	struct crs_proc p = { .pid = self->child, .ppid = getpid() };

	ASSERT_EQ(0, crs_meta_add_proc(&self->m, &p));
	ASSERT_EQ(0, crs_wfiles_record(&self->m, self->ck, "/nonexistent-store", NULL, self->err,
				       sizeof(self->err))) TH_LOG("%s", self->err);
}

FIXTURE_TEARDOWN(wf)
{
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	crs_meta_free(&self->m);
	crs_rmtree(AT_FDCWD, self->top);
}

TEST_F(wf, records_written_files_only)
{
	char path[256];
	const char *rec;

	snprintf(path, sizeof(path), "%s/" CRS_WFILES_NAME, self->ck);
	rec = slurp(path);
	ASSERT_NE(NULL, strstr(rec, "crdbg-wfiles 1\n"));
	EXPECT_NE(NULL, strstr(rec, self->log)) TH_LOG("%s", rec);
	EXPECT_NE(NULL, strstr(rec, self->big)) TH_LOG("%s", rec);
	EXPECT_EQ(NULL, strstr(rec, self->ro)) TH_LOG("%s", rec);
	/* the log copied whole; the sparse file over the cap only recorded */
	snprintf(path, sizeof(path), "%s/" CRS_WFILE_COPY_PREFIX "%d", self->ck,
		 index_of(rec, self->log));
	EXPECT_STREQ("step 1\nstep 2\n", slurp(path));
	snprintf(path, sizeof(path), "%s/" CRS_WFILE_COPY_PREFIX "%d", self->ck,
		 index_of(rec, self->big));
	EXPECT_NE(0, access(path, F_OK));
}

TEST_F(wf, unchanged_is_left_alone)
{
	struct stat a, b;

	ASSERT_EQ(0, stat(self->log, &a));
	EXPECT_EQ(0, crs_wfiles_check(self->ck, "H1", NULL, self->err, sizeof(self->err)));
	EXPECT_EQ(0, crs_wfiles_restore(self->ck, "H1", NULL, NULL, self->err, sizeof(self->err)));
	ASSERT_EQ(0, stat(self->log, &b));
	EXPECT_EQ(a.st_mtim.tv_nsec, b.st_mtim.tv_nsec);
	EXPECT_NE(0, access(self->aside, F_OK));
}

TEST_F(wf, appended_tail_is_cut_and_kept_aside)
{
	struct stat a, b;

	ASSERT_EQ(0, stat(self->log, &a));
	put(self->log, "step 3\nstep 4\n", O_APPEND);
	EXPECT_EQ(0, crs_wfiles_check(self->ck, "H1", NULL, self->err, sizeof(self->err)));
	/* the check changes nothing */
	EXPECT_STREQ("step 1\nstep 2\nstep 3\nstep 4\n", slurp(self->log));
	ASSERT_EQ(0, crs_wfiles_restore(self->ck, "H1", NULL, NULL, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	EXPECT_STREQ("step 1\nstep 2\n", slurp(self->log));
	EXPECT_STREQ("step 3\nstep 4\n", slurp(self->aside));
	ASSERT_EQ(0, stat(self->log, &b));
	EXPECT_EQ(a.st_ino, b.st_ino);		/* the same file, cut */
	EXPECT_EQ(a.st_mtim.tv_sec, b.st_mtim.tv_sec);
	EXPECT_EQ(a.st_mtim.tv_nsec, b.st_mtim.tv_nsec);
	/* a second restart finds it as at the checkpoint: a new tail, a new name */
	put(self->log, "step 3b\n", O_APPEND);
	ASSERT_EQ(0, crs_wfiles_restore(self->ck, "H1", NULL, NULL, self->err, sizeof(self->err)));
	EXPECT_STREQ("step 3\nstep 4\n", slurp(self->aside));
	strcat(self->aside, ".1");
	EXPECT_STREQ("step 3b\n", slurp(self->aside));
}

TEST_F(wf, rewritten_is_kept_whole_and_put_back)
{
	put(self->log, "STEP 1\n", O_TRUNC);
	ASSERT_EQ(0, crs_wfiles_restore(self->ck, "H1", NULL, NULL, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	EXPECT_STREQ("step 1\nstep 2\n", slurp(self->log));
	EXPECT_STREQ("STEP 1\n", slurp(self->aside));
}

TEST_F(wf, removed_is_made_again)
{
	struct stat st;

	ASSERT_EQ(0, unlink(self->log));
	ASSERT_EQ(0, crs_wfiles_restore(self->ck, "H1", NULL, NULL, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	EXPECT_STREQ("step 1\nstep 2\n", slurp(self->log));
	ASSERT_EQ(0, stat(self->log, &st));
	EXPECT_EQ(0640, st.st_mode & 07777);
}

TEST_F(wf, replaced_by_another_file_is_moved_aside)
{
	ASSERT_EQ(0, unlink(self->log));
	put(self->log, "another\n", O_TRUNC);
	ASSERT_EQ(0, crs_wfiles_restore(self->ck, "H1", NULL, NULL, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	EXPECT_STREQ("step 1\nstep 2\n", slurp(self->log));
	EXPECT_STREQ("another\n", slurp(self->aside));
}

/* what cannot be put back is named in one line, and nothing is touched */
TEST_F(wf, replaced_by_a_directory_refuses)
{
	ASSERT_EQ(0, unlink(self->log));
	ASSERT_EQ(0, mkdir(self->log, 0700));
	EXPECT_EQ(-EXDEV, crs_wfiles_check(self->ck, "H1", NULL, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, self->log)) TH_LOG("%s", self->err);
	EXPECT_NE(NULL, strstr(self->err, "is now a directory")) TH_LOG("%s", self->err);
	EXPECT_EQ(NULL, strchr(self->err, '\n'));
	EXPECT_EQ(-EXDEV, crs_wfiles_restore(self->ck, "H1", NULL, NULL, self->err, sizeof(self->err)));
	EXPECT_NE(0, access(self->aside, F_OK));
}

TEST_F(wf, over_the_cap_and_changed_refuses_before_any_file_changes)
{
	int fd = open(self->big, O_WRONLY | O_APPEND);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(1, write(fd, "x", 1));
	close(fd);
	put(self->log, "step 3\n", O_APPEND);
	EXPECT_EQ(-EXDEV, crs_wfiles_restore(self->ck, "H1", NULL, NULL, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, self->big)) TH_LOG("%s", self->err);
	EXPECT_NE(NULL, strstr(self->err, "cap")) TH_LOG("%s", self->err);
	/* the log, which could be put back, was not touched either */
	EXPECT_STREQ("step 1\nstep 2\nstep 3\n", slurp(self->log));
}

TEST_F(wf, gone_directory_refuses)
{
	char dir[128], path[256], rec[1024];
	struct crs_wfile w = { .index = 7, .copied = 1, .size = 0, .mode = 0600 };
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/ck2", self->top);
	ASSERT_EQ(0, mkdir(dir, 0700));
	snprintf(w.path, sizeof(w.path), "%s/gone/out.txt", self->top);
	snprintf(path, sizeof(path), "%s/" CRS_WFILES_NAME, dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "crdbg-wfiles 1\n");
	ASSERT_EQ(0, crs_wfiles_format_one(f, &w));
	fclose(f);
	snprintf(rec, sizeof(rec), "%s/" CRS_WFILE_COPY_PREFIX "7", dir);
	put(rec, "", O_TRUNC);
	EXPECT_EQ(-EXDEV, crs_wfiles_check(dir, "H2", NULL, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "/gone is gone")) TH_LOG("%s", self->err);
	/* a file the checkpoint's tmpfs copies make again, directory and all: theirs */
	snprintf(rec, sizeof(rec), "%s/tmpfs-f-%s", dir, w.path);
	for (char *c = rec + strlen(dir) + 9; *c; c++)
		if (*c == '/')
			*c = ':';
	put(rec, "", O_TRUNC);
	EXPECT_EQ(0, crs_wfiles_check(dir, "H2", NULL, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
}

TEST(parse_refuses_malformed)
{
	static const char *const bad[] = {
		"",
		"crdbg-wfiles 2\n",
		"crdbg-wfiles 1\nwfile 0 1 2 3 4 5 644 0 0 1 relative\n",
		"crdbg-wfiles 1\nwfile 0 1 2 3 4 5 644 0 0 2 /x\n",
		"crdbg-wfiles 1\nwfile 0 1 2 3 4 5 644 0 0 1 /x\nwfile 0 1 2 3 4 5 644 0 0 1 /y\n",
		"crdbg-wfiles 1\nwfile 0 1 2 99999999999 4 5 644 0 0 1 /x\n",
		"crdbg-wfiles 1\nwfile 5000 1 2 3 4 5 644 0 0 1 /x\n",
		"crdbg-wfiles 1\nwfile 0 1 2 3 4 5 644 0 0 1 /x",
		"crdbg-wfiles 1\nwfile 0 1 2 3 4 -1 644 0 0 1 /x\n",
	};
	struct crs_wfiles w;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = crs_wfiles_parse(bad[i], strlen(bad[i]), &w, err, sizeof(err));

		EXPECT_EQ(-EBADMSG, r) TH_LOG("case %s", bad[i]);
	}
	ASSERT_EQ(0, crs_wfiles_parse("crdbg-wfiles 1\nwfile 3 fd01 77 14 5 6 644 1000 1000 1 /a b\n",
				      59, &w, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(1, w.nr);
	EXPECT_EQ(3, w.f[0].index);
	EXPECT_EQ(0xfd01, w.f[0].dev);
	EXPECT_EQ(14, w.f[0].size);
	EXPECT_STREQ("/a b", w.f[0].path);
	crs_wfiles_free(&w);
}

TEST_HARNESS_MAIN
