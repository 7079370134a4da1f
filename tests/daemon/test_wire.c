// SPDX-License-Identifier: GPL-2.0
/*
 * The service's wire codec (<crdbg/crdbgd.h>): requests and replies
 * round-trip; truncated, repeated, unknown and oversized input is
 * refused; the fds a request carries follow its kind and flags.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "crdbg/crdbgd.h"

TEST(checkpoint_request_round_trips)
{
	struct crdbgd_msg m = { .kind = CRDBGD_OP_CHECKPOINT }, back;
	uint8_t buf[CRDBGD_MSG_MAX];
	int n;

	crdbgd_set_u32(&m, CRDBGD_A_PID, 4242);
	crdbgd_set_u32(&m, CRDBGD_A_AFTER, CRS_AFTER_STOP);
	crdbgd_set_u32(&m, CRDBGD_A_FLAGS, CRDBGD_F_STORE | CRDBGD_F_FULL);
	ASSERT_EQ(0, crdbgd_set_str(&m, CRDBGD_A_CRIU_OPT, "--file-locks"));
	ASSERT_EQ(0, crdbgd_set_str(&m, CRDBGD_A_CRIU_OPT, "--ext-unix-sk"));
	n = crdbgd_format(&m, buf, sizeof(buf));
	ASSERT_GT(n, 8);
	ASSERT_EQ(0, crdbgd_parse(buf, (size_t)n, &back));
	EXPECT_EQ(CRDBGD_OP_CHECKPOINT, back.kind);
	EXPECT_EQ(4242u, back.pid);
	EXPECT_EQ((uint32_t)CRS_AFTER_STOP, back.after);
	EXPECT_EQ((uint32_t)(CRDBGD_F_STORE | CRDBGD_F_FULL), back.flags);
	EXPECT_EQ(2u, back.nr_criu_opts);
	EXPECT_STREQ("--ext-unix-sk", back.criu_opts[1]);
	EXPECT_FALSE(crdbgd_has(&back, CRDBGD_A_HANDLE));
	EXPECT_EQ(6u, crdbgd_request_fds(back.kind, back.flags));
}

TEST(part_requests_round_trip_with_their_fds)
{
	struct crdbgd_msg m = { .kind = CRDBGD_OP_PART_RESTART }, back;
	uint8_t buf[CRDBGD_MSG_MAX];
	int n;

	crdbgd_set_str(&m, CRDBGD_A_HANDLE, "20261203T120217-830");
	crdbgd_set_str(&m, CRDBGD_A_NODE_ROOTS, "812,815");
	crdbgd_set_str(&m, CRDBGD_A_EXPECT_META, "0123456789abcdef0123456789abcdef"
						 "0123456789abcdef0123456789abcdef");
	crdbgd_set_u32(&m, CRDBGD_A_FLAGS, CRDBGD_F_STORE | CRDBGD_F_TERMINAL | CRDBGD_F_DEBUG);
	n = crdbgd_format(&m, buf, sizeof(buf));
	ASSERT_GT(n, 8);
	ASSERT_EQ(0, crdbgd_parse(buf, (size_t)n, &back));
	EXPECT_TRUE(crdbgd_is_request(back.kind));
	EXPECT_STREQ("812,815", back.node_roots);
	EXPECT_EQ(64u, strlen(back.expect_meta));
	/* stdio, the store, the terminal */
	EXPECT_EQ(5u, crdbgd_request_fds(back.kind, back.flags));

	m = (struct crdbgd_msg){ .kind = CRDBGD_OP_PART_CHECKPOINT };
	crdbgd_set_u32(&m, CRDBGD_A_PID, 77);
	crdbgd_set_str(&m, CRDBGD_A_CID, "node0-12-1764763337000000000");
	crdbgd_set_u32(&m, CRDBGD_A_PART, 2);
	crdbgd_set_u32(&m, CRDBGD_A_PARTS, 3);
	n = crdbgd_format(&m, buf, sizeof(buf));
	ASSERT_GT(n, 8);
	ASSERT_EQ(0, crdbgd_parse(buf, (size_t)n, &back));
	EXPECT_EQ(2u, back.part);
	EXPECT_EQ(3u, back.parts);
	EXPECT_STREQ("node0-12-1764763337000000000", back.cid);
	/* stdio and the proof (pidfd, mem); no store named */
	EXPECT_EQ(5u, crdbgd_request_fds(back.kind, back.flags));
	EXPECT_EQ(3u, crdbgd_proof_fds(back.flags));
	/* a terminal goes with a restart only */
	EXPECT_EQ(5u, crdbgd_request_fds(back.kind, CRDBGD_F_TERMINAL));
	EXPECT_FALSE(crdbgd_is_request(CRDBGD_R_DONE));
	EXPECT_FALSE(crdbgd_is_request(CRDBGD_R_ENTRY));
}

TEST(reply_round_trips)
{
	struct crdbgd_msg m = { .kind = CRDBGD_R_DONE }, back;
	uint8_t buf[CRDBGD_MSG_MAX];
	int n;

	crdbgd_set_u32(&m, CRDBGD_A_RC, EPERM);
	crdbgd_set_str(&m, CRDBGD_A_ERROR, "pid 7 runs as another user: refused");
	crdbgd_set_u64(&m, CRDBGD_A_BYTES, 1ull << 40);
	n = crdbgd_format(&m, buf, sizeof(buf));
	ASSERT_GT(n, 0);
	ASSERT_EQ(0, crdbgd_parse(buf, (size_t)n, &back));
	EXPECT_EQ((uint32_t)EPERM, back.rc);
	EXPECT_EQ(1ull << 40, back.bytes);
	EXPECT_STREQ("pid 7 runs as another user: refused", back.error);
}

TEST(every_prefix_of_a_message_but_whole_is_refused_or_shorter)
{
	struct crdbgd_msg m = { .kind = CRDBGD_OP_RESTART }, back;
	uint8_t buf[CRDBGD_MSG_MAX];
	int n;

	crdbgd_set_str(&m, CRDBGD_A_HANDLE, "ckpt-1");
	crdbgd_set_u32(&m, CRDBGD_A_FLAGS, CRDBGD_F_LAZY);
	n = crdbgd_format(&m, buf, sizeof(buf));
	ASSERT_GT(n, 0);
	for (int len = 0; len < n; len++) {
		int r = crdbgd_parse(buf, (size_t)len, &back);

		/* a cut on an attribute's boundary is a valid, shorter message */
		if (!r) {
			EXPECT_FALSE(crdbgd_has(&back, CRDBGD_A_FLAGS) &&
				     crdbgd_has(&back, CRDBGD_A_HANDLE));
		} else {
			EXPECT_EQ(-EBADMSG, r);
		}
	}
}

TEST(malformed_messages_are_refused)
{
	struct crdbgd_msg m = { .kind = CRDBGD_OP_RM }, back;
	uint8_t buf[CRDBGD_MSG_MAX], twice[CRDBGD_MSG_MAX];
	uint16_t bad;
	int n;

	crdbgd_set_str(&m, CRDBGD_A_HANDLE, "h");
	n = crdbgd_format(&m, buf, sizeof(buf));
	ASSERT_GT(n, 8);
	/* the handle attribute twice */
	memcpy(twice, buf, (size_t)n);
	memcpy(twice + n, buf + 8, (size_t)n - 8);
	EXPECT_EQ(-EBADMSG, crdbgd_parse(twice, (size_t)(2 * n - 8), &back));
	/* an unknown attribute */
	memcpy(twice, buf, (size_t)n);
	bad = __CRDBGD_A_LAST;
	memcpy(twice + 8, &bad, 2);
	EXPECT_EQ(-EBADMSG, crdbgd_parse(twice, (size_t)n, &back));
	/* a string without its NUL */
	memcpy(twice, buf, (size_t)n);
	twice[n - 1] = 'x';
	EXPECT_EQ(-EBADMSG, crdbgd_parse(twice, (size_t)n, &back));
	/* another version, another magic, an unknown kind */
	memcpy(twice, buf, (size_t)n);
	twice[4] ^= 0xff;
	EXPECT_EQ(-EBADMSG, crdbgd_parse(twice, (size_t)n, &back));
	memcpy(twice, buf, (size_t)n);
	twice[0] ^= 1;
	EXPECT_EQ(-EBADMSG, crdbgd_parse(twice, (size_t)n, &back));
	memcpy(twice, buf, (size_t)n);
	bad = __CRDBGD_OP_LAST;
	memcpy(twice + 6, &bad, 2);
	EXPECT_EQ(-EBADMSG, crdbgd_parse(twice, (size_t)n, &back));
	/* a flag no one defined */
	m.kind = CRDBGD_OP_LIST;
	m.have = 0;
	crdbgd_set_u32(&m, CRDBGD_A_FLAGS, CRDBGD_F_STORE);
	n = crdbgd_format(&m, buf, sizeof(buf));
	ASSERT_GT(n, 8);
	buf[n - 1] = 0x80;	/* the u32's top byte */
	EXPECT_EQ(-EBADMSG, crdbgd_parse(buf, (size_t)n, &back));
	EXPECT_EQ(-EBADMSG, crdbgd_parse(buf, CRDBGD_MSG_MAX + 1, &back));
}

TEST(too_many_criu_opts_are_refused)
{
	struct crdbgd_msg m = { .kind = CRDBGD_OP_CHECKPOINT };

	for (int i = 0; i < CRS_MAX_CRIU_OPTS; i++)
		ASSERT_EQ(0, crdbgd_set_str(&m, CRDBGD_A_CRIU_OPT, "--file-locks"));
	EXPECT_EQ(-EINVAL, crdbgd_set_str(&m, CRDBGD_A_CRIU_OPT, "--file-locks"));
}

TEST_HARNESS_MAIN
