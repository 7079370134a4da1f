// SPDX-License-Identifier: GPL-2.0
/*
 * The release orders a restart hands crdbg's CRIU plugin (usr/crs/
 * resume.c): a debugger takes back the processes it debugged, never
 * what they started. In a tree of a rank (libcrdbg, its parent outside)
 * and the rank's child that has libcrdbg too (an MPI singleton's
 * orted), "a debugger will attach" reaches the rank only; the child is
 * told none will and runs on. Other arguments reach every process as
 * given, and a process without libcrdbg gets no hook.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <crdbg/criu-gate.h>
#include <crdbg/mpir-checkpoint.h>

#include "kselftest_harness.h"
#include "meta.h"
#include "resume.h"

#define RANK	300
#define HELPER	301	/* the rank's child, with libcrdbg */
#define PLAIN	302	/* the rank's child, without */

static void rank_tree(struct crs_meta *m)
{
	struct crs_proc rank = { .pid = RANK, .ppid = 1, .pgid = RANK, .sid = RANK,
				 .mpir = true, .trampoline = 0x1000 };
	struct crs_proc helper = { .pid = HELPER, .ppid = RANK, .pgid = HELPER, .sid = HELPER,
				   .mpir = true, .trampoline = 0x2000 };
	struct crs_proc plain = { .pid = PLAIN, .ppid = RANK, .pgid = RANK, .sid = RANK };

	memset(m, 0, sizeof(*m));
	m->root = RANK;
	crs_meta_add_proc(m, &rank);
	crs_meta_add_proc(m, &helper);
	crs_meta_add_proc(m, &plain);
}

/* The hook argument the orders give pid, or ~0 when they give it none. */
static unsigned long long hook_of(const char *orders, pid_t pid)
{
	unsigned long long tramp, arg;
	const char *l;
	int p;

	for (l = orders; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (sscanf(l, "hook %d %llx %llx", &p, &tramp, &arg) == 3 && p == pid)
			return arg;
	return ~0ULL;
}

static char *orders_for(struct crs_meta *m, uint64_t arg)
{
	char *buf = NULL;
	size_t len = 0;

	return crs_release_orders(m, arg, NULL, &buf, &len) ? NULL : buf;
}

TEST(debugger_set_reaches_the_rank_not_its_helper)
{
	uint64_t set = CRDBG_CRS_STATE_RESTART | CRDBG_HOOK_DEBUG_SET;
	struct crs_meta m;
	char *o;

	rank_tree(&m);
	o = orders_for(&m, set);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(set, hook_of(o, RANK)) TH_LOG("%s", o);
	EXPECT_EQ(CRDBG_CRS_STATE_RESTART | CRDBG_HOOK_DEBUG_CLEAR, hook_of(o, HELPER))
		TH_LOG("%s", o);
	EXPECT_EQ(~0ULL, hook_of(o, PLAIN)) TH_LOG("%s", o);
	free(o);
	crs_meta_free(&m);
}

TEST(other_arguments_reach_every_libcrdbg_process)
{
	uint64_t args[] = { CRDBG_CRS_STATE_RESTART | CRDBG_HOOK_DEBUG_CLEAR,
			    CRDBG_CRS_STATE_CONTINUE };
	struct crs_meta m;

	rank_tree(&m);
	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		char *o = orders_for(&m, args[i]);

		ASSERT_NE(NULL, o);
		EXPECT_EQ(args[i], hook_of(o, RANK)) TH_LOG("%s", o);
		EXPECT_EQ(args[i], hook_of(o, HELPER)) TH_LOG("%s", o);
		free(o);
	}
	crs_meta_free(&m);
}

TEST(a_rank_under_a_launcher_without_libcrdbg_is_still_waited_for)
{
	struct crs_proc orted = { .pid = 200, .ppid = 1, .pgid = 200, .sid = 200 };
	struct crs_proc rank = { .pid = RANK, .ppid = 200, .pgid = 200, .sid = 200,
				 .mpir = true, .trampoline = 0x1000 };
	uint64_t set = CRDBG_CRS_STATE_CONTINUE | CRDBG_HOOK_DEBUG_SET;
	struct crs_meta m;

	memset(&m, 0, sizeof(m));
	m.root = 200;
	crs_meta_add_proc(&m, &orted);
	crs_meta_add_proc(&m, &rank);
	EXPECT_EQ(set, crs_hook_arg_of(&m, 1, set));
	crs_meta_free(&m);
}

TEST_HARNESS_MAIN
