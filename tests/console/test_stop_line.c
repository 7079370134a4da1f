// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline's stop line (usr/console/stop-line.c) on replies made here
 * as the servers send them: ranks whose stop texts agree are one clause
 * whatever their fields, clauses come in rank order, and a line too long
 * is cut between clauses or at a space, never mid-word.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include <crdbg/dbgproto.h>
#include "sdm/idset.h"
#include "stop-line.h"

#define MAX_EV	16

struct reply {
	struct sdm_fe_result r;
	struct sdm_fe_event ev[MAX_EV];
	char text[MAX_EV][512];
};

/* A stop reply "stopped: TEXT" with fields FIELDS, from the ranks "R". */
static void add(struct reply *y, const char *ranks, const char *text, const char *fields)
{
	struct sdm_fe_event *e = &y->ev[y->r.nev];
	int n = snprintf(y->text[y->r.nev], sizeof(y->text[0]), DBGP_STOPPED "%s%c%s", text,
			 DBGP_FIELDS, fields);

	e->type = 0;
	e->src = sdm_set_new();
	if (!e->src || sdm_set_parse(e->src, ranks, NULL) < 0)
		abort();
	e->payload = (uint8_t *)y->text[y->r.nev];
	e->len = (size_t)n + 1;
	y->r.ev = y->ev;
	y->r.nev++;
}

static void done(struct reply *y)
{
	for (unsigned int i = 0; i < y->r.nev; i++)
		sdm_set_free(y->ev[i].src);
}

/* Six ranks at one breakpoint, each reply with its own pid: one clause. */
TEST(same_place_one_clause)
{
	struct reply y = { 0 };
	char buf[256], f[32];
	static const char *const order[] = { "4", "1", "5", "0", "3", "2" };

	for (int i = 0; i < 6; i++) {
		snprintf(f, sizeof(f), "pid=%d", 100 + i);
		add(&y, order[i], "breakpoint 2, Verlet::run at verlet.cpp:260", f);
	}
	dbg_stop_line(&y.r, buf, sizeof(buf));
	EXPECT_STREQ("[0-5] breakpoint 2, Verlet::run at verlet.cpp:260", buf);
	done(&y);
}

/* Places in the order of their first rank, whatever order the nodes answered. */
TEST(clauses_in_rank_order)
{
	struct reply y = { 0 };
	char buf[256];

	add(&y, "4-5", "signal SIGSEGV, f at a.c:3", "pid=7");
	add(&y, "1,3", "breakpoint 2, g at b.c:9", "pid=8");
	add(&y, "0,2", "breakpoint 2, g at b.c:9", "pid=9");
	dbg_stop_line(&y.r, buf, sizeof(buf));
	EXPECT_STREQ("[0-3] breakpoint 2, g at b.c:9; [4-5] signal SIGSEGV, f at a.c:3", buf);
	done(&y);
}

/* Too many places: whole clauses only, then "; ...". */
TEST(cut_between_clauses)
{
	struct reply y = { 0 };
	char buf[64], r[8], t[64];

	for (int i = 0; i < 8; i++) {
		snprintf(r, sizeof(r), "%d", i);
		snprintf(t, sizeof(t), "breakpoint %d, function_%d at file.c:%d", i + 1, i, i);
		add(&y, r, t, "");
	}
	dbg_stop_line(&y.r, buf, sizeof(buf));
	EXPECT_LT(strlen(buf), sizeof(buf));
	EXPECT_EQ(0, strncmp(buf, "[0] breakpoint 1, function_0 at file.c:0", 40)) TH_LOG("%s", buf);
	EXPECT_EQ(0, strcmp(buf + strlen(buf) - 5, "; ...")) TH_LOG("%s", buf);
	EXPECT_EQ(NULL, strstr(buf, "function_1 at file.c:1; ")) TH_LOG("%s", buf);
	done(&y);
}

/* One place longer than the line: cut at a space, with "...". */
TEST(one_long_place_cut_at_a_word)
{
	struct reply y = { 0 };
	char buf[40];

	add(&y, "0-5", "breakpoint 2, LAMMPS_NS::Verlet::run at verlet.cpp:260", "");
	dbg_stop_line(&y.r, buf, sizeof(buf));
	EXPECT_STREQ("[0-5] breakpoint 2, ...", buf);
	done(&y);
}

TEST(nothing_said)
{
	struct sdm_fe_result r = { 0 };
	char buf[64];

	dbg_stop_line(&r, buf, sizeof(buf));
	EXPECT_STREQ("after a parallel step", buf);
	dbg_stop_line(NULL, buf, sizeof(buf));
	EXPECT_STREQ("after a parallel step", buf);
}

TEST_HARNESS_MAIN
