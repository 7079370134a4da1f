// SPDX-License-Identifier: GPL-2.0
/*
 * Guest test: crdbg.ko loads, `crdbg kmod status` reports it over generic
 * netlink, and it unloads cleanly. Run as root in the guest with
 * CRDBG_BUILD pointing at the build tree.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "run_cmd.h"

static char crdbg[512], module[512];

static void paths(void)
{
	const char *build = getenv("CRDBG_BUILD") ?: "build";

	snprintf(crdbg, sizeof(crdbg), "%s/crdbg", build);
	snprintf(module, sizeof(module), "%s/kmod/crdbg.ko", build);
}

static bool module_loaded(void)
{
	return access("/sys/module/crdbg", F_OK) == 0;
}

FIXTURE(loaded) {
	char cmd[1024];
};

FIXTURE_SETUP(loaded)
{
	struct cmd_output o;

	paths();
	if (geteuid() != 0)
		SKIP(return, "loading a module needs root (run in the guest)");
	if (!module_loaded()) {
		snprintf(self->cmd, sizeof(self->cmd), "insmod %s", module);
		ASSERT_EQ(0, run_cmd(&o, self->cmd)) TH_LOG("insmod: %s", o.err);
	}
	ASSERT_TRUE(module_loaded());
}

FIXTURE_TEARDOWN(loaded)
{
	struct cmd_output o;

	if (module_loaded())
		EXPECT_EQ(0, run_cmd(&o, "rmmod crdbg")) TH_LOG("rmmod: %s", o.err);
}

TEST_F(loaded, status_reports_version_and_family)
{
	struct cmd_output o;

	snprintf(self->cmd, sizeof(self->cmd), "%s kmod status", crdbg);
	ASSERT_EQ(0, run_cmd(&o, self->cmd)) TH_LOG("%s", o.err);
	EXPECT_NE(NULL, strstr(o.out, "crdbg.ko " CRDBG_VERSION " loaded"));
	EXPECT_NE(NULL, strstr(o.out, "netlink family crdbg v1"));
	EXPECT_NE(NULL, strstr(o.out, "0 processes frozen"));
}

TEST_F(loaded, unload_then_status_fails_in_one_line)
{
	struct cmd_output o;

	ASSERT_EQ(0, run_cmd(&o, "rmmod crdbg")) TH_LOG("rmmod: %s", o.err);
	ASSERT_FALSE(module_loaded());
	snprintf(self->cmd, sizeof(self->cmd), "%s kmod status", crdbg);
	EXPECT_EQ(1, run_cmd(&o, self->cmd));
	EXPECT_EQ(1, count_lines(o.err));
	EXPECT_NE(NULL, strstr(o.err, "not loaded"));
}

/* Generous: module loading is slow under TCG on a busy 2-core host. */
TEST_F_TIMEOUT(loaded, reload_cycles_cleanly, 240)
{
	struct cmd_output o;
	int i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, run_cmd(&o, "rmmod crdbg")) TH_LOG("rmmod: %s", o.err);
		snprintf(self->cmd, sizeof(self->cmd), "insmod %s", module);
		ASSERT_EQ(0, run_cmd(&o, self->cmd)) TH_LOG("insmod: %s", o.err);
		snprintf(self->cmd, sizeof(self->cmd), "%s kmod status", crdbg);
		ASSERT_EQ(0, run_cmd(&o, self->cmd)) TH_LOG("%s", o.err);
	}
}

TEST_HARNESS_MAIN
