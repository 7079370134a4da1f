// SPDX-License-Identifier: GPL-2.0
/*
 * The console's pipeline on real gdbs: four "ranks", each under its own
 * GDB/MI driver, stop at a breakpoint; a print of a rank-dependent value
 * merges into one line per value, and their backtraces merge into the
 * two-group tree of a deadlock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "crdbg/merge.h"
#include "crdbg/gdbmi.h"

#ifndef GDBMI_PROG_DIR
#define GDBMI_PROG_DIR "build/tests/gdbmi"
#endif
#define NRANKS	4
#define WAIT_MS	20000

FIXTURE(job) {
	struct mi_driver *d[NRANKS];
};

FIXTURE_SETUP(job)
{
	memset(self->d, 0, sizeof(self->d));
	if (system("gdb --version >/dev/null 2>&1"))
		SKIP(return, "gdb is not installed");
	for (int r = 0; r < NRANKS; r++) {
		char arg[16];
		const char *args[] = { arg, NULL };
		struct mi_driver_opts o = {
			.program = GDBMI_PROG_DIR "/prog_ranks", .args = args,
			.cmd_timeout_ms = WAIT_MS,
		};

		snprintf(arg, sizeof(arg), "%d", r);
		ASSERT_EQ(0, mi_driver_start(&o, &self->d[r]));
		ASSERT_EQ(0, mi_break(self->d[r], "park", NULL));
	}
	/* Start every rank before waiting for any: they run side by side. */
	for (int r = 0; r < NRANKS; r++)
		ASSERT_EQ(0, mi_run(self->d[r]));
	for (int r = 0; r < NRANKS; r++) {
		struct mi_stop stop;

		ASSERT_EQ(1, mi_wait_stop(self->d[r], WAIT_MS, &stop));
		ASSERT_STREQ("park", stop.frame.func);
		mi_stop_release(&stop);
	}
}

FIXTURE_TEARDOWN(job)
{
	for (int r = 0; r < NRANKS; r++)
		mi_driver_free(self->d[r]);
}

TEST_F(job, print_merges_by_value)
{
	struct merge *m = merge_new();
	char *out;

	ASSERT_NE(NULL, m);
	for (int r = 0; r < NRANKS; r++) {
		char *val, reply[64];

		ASSERT_EQ(0, mi_print(self->d[r], "g_color", &val));
		snprintf(reply, sizeof(reply), "g_color = %s", val);
		free(val);
		ASSERT_EQ(0, merge_add(m, r, reply));
	}
	for (int r = 0; r < NRANKS; r++) {
		char *val, reply[64];

		ASSERT_EQ(0, mi_print(self->d[r], "g_rank * 0 + 7", &val));
		snprintf(reply, sizeof(reply), "%s", val);
		free(val);
		ASSERT_EQ(0, merge_add(m, NRANKS + r, reply));
	}
	out = merge_format(m);
	ASSERT_NE(NULL, out);
	EXPECT_STREQ("[0,2]: g_color = 0\n[1,3]: g_color = 1\n[4-7]: 7\n", out);
	free(out);
	merge_free(m);
}

TEST_F(job, stacks_show_two_groups)
{
	struct merge_stacks *t = merge_stacks_new();
	char *out;

	ASSERT_NE(NULL, t);
	for (int r = 0; r < NRANKS; r++) {
		const char *names[16];
		struct mi_frames bt;

		ASSERT_EQ(0, mi_backtrace(self->d[r], 16, &bt));
		ASSERT_LE(bt.n, 16);
		/* gdb lists innermost first; the tree wants outermost first. */
		for (size_t i = 0; i < bt.n; i++)
			names[i] = bt.frames[bt.n - 1 - i].func;
		ASSERT_EQ(0, merge_stacks_add(t, r, names, bt.n));
		mi_frames_release(&bt);
	}
	out = merge_stacks_format(t);
	ASSERT_NE(NULL, out);
	EXPECT_STREQ("[0-3] main\n"
		     "  [0,2] barrier_side\n"
		     "    [0,2] park\n"
		     "  [1,3] recv_side\n"
		     "    [1,3] park\n", out);
	free(out);
	merge_stacks_free(t);
}

TEST_HARNESS_MAIN
