// SPDX-License-Identifier: GPL-2.0
/*
 * The servers' "part" command (usr/server/part-run.c) through a real
 * SDM tree of two crdbg-servers: what a server agrees to run, the steps
 * and ends of a part as replies merged in the tree, and bad commands.
 * The parts here are `crdbg-part verify|rm`, which run on the host; a
 * checkpoint's and a restart's parts need CRIU and run in the guest
 * (tests/debug/test_debugckpt.sh, tests/cluster/test_job_cluster.sh).
 * Daemons' stderr goes to build/tests/server/test_part_run.log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"

#define CMD_MS	20000

FIXTURE(part) {
	struct sdm_fe *fe;
	struct sdm_idset *all;
	char store[64];
	struct sdm_fe_result r;
};

FIXTURE_SETUP(part)
{
	struct sdm_fe_config c = {
		.nservers = 2,
		.bindir = SDM_BINDIR,
		.server = "crdbg-server",
		.backend = "gdb",
		.log_path = SDM_BINDIR "/../tests/server/test_part_run.log",
		.init_timeout_ms = 40000,
	};
	char err[256] = "";

	memset(&self->r, 0, sizeof(self->r));
	snprintf(self->store, sizeof(self->store), "/tmp/crdbg-partrun-%d", (int)getpid());
	ASSERT_EQ(0, sdm_fe_start(&c, &self->fe, err, sizeof(err))) TH_LOG("%s", err);
	self->all = sdm_set_new();
	ASSERT_NE(NULL, self->all);
	ASSERT_EQ(0, sdm_set_add_range(self->all, 0, 1));
}

FIXTURE_TEARDOWN(part)
{
	char cmd[128];

	sdm_fe_result_free(&self->r);
	sdm_set_free(self->all);
	if (self->fe)
		sdm_fe_stop(self->fe);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->store);
	if (system(cmd))
		TH_LOG("cannot remove %s", self->store);
}

/* "part TEXT" to both ranks; the one merged answer's text, or NULL. */
static const char *one_answer(struct _test_data_part *self, const char *text, bool *error)
{
	char cmd[1024];

	sdm_fe_result_free(&self->r);
	memset(&self->r, 0, sizeof(self->r));
	snprintf(cmd, sizeof(cmd), "part %s", text);
	if (sdm_fe_command(self->fe, self->all, cmd, CMD_MS, &self->r) || self->r.nev != 1 ||
	    sdm_set_size(self->r.ev[0].src) != 2)
		return NULL;
	*error = self->r.ev[0].type == SDM_MSG_ERROR;
	return (const char *)self->r.ev[0].payload;
}

/*
 * A server runs its part program's operations and nothing else, and the
 * part program takes nothing it was not made for: its refusal is the
 * part's failed step, which the wait reports.
 */
TEST_F_TIMEOUT(part, runs_only_part_operations, 120)
{
	const char *t;
	bool error;

	t = one_answer(self, "start ls\x1f-l", &error);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(error);
	EXPECT_STREQ("error: part start wants checkpoint|restart|verify|rm ...", t);
	t = one_answer(self, "start list\x1f--json", &error);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(error);
	t = one_answer(self, "wait 1000 verified", &error);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(error);
	EXPECT_STREQ("error: ended: no part was started", t);
	t = one_answer(self, "start rm\x1fjob-1\x1f--criu-opt=--action-script=x", &error);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(error);
	EXPECT_STREQ("started", t);
	t = one_answer(self, "wait 15000 stored", &error);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(error);
	EXPECT_NE(NULL, strstr(t, "unknown argument \"--criu-opt=--action-script=x\"")) TH_LOG("%s", t);
	t = one_answer(self, "finish 5000", &error);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0, strncmp(t, "exit 2", 6)) TH_LOG("%s", t);
}

/*
 * A part that fails: both ranks' "started" and their failures are one
 * answer each, the failure says crdbg's reason, the end its status.
 */
TEST_F_TIMEOUT(part, a_failing_part_ends_with_its_reason, 120)
{
	char start[512];
	const char *t;
	bool error;

	snprintf(start, sizeof(start),
		 "start verify\x1f" "20261125T000000-1\x1f--store\x1f%s", self->store);
	t = one_answer(self, start, &error);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(error);
	EXPECT_STREQ("started", t);
	t = one_answer(self, "wait 15000 verified", &error);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(error);
	EXPECT_EQ(0, strncmp(t, "error: ended: ", 14)) TH_LOG("%s", t);
	EXPECT_NE(NULL, strstr(t, "20261125T000000-1")) TH_LOG("%s", t);
	/* a wait for a set of parked processes: the part ended, none said it */
	t = one_answer(self, "wait 15000 debug 4000001,4000002", &error);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(error);
	EXPECT_EQ(0, strncmp(t, "error: ended: ", 14)) TH_LOG("%s", t);
	/* an ended part takes no orders */
	t = one_answer(self, "order restore", &error);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(error);
	EXPECT_EQ(0, strncmp(t, "error: ended: ", 14)) TH_LOG("%s", t);
	t = one_answer(self, "finish 5000", &error);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(error);
	EXPECT_EQ(0, strncmp(t, "exit ", 5)) TH_LOG("%s", t);
	EXPECT_NE(0, atoi(t + 5)) TH_LOG("%s", t);
	EXPECT_NE(NULL, strstr(t, "20261125T000000-1")) TH_LOG("%s", t);
}

/* A part that succeeds: rm of a checkpoint that is not there is done. */
TEST_F_TIMEOUT(part, a_part_exit_status_comes_back, 120)
{
	char start[512];
	const char *t;
	bool error;

	ASSERT_EQ(0, mkdir(self->store, 0700));
	snprintf(start, sizeof(start),
		 "start rm\x1f" "20261125T000000-1\x1f--store\x1f%s", self->store);
	t = one_answer(self, start, &error);
	ASSERT_NE(NULL, t);
	EXPECT_STREQ("started", t);
	t = one_answer(self, "finish 15000", &error);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(error);
	EXPECT_EQ(0, strncmp(t, "exit ", 5)) TH_LOG("%s", t);
	/* no part of either rank runs: nothing more will come from them */
	t = one_answer(self, "drain 5000", &error);
	ASSERT_NE(NULL, t);
	EXPECT_FALSE(error);
	EXPECT_STREQ("drained", t);
}

/* Malformed part commands are refused, one line each; the server lives on. */
TEST_F_TIMEOUT(part, malformed_commands_refused, 120)
{
	static const char *const bad[] = {
		"", "bogus", "wait", "wait x verified", "wait 1000", "wait 1000 debug 0",
		"wait 99999999999 verified", "finish", "finish -1", "finish 10 20",
		"wait 1000 debug 5,", "wait 1000 debug 5,,6",
		"start", "start \x1f\x1f", "order", "drain", "drain x",
	};
	const char *t;
	bool error;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = one_answer(self, bad[i], &error);
		ASSERT_NE(NULL, t) TH_LOG("part %s", bad[i]);
		EXPECT_TRUE(error) TH_LOG("part %s: %s", bad[i], t);
		EXPECT_EQ(0, strncmp(t, "error: ", 7)) TH_LOG("part %s: %s", bad[i], t);
	}
	t = one_answer(self, "start rm\x1fx", &error);
	ASSERT_NE(NULL, t);
	EXPECT_STREQ("started", t);
}

TEST_HARNESS_MAIN
