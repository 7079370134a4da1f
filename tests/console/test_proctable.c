// SPDX-License-Identifier: GPL-2.0
/*
 * MPIR_proctable read in bulk (usr/console/proctable.c) from a child that
 * lays one out as a launcher does: tens of thousands of entries, a host
 * string shared by each node's ranks, one executable string, and tables
 * that are wrong in the ways a launcher's memory can be.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "proctable.h"

struct MPIR_PROCDESC {
	char *host_name;
	char *executable_name;
	int pid;
};

#define NR_RANKS	40000
#define PER_NODE	64

/* In the child: the table, then its address up the pipe, then wait to be killed. */
static void lay_out(int fd, long n, int bad_entry)
{
	struct MPIR_PROCDESC *t = calloc((size_t)n, sizeof(*t));
	static char exe[] = "/opt/app/bin/lmp";
	char **hosts = calloc((size_t)n / PER_NODE + 1, sizeof(*hosts));
	uint64_t addr = (uintptr_t)t;

	for (long i = 0; i < n; i++) {
		if (!hosts[i / PER_NODE] && asprintf(&hosts[i / PER_NODE], "node%05ld", i / PER_NODE) < 0)
			_exit(1);
		t[i].host_name = hosts[i / PER_NODE];
		t[i].executable_name = exe;
		t[i].pid = 1000 + (int)i;
	}
	if (bad_entry >= 0)
		t[bad_entry].host_name = (char *)8;	/* unmapped */
	if (write(fd, &addr, sizeof(addr)) != sizeof(addr))
		_exit(1);
	pause();
	_exit(0);
}

static pid_t child(long n, int bad_entry, uint64_t *addr)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		lay_out(p[1], n, bad_entry);
	}
	close(p[1]);
	if (read(p[0], addr, sizeof(*addr)) != sizeof(*addr))
		pid = -1;
	close(p[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

TEST(a_large_table_in_bulk)
{
	struct dbg_proc *p = calloc(NR_RANKS, sizeof(*p));
	char err[256] = "";
	uint64_t addr;
	pid_t pid = child(NR_RANKS, -1, &addr);
	char want[32];

	ASSERT_NE(NULL, p);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, mpir_proctable_read(pid, addr, NR_RANKS, p, err, sizeof(err))) TH_LOG("%s", err);
	for (long i = 0; i < NR_RANKS; i++) {
		snprintf(want, sizeof(want), "node%05ld", i / PER_NODE);
		ASSERT_EQ(1000 + i, p[i].pid);
		ASSERT_STREQ(want, p[i].host);
		ASSERT_STREQ("/opt/app/bin/lmp", p[i].exe);
	}
	reap(pid);
	free(p);
}

TEST(bad_tables_are_one_line)
{
	struct dbg_proc p[8];
	char err[256];
	uint64_t addr;
	pid_t pid = child(8, 5, &addr);

	ASSERT_LT(0, pid);
	EXPECT_GT(0, mpir_proctable_read(pid, addr, 8, p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "entry 5")) TH_LOG("%s", err);
	EXPECT_EQ(NULL, strchr(err, '\n'));
	EXPECT_EQ(-ERANGE, mpir_proctable_read(pid, addr, 0, p, err, sizeof(err)));
	EXPECT_EQ(-ERANGE, mpir_proctable_read(pid, 0, 8, p, err, sizeof(err)));
	EXPECT_EQ(-ERANGE, mpir_proctable_read(pid, addr, MPIR_PROCTABLE_MAX + 1, p, err,
					       sizeof(err)));
	/* a table that runs past the mapped memory */
	EXPECT_NE(0, mpir_proctable_read(pid, (uint64_t)-4096, 8, p, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "MPIR_proctable")) TH_LOG("%s", err);
	reap(pid);
	EXPECT_EQ(-ENOENT, mpir_proctable_read(pid, addr, 8, p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "launcher's memory")) TH_LOG("%s", err);
}

TEST_HARNESS_MAIN
