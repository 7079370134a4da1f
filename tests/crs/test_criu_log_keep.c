// SPDX-License-Identifier: GPL-2.0
/* A failed restore's CRIU log, kept in the store (criu.h), beside the checkpoint. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "criu.h"

FIXTURE(dirs)
{
	char top[64], work[PATH_MAX], ckpt[PATH_MAX];
};

FIXTURE_SETUP(dirs)
{
	FILE *f;
	char log[PATH_MAX + 32];

	snprintf(self->top, sizeof(self->top), "/tmp/crdbg-logkeep-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->top));
	snprintf(self->work, sizeof(self->work), "%s/work", self->top);
	snprintf(self->ckpt, sizeof(self->ckpt), "%s/store", self->top);
	ASSERT_EQ(0, mkdir(self->work, 0700));
	ASSERT_EQ(0, mkdir(self->ckpt, 0700));
	snprintf(log, sizeof(log), "%s/" CRS_CRIU_RESTORE_LOG, self->work);
	f = fopen(log, "w");
	ASSERT_NE(NULL, f);
	fputs("(00.1) Error (criu/files-reg.c:2111): File x has bad size 1786 (expect 1711)\n", f);
	fclose(f);
}

FIXTURE_TEARDOWN(dirs)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->top);
	if (system(cmd))
		TH_LOG("cannot remove %s", self->top);
}

/*
 * The reason names the kept copy, not the work directory, and says what
 * to do; the checkpoint's directory gets nothing (its metadata seals it).
 */
TEST_F(dirs, the_log_moves_into_the_checkpoint)
{
	char err[1024], kept[PATH_MAX + 64], line[256], h[PATH_MAX + 32];
	struct dirent *d;
	int entries = 0;
	DIR *dp;
	FILE *f;

	snprintf(h, sizeof(h), "%s/20261202T143745-31", self->ckpt);
	ASSERT_EQ(0, mkdir(h, 0700));

	snprintf(err, sizeof(err), "criu restore failed: Error: bad size (see %s/%s)", self->work,
		 CRS_CRIU_RESTORE_LOG);
	crs_criu_keep_restore_log(self->ckpt, "20261202T143745-31", self->work, err, sizeof(err));
	snprintf(kept, sizeof(kept), "%s/" CRS_CRIU_LOG_DIR "/20261202T143745-31." CRS_CRIU_RESTORE_LOG,
		 self->ckpt);
	EXPECT_NE(NULL, strstr(err, kept)) TH_LOG("%s", err);
	EXPECT_EQ(NULL, strstr(err, self->work)) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "restart it again")) TH_LOG("%s", err);
	EXPECT_EQ(0, strncmp(err, "criu restore failed: Error: bad size (see ", 42));
	f = fopen(kept, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	fclose(f);
	EXPECT_NE(NULL, strstr(line, "has bad size 1786"));
	dp = opendir(h);
	ASSERT_NE(NULL, dp);
	while ((d = readdir(dp)))
		entries += d->d_name[0] != '.';
	closedir(dp);
	EXPECT_EQ(0, entries);
}

/* No copy (the store is gone): the reason is as it was. */
TEST_F(dirs, without_a_copy_nothing_changes)
{
	char err[1024], was[1024], gone[PATH_MAX + 8];

	snprintf(gone, sizeof(gone), "%s/none", self->ckpt);
	snprintf(err, sizeof(err), "criu restore failed (see %s/%s)", self->work,
		 CRS_CRIU_RESTORE_LOG);
	snprintf(was, sizeof(was), "%s", err);
	crs_criu_keep_restore_log(gone, "H", self->work, err, sizeof(err));
	EXPECT_STREQ(was, err);
}

TEST_HARNESS_MAIN
