// SPDX-License-Identifier: GPL-2.0
/*
 * The tmpfs contents a checkpoint keeps (usr/crs/tmpfs.c): a shared
 * mapping on /dev/shm is saved and written back; a name in a checkpoint
 * directory that points outside tmpfs, or climbs out with "..", is
 * refused before anything is written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tmpfs.h"

#define TMPFS_MAGIC_	0x01021994

static bool shm_is_tmpfs(void)
{
	struct statfs sfs;

	return statfs("/dev/shm", &sfs) == 0 && sfs.f_type == TMPFS_MAGIC_;
}

static int put_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

TEST(shared_mapping_saved_and_put_back)
{
	char dir[] = "/tmp/crdbg-tmpfs-XXXXXX", shm[128], name[256], buf[32] = "";
	char err[256] = "", *map;
	int fd;

	if (!shm_is_tmpfs())
		SKIP(return, "/dev/shm is not tmpfs here");
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(shm, sizeof(shm), "/dev/shm/crdbg-test_tmpfs-%d", getpid());
	fd = open(shm, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, 4096));
	map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	strcpy(map, "at checkpoint");
	ASSERT_EQ(0, crs_tmpfs_save(getpid(), dir, err, sizeof(err))) TH_LOG("%s", err);
	strcpy(map, "changed later");
	munmap(map, 4096);
	close(fd);
	ASSERT_EQ(0, crs_tmpfs_put_back(dir, err, sizeof(err))) TH_LOG("%s", err);
	fd = open(shm, O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_GT(read(fd, buf, sizeof(buf) - 1), 0);
	close(fd);
	EXPECT_STREQ("at checkpoint", buf);
	unlink(shm);
	snprintf(name, sizeof(name), "rm -rf %s", dir);
	ASSERT_EQ(0, system(name));
}

TEST(names_outside_tmpfs_refused)
{
	static const char *const bad[] = {
		"tmpfs-f-:etc:crdbg-test_tmpfs-victim",
		"tmpfs-m-:dev:shm:..:..:etc:crdbg-test_tmpfs-victim",
		"tmpfs-m-relative",
	};
	char dir[] = "/tmp/crdbg-tmpfs-XXXXXX", err[256], cmd[256];

	ASSERT_NE(NULL, mkdtemp(dir));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ASSERT_EQ(0, put_file(dir, bad[i], "owned\n"));
		EXPECT_NE(0, crs_tmpfs_put_back(dir, err, sizeof(err))) TH_LOG("%s", bad[i]);
		EXPECT_NE(NULL, strstr(err, "not a file on tmpfs")) TH_LOG("%s: %s", bad[i], err);
		EXPECT_NE(0, access("/etc/crdbg-test_tmpfs-victim", F_OK));
		snprintf(cmd, sizeof(cmd), "%s/%s", dir, bad[i]);
		unlink(cmd);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ASSERT_EQ(0, system(cmd));
}

TEST_HARNESS_MAIN
