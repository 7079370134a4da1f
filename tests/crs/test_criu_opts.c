// SPDX-License-Identifier: GPL-2.0
/*
 * What crdbg finds for CRIU before a dump (criu-opts.c) and what it says
 * when CRIU refuses (crs_criu_log_error()), on the host.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "criu-opts.h"
#include "criu.h"
#include "meta.h"

static bool has_opt(const struct crs_meta *m, const char *opt)
{
	for (size_t i = 0; i < m->nr_criu_opts; i++)
		if (!strcmp(m->criu_opts[i], opt))
			return true;
	return false;
}

/* A child that maps what map() makes, says so on a pipe, and waits. */
static pid_t mapping_child(int (*map)(void))
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		c = map() ? 'n' : 'y';
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1 || c != 'y') {
		if (pid > 0)
			kill(pid, SIGKILL), waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(p[0]);
	return pid;
}

/* 3 MiB of a file in /tmp, mapped shared, its fd closed, then unlinked. */
static int map_unlinked(void)
{
	char path[] = "/tmp/crdbg-ghost-XXXXXX";
	int fd = mkstemp(path);
	void *p;

	if (fd < 0 || ftruncate(fd, 3 << 20))
		return -1;
	p = mmap(NULL, 3 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	unlink(path);
	return p == MAP_FAILED ? -1 : 0;
}

/* A 3 MiB SysV segment, attached and marked for removal. */
static int map_sysv(void)
{
	int id = shmget(IPC_PRIVATE, 3 << 20, IPC_CREAT | 0600);
	void *p = id < 0 ? (void *)-1 : shmat(id, NULL, 0);

	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
	return p == (void *)-1 ? -1 : 0;
}

TEST(a_mapped_unlinked_file_raises_the_ghost_limit)
{
	struct crs_meta m;
	pid_t pid = mapping_child(map_unlinked);

	ASSERT_LT(0, pid);
	crs_meta_init(&m);
	EXPECT_EQ(0, crs_criu_auto_opts(&pid, 1, &m));
	/* 3 MiB, and two more so that a file growing a little still fits */
	EXPECT_TRUE(has_opt(&m, "--ghost-limit=5M"));
	crs_meta_free(&m);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

TEST(sysv_segments_are_not_ghost_files)
{
	struct crs_meta m;
	pid_t pid = mapping_child(map_sysv);

	if (pid < 0)
		SKIP(return, "no SysV shared memory here");
	crs_meta_init(&m);
	EXPECT_EQ(0, crs_criu_auto_opts(&pid, 1, &m));
	EXPECT_EQ(0, m.nr_criu_opts);
	crs_meta_free(&m);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void write_log(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

TEST(the_error_named_is_the_cause_not_a_probe)
{
	char log[] = "/tmp/crdbg-log-XXXXXX", out[1024];
	int fd = mkstemp(log);

	ASSERT_LE(0, fd);
	close(fd);
	write_log(log, "(00.001) Warn  (criu/kerndat.c:1): something\n"
		       "(00.02) Error (criu/util.c:642): exited, status=1\n"
		       "(00.27) Error (criu/files-reg.c:950): Can't dump ghost file /dev/shm/x of 4292720 size, increase limit\n"
		       "(00.29) Error (criu/cr-dump.c:2053): Dumping FAILED.\n");
	crs_criu_log_error(log, out, sizeof(out));
	EXPECT_EQ(0, strncmp(out, "Error (criu/files-reg.c:950): Can't dump ghost file", 51))
		TH_LOG("%s", out);
	/* a helper's exit alone is still said */
	write_log(log, "(00.02) Error (criu/util.c:642): exited, status=3\n");
	crs_criu_log_error(log, out, sizeof(out));
	EXPECT_EQ(0, strncmp(out, "Error (criu/util.c:642): exited, status=3 (CRIU's log: ", 55))
		TH_LOG("%s", out);
	/* no hint for it: how to have CRIU say more */
	EXPECT_NE(NULL, strstr(out, "CRDBG_CRIU_VERBOSITY=4")) TH_LOG("%s", out);
	/* SysV memory outside an IPC namespace of the tree's own: what to do */
	write_log(log, "(00.1) Error (criu/cr-dump.c:453): Task 152 with SysVIPC shmem map @7f5cfb20c000 doesn't live in IPC ns\n");
	crs_criu_log_error(log, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "doesn't live in IPC ns; CRIU takes SysV shared memory only"));
	EXPECT_NE(NULL, strstr(out, "unshare --ipc")) TH_LOG("%s", out);
	/* what restores fail on most: each says what to do, and where the log is */
	write_log(log, "(00.3) Error (criu/sk-inet.c:1059): Can't bind inet socket (id 93): Address already in use\n");
	crs_criu_log_error(log, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "Address already in use; a port of the job's is still taken"));
	EXPECT_NE(NULL, strstr(out, "restart again in a moment")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, log)) TH_LOG("%s", out);
	write_log(log, "(00.2) Error (criu/files-reg.c:2175): File tmp/w/log.lammps has bad size 1786 (expect 1711)\n");
	crs_criu_log_error(log, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "changed size since the checkpoint")) TH_LOG("%s", out);
	write_log(log, "(00.2) Error (criu/tty.c:1010): Don't have tty to inherit session from, aborting\n");
	crs_criu_log_error(log, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "restart from a terminal, or hand one in with --terminal-fd"))
		TH_LOG("%s", out);
	write_log(log, "(00.1) Error (criu/cr-dump.c:1618): A session leader of 366(366) is outside of its pid namespace\n");
	crs_criu_log_error(log, out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "setsid")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strchr(out, '\n'));
	unlink(log);
}

TEST_HARNESS_MAIN
