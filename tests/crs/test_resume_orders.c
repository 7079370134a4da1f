// SPDX-License-Identifier: GPL-2.0
/*
 * The release orders a restart hands crdbg's CRIU plugin (usr/crs/
 * resume.c): a debugger takes back the processes it debugged, never
 * what they started. In a tree of a rank its debugger had parked at
 * checkpoint ("held") and the rank's child that has libcrdbg too (an MPI
 * singleton's orted), "a debugger will attach" reaches the rank only;
 * the child is told none will and runs on. Where nothing was held (a
 * checkpoint from the shell) every libcrdbg process waits. Other
 * arguments reach every process as given, and a process without
 * libcrdbg gets no hook.
 */
#include <stdbool.h>
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

static void rank_tree(struct crs_meta *m, bool held)
{
	struct crs_proc rank = { .pid = RANK, .ppid = 1, .pgid = RANK, .sid = RANK,
				 .mpir = true, .trampoline = 0x1000, .held = held };
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

/* The hooks a restart's "a debugger will attach" gives a rank tree. */
static void check_set(struct __test_metadata *_metadata, bool held, uint64_t helper_debug)
{
	uint64_t set = CRDBG_CRS_STATE_RESTART | CRDBG_HOOK_DEBUG_SET;
	struct crs_meta m;
	char *o;

	rank_tree(&m, held);
	o = orders_for(&m, set);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(set, hook_of(o, RANK)) TH_LOG("%s", o);
	EXPECT_EQ(CRDBG_CRS_STATE_RESTART | helper_debug, hook_of(o, HELPER)) TH_LOG("%s", o);
	EXPECT_EQ(~0ULL, hook_of(o, PLAIN)) TH_LOG("%s", o);
	free(o);
	crs_meta_free(&m);
}

TEST(debugger_set_reaches_the_rank_not_its_helper)
{
	check_set(_metadata, true, CRDBG_HOOK_DEBUG_CLEAR);
}

TEST(other_arguments_reach_every_libcrdbg_process)
{
	uint64_t args[] = { CRDBG_CRS_STATE_RESTART | CRDBG_HOOK_DEBUG_CLEAR,
			    CRDBG_CRS_STATE_CONTINUE };
	struct crs_meta m;

	rank_tree(&m, true);
	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		char *o = orders_for(&m, args[i]);

		ASSERT_NE(NULL, o);
		EXPECT_EQ(args[i], hook_of(o, RANK)) TH_LOG("%s", o);
		EXPECT_EQ(args[i], hook_of(o, HELPER)) TH_LOG("%s", o);
		free(o);
	}
	crs_meta_free(&m);
}

TEST(nothing_held_every_libcrdbg_process_waits)
{
	check_set(_metadata, false, CRDBG_HOOK_DEBUG_SET);
}

/* The record is kept: formatted and parsed back with the rest. */
TEST(held_is_recorded_in_the_metadata)
{
	struct crs_meta m, back;
	char *buf, err[256];
	size_t len;

	rank_tree(&m, true);
	snprintf(m.handle, sizeof(m.handle), "20261203T000000-300");
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	ASSERT_EQ(0, crs_meta_parse(buf, len, &back, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(3, back.nr_procs);
	EXPECT_TRUE(back.procs[0].held);
	EXPECT_FALSE(back.procs[1].held);
	free(buf);
	crs_meta_free(&back);
	crs_meta_free(&m);
}

TEST_HARNESS_MAIN
