// SPDX-License-Identifier: GPL-2.0
/* A pipeline of stages and its timing table (usr/crs/stages.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kselftest_harness.h"
#include "stages.h"

enum { ST_A, ST_B, ST_C, NR_ST };

struct state {
	int ran[NR_ST];
	int order[NR_ST];
	int n;
	int fail_at;		/* -1: none fails */
};

static int step(struct state *s, int i)
{
	struct timespec ms = { .tv_nsec = 2 * 1000 * 1000 };

	nanosleep(&ms, NULL);
	s->ran[i]++;
	s->order[s->n++] = i;
	return s->fail_at == i ? -EIO : 0;
}

static int run_a(void *state) { return step(state, ST_A); }
static int run_b(void *state) { return step(state, ST_B); }
static int run_c(void *state) { return step(state, ST_C); }

static const struct crs_stage stages[NR_ST] = {
	[ST_A] = { "first", run_a },
	[ST_B] = { "second one", run_b },
	[ST_C] = { "third", run_c },
};

TEST(every_stage_in_order)
{
	struct state s = { .fail_at = -1 };
	struct crs_timing t;
	double sum = 0;

	crs_timing_start(&t, stages, NR_ST);
	ASSERT_EQ(0, crs_stages_run(&t, &s));
	ASSERT_EQ(NR_ST, s.n);
	for (int i = 0; i < NR_ST; i++) {
		EXPECT_EQ(i, s.order[i]);
		EXPECT_EQ(1, s.ran[i]);
		/* each stage slept 2 ms: its own time, not the time since the start */
		EXPECT_GE(crs_timing_ms(&t, i), 1.5);
		sum += crs_timing_ms(&t, i);
	}
	EXPECT_GE(crs_timing_total(&t), 6.0);
	EXPECT_LT(sum - crs_timing_total(&t), 0.001);
	EXPECT_GT(sum - crs_timing_total(&t), -0.001);
}

TEST(a_failure_stops_the_pipeline)
{
	struct state s = { .fail_at = ST_B };
	struct crs_timing t;

	crs_timing_start(&t, stages, NR_ST);
	EXPECT_EQ(-EIO, crs_stages_run(&t, &s));
	EXPECT_EQ(1, s.ran[ST_A]);
	EXPECT_EQ(1, s.ran[ST_B]);
	EXPECT_EQ(0, s.ran[ST_C]);
	EXPECT_GT(t.end[ST_B], 0);	/* the failed stage's end is marked */
	EXPECT_EQ(0, t.end[ST_C]);
	EXPECT_EQ(0, crs_timing_ms(&t, ST_C));
	EXPECT_EQ(0, crs_timing_total(&t));	/* not reached the end */
}

TEST(the_table_is_one_line_in_the_stages_order)
{
	struct crs_timing t;
	char *buf = NULL, want[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ASSERT_NE(NULL, f);
	crs_timing_start(&t, stages, NR_ST);
	crs_timing_mark_at(&t, ST_A, t.start + 10);
	crs_timing_mark_at(&t, ST_B, t.start + 30);
	crs_timing_mark_at(&t, ST_C, t.start + 70);
	crs_timing_note(&t, ST_B, "(%d in place)", 3);
	crs_timing_print(&t, f, "thing took");
	ASSERT_EQ(0, fclose(f));
	snprintf(want, sizeof(want),
		 "crdbg: thing took 70 ms: first 10, second one 20 (3 in place), third 40\n");
	EXPECT_STREQ(want, buf);
	free(buf);
}

TEST_HARNESS_MAIN
