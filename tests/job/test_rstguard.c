// SPDX-License-Identifier: GPL-2.0
/*
 * The reset guard of a job restart (usr/job/rstguard.c), in a network
 * namespace of the test's own (root): a part's guard is its own nftables
 * table; a part killed before its release leaves its table, which the
 * next guard on the node removes; the release removes one's own.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include <crdbg/job.h>

struct nft_ctx;

/* Whether table crdbg-rst-PID exists: libnftables, as the guard uses it. */
static int table_exists(pid_t pid)
{
	void *h = dlopen("libnftables.so.1", RTLD_NOW | RTLD_LOCAL);
	struct nft_ctx *(*ctx_new)(unsigned int);
	int (*run)(struct nft_ctx *, const char *);
	void (*ctx_free)(struct nft_ctx *);
	int (*quiet)(struct nft_ctx *), (*quiet_err)(struct nft_ctx *);
	struct nft_ctx *ctx;
	char cmd[64];
	int r;

	if (!h)
		return -1;
	ctx_new = (struct nft_ctx *(*)(unsigned int))dlsym(h, "nft_ctx_new");
	run = (int (*)(struct nft_ctx *, const char *))dlsym(h, "nft_run_cmd_from_buffer");
	ctx_free = (void (*)(struct nft_ctx *))dlsym(h, "nft_ctx_free");
	quiet = (int (*)(struct nft_ctx *))dlsym(h, "nft_ctx_buffer_output");
	quiet_err = (int (*)(struct nft_ctx *))dlsym(h, "nft_ctx_buffer_error");
	ctx = ctx_new ? ctx_new(0) : NULL;
	if (!ctx || !run || !ctx_free || !quiet || !quiet_err)
		return -1;
	quiet(ctx);	/* its listing and "No such file" are not ours to print */
	quiet_err(ctx);
	snprintf(cmd, sizeof(cmd), "list table inet crdbg-rst-%d\n", (int)pid);
	r = run(ctx, cmd) == 0;
	ctx_free(ctx);
	dlclose(h);
	return r;
}

/* The steps in a child of its own namespace: its exit code names a failed one. */
static int guard_case(void)
{
	char root[] = "/tmp/crdbg-rstguard-XXXXXX", path[128], err[512];
	bool guarded = false;
	pid_t gone;
	int st, fd;

	if (unshare(CLONE_NEWNET) || !mkdtemp(root))
		return 10;
	snprintf(path, sizeof(path), "%s/H", root);
	if (mkdir(path, 0700))
		return 10;
	/* a checkpoint with TCP connections: CRIU's tcp-stream images */
	snprintf(path, sizeof(path), "%s/H/tcp-stream-7.img", root);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	if (fd < 0)
		return 10;
	close(fd);
	/* a part killed between its guard and its release */
	gone = fork();
	if (!gone)
		_exit(crs_job_rst_guard(root, "H", &guarded, err, sizeof(err)) || !guarded);
	if (waitpid(gone, &st, 0) != gone || !WIFEXITED(st) || WEXITSTATUS(st))
		return 11;
	if (table_exists(gone) != 1)
		return 12;
	/* the next part's guard: its own table, the gone one's removed */
	if (crs_job_rst_guard(root, "H", &guarded, err, sizeof(err)) || !guarded)
		return 13;
	if (table_exists(getpid()) != 1 || table_exists(gone) != 0)
		return 14;
	crs_job_rst_unguard();
	if (table_exists(getpid()) != 0)
		return 15;
	unlink(path);
	snprintf(path, sizeof(path), "%s/H", root);
	rmdir(path);
	rmdir(root);
	return 0;
}

TEST(a_gone_part_guard_is_removed_by_the_next)
{
	int st;
	pid_t c;

	if (geteuid())
		SKIP(return, "needs root: a network namespace and nftables of its own");
	if (table_exists(getpid()) < 0)
		SKIP(return, "needs libnftables.so.1 (Debian: libnftables1)");
	c = fork();
	ASSERT_GE(c, 0);
	if (!c)
		_exit(guard_case());
	ASSERT_EQ(c, waitpid(c, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	/* 10 set-up, 11-12 the gone part's table, 13-14 the sweep, 15 the release */
	EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("step %d failed", WEXITSTATUS(st));
}

TEST_HARNESS_MAIN
