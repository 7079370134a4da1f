// SPDX-License-Identifier: GPL-2.0
/*
 * The crdbg command line as a user meets it: help, version, unknown input,
 * `kmod status` where the module cannot be loaded (the host kernel has
 * no modules; the guest group "foundation" covers the loaded case), and
 * a bad SDM_PEER_TIMEOUT.
 */
#include "kselftest_harness.h"
#include "run_cmd.h"

#define CRDBG "build/crdbg"

TEST(version_prints_name_and_version)
{
	struct cmd_output o;

	ASSERT_EQ(0, run_cmd(&o, CRDBG " --version"));
	EXPECT_EQ(0, strncmp(o.out, "crdbg ", 6));
	EXPECT_NE(NULL, strchr(o.out, '.'));
}

TEST(help_lists_every_command)
{
	struct cmd_output o;

	ASSERT_EQ(0, run_cmd(&o, CRDBG " --help"));
	EXPECT_NE(NULL, strstr(o.out, "Usage: crdbg"));
	EXPECT_NE(NULL, strstr(o.out, "  kmod "));
}

TEST(no_arguments_is_an_error_with_usage)
{
	struct cmd_output o;

	EXPECT_EQ(2, run_cmd(&o, CRDBG));
	EXPECT_NE(NULL, strstr(o.err, "Usage: crdbg"));
}

TEST(unknown_command_is_one_line_naming_it)
{
	struct cmd_output o;

	EXPECT_EQ(2, run_cmd(&o, CRDBG " frobnicate"));
	EXPECT_EQ(1, count_lines(o.err));
	EXPECT_NE(NULL, strstr(o.err, "\"frobnicate\""));
	EXPECT_NE(NULL, strstr(o.err, "crdbg --help"));
}

TEST(kmod_bad_subcommand_is_usage_error)
{
	struct cmd_output o;

	EXPECT_EQ(2, run_cmd(&o, CRDBG " kmod wat"));
	EXPECT_EQ(1, count_lines(o.err));
}

TEST(kmod_status_without_module_fails_in_one_line)
{
	struct cmd_output o;

	if (access("/sys/module/crdbg", F_OK) == 0)
		SKIP(return, "crdbg.ko is loaded here; the guest group tests that case");
	EXPECT_EQ(1, run_cmd(&o, CRDBG " kmod status"));
	EXPECT_EQ(1, count_lines(o.err));
	EXPECT_NE(NULL, strstr(o.err, "not loaded"));
	EXPECT_EQ(0, o.out[0]);
}

/* The debug servers inherit it: the console refuses a bad one up front. */
TEST(bad_peer_timeout_is_one_line_naming_it)
{
	struct cmd_output o;

	EXPECT_EQ(1, run_cmd(&o, "SDM_PEER_TIMEOUT=10m " CRDBG " debug -n 1 /bin/true"));
	EXPECT_EQ(1, count_lines(o.err));
	EXPECT_NE(NULL, strstr(o.err, "SDM_PEER_TIMEOUT='10m': want seconds, 1 to 3600"));
}

TEST_HARNESS_MAIN
