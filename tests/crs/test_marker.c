// SPDX-License-Identifier: GPL-2.0
/* The debugger-side parsers of the MPIR marker lines. */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include <crdbg/mpir-checkpoint.h>

TEST(debug_info_both_spellings)
{
	char host[64];
	pid_t pid = 0;

	ASSERT_EQ(0, crs_parse_debug_info("MPIR debug info) node7:4242\n", host, sizeof(host), &pid));
	EXPECT_STREQ("node7", host);
	EXPECT_EQ(4242, pid);
	ASSERT_EQ(0, crs_parse_debug_info("MPIR_debug_info) localhost:17", host, sizeof(host), &pid));
	EXPECT_STREQ("localhost", host);
	EXPECT_EQ(17, pid);
	ASSERT_EQ(0, crs_parse_debug_info("  MPIR debug info)  a.b.c:1\r\n", host, sizeof(host), &pid));
	EXPECT_STREQ("a.b.c", host);
	EXPECT_EQ(1, pid);
}

TEST(debug_info_rejects)
{
	static const char *const bad[] = {
		"", "MPIR debug info)", "MPIR debug info) host", "MPIR debug info) :12",
		"MPIR debug info) host:", "MPIR debug info) host:12x", "MPIR debug info) host:0",
		"MPIR debug info) host:99999999999", "MPIR debug info) ho st:12",
		"MPIR-debug-info) host:12", "mpir debug info) host:12", "MPIR debug info host:12",
		"MPIR checkpoint handle) x",
	};
	char host[64];
	pid_t pid = 0;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(-EINVAL, crs_parse_debug_info(bad[i], host, sizeof(host), &pid))
			TH_LOG("accepted \"%s\"", bad[i]);
	/* Host longer than the caller's buffer. */
	EXPECT_EQ(-EINVAL, crs_parse_debug_info("MPIR debug info) abcdefgh:1", host, 4, &pid));
}

TEST(checkpoint_handle)
{
	char h[64];

	ASSERT_EQ(0, crs_parse_checkpoint_handle("MPIR checkpoint handle) 20261121T230000-7\n",
						 h, sizeof(h)));
	EXPECT_STREQ("20261121T230000-7", h);
	ASSERT_EQ(0, crs_parse_checkpoint_handle("MPIR_checkpoint_handle) abc", h, sizeof(h)));
	EXPECT_STREQ("abc", h);
	EXPECT_EQ(-EINVAL, crs_parse_checkpoint_handle("MPIR checkpoint handle) ", h, sizeof(h)));
	EXPECT_EQ(-EINVAL, crs_parse_checkpoint_handle("MPIR debug info) a:1", h, sizeof(h)));
	EXPECT_EQ(-EINVAL, crs_parse_checkpoint_handle("MPIR checkpoint handle) abcdef", h, 4));
}

TEST_HARNESS_MAIN
