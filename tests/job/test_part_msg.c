// SPDX-License-Identifier: GPL-2.0
/*
 * The part protocol's codec (<crdbg/job-part.h>, usr/job/part-msg.c):
 * every step and order round-trips, the lines earlier parts wrote still
 * parse, and what is not a message of the protocol is told apart from a
 * malformed one.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include <crdbg/job-part.h>

#define SHA_HEX "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static int parse(const char *line, struct job_part_msg *m)
{
	return job_part_msg_parse(line, strlen(line), m);
}

/* line parses, and formats back to itself. */
static int round_trip(const char *line, struct job_part_msg *m)
{
	char buf[JOB_PART_LINE_MAX + 1];
	int r = parse(line, m);

	if (r)
		return r;
	r = job_part_msg_format(m, buf, sizeof(buf));
	if (r < 0)
		return r;
	return (size_t)r == strlen(line) && !strcmp(buf, line) ? 0 : -EPROTO;
}

TEST(plain_steps)
{
	static const struct { const char *line; enum job_part_step step; } t[] = {
		{ "crdbg-part alive", JOB_STEP_ALIVE },
		{ "crdbg-part frozen", JOB_STEP_FROZEN },
		{ "crdbg-part dumped", JOB_STEP_DUMPED },
		{ "crdbg-part verified", JOB_STEP_VERIFIED },
	};
	struct job_part_msg m;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ASSERT_EQ(0, round_trip(t[i].line, &m)) TH_LOG("%s", t[i].line);
		EXPECT_EQ(t[i].step, m.step);
		EXPECT_STREQ(t[i].line + strlen(JOB_PART_PREFIX), job_part_step_name(m.step));
	}
	/* a newline at the end is the line's, not the message's */
	ASSERT_EQ(0, parse("crdbg-part frozen\n", &m));
	EXPECT_EQ(JOB_STEP_FROZEN, m.step);
}

TEST(stored)
{
	struct job_part_msg m;

	ASSERT_EQ(0, round_trip("crdbg-part stored handle=h-1 meta=" SHA_HEX " parent=- bytes=4096", &m));
	EXPECT_EQ(JOB_STEP_STORED, m.step);
	EXPECT_STREQ("h-1", m.stored.handle);
	EXPECT_STREQ("", m.stored.parent);
	EXPECT_EQ(4096, m.stored.bytes);
	EXPECT_EQ(0x00, m.stored.meta_sha[0]);
	EXPECT_EQ(0xff, m.stored.meta_sha[31]);
	EXPECT_STREQ("", m.stored.tty);

	ASSERT_EQ(0, round_trip("crdbg-part stored handle=h-2 meta=" SHA_HEX
				" parent=h-1 bytes=18446744073709551615 tty=8803:16:/dev/pts/3", &m));
	EXPECT_STREQ("h-1", m.stored.parent);
	EXPECT_EQ(UINT64_MAX, m.stored.bytes);
	EXPECT_STREQ("/dev/pts/3", m.stored.tty);
	EXPECT_EQ(0x8803, m.stored.tty_rdev);
	EXPECT_EQ(0x16, m.stored.tty_dev);
}

TEST(restored_task_exit)
{
	struct job_part_msg m;

	ASSERT_EQ(0, round_trip("crdbg-part restored cid=node0-12-345 parts=3 index=2", &m));
	EXPECT_EQ(JOB_STEP_RESTORED, m.step);
	EXPECT_STREQ("node0-12-345", m.restored.cid);
	EXPECT_EQ(3, m.restored.parts);
	EXPECT_EQ(2, m.restored.index);
	/* a checkpoint taken alone has no CID */
	ASSERT_EQ(0, round_trip("crdbg-part restored cid=- parts=0 index=0", &m));
	EXPECT_STREQ("", m.restored.cid);

	ASSERT_EQ(0, round_trip("crdbg-part task pid=4711 rank=3", &m));
	EXPECT_EQ(JOB_STEP_TASK, m.step);
	EXPECT_EQ(4711, m.task.pid);
	EXPECT_STREQ("3", m.task.rank);
	ASSERT_EQ(0, round_trip("crdbg-part task pid=12 rank=-", &m));

	ASSERT_EQ(0, round_trip("crdbg-part exit status=256", &m));
	EXPECT_EQ(JOB_STEP_EXIT, m.step);
	EXPECT_EQ(256, m.exit_status);
}

TEST(failed)
{
	char buf[JOB_PART_LINE_MAX + 1];
	struct job_part_msg m;

	ASSERT_EQ(0, round_trip("crdbg-part failed errno=3 why=no process with pid 999999", &m));
	EXPECT_EQ(JOB_STEP_FAILED, m.step);
	EXPECT_EQ(ESRCH, m.failed.err);
	EXPECT_STREQ("no process with pid 999999", m.failed.why);
	/* the reason is the rest of the line, spaces and '=' included */
	ASSERT_EQ(0, parse("crdbg-part failed errno=74 why=checkpoint h is corrupt: a=b ", &m));
	EXPECT_STREQ("checkpoint h is corrupt: a=b ", m.failed.why);

	/* a negative errno is taken as its value; a newline cannot end the line early */
	job_part_msg_failed(&m, -EBADMSG, "line one\nline %d", 2);
	EXPECT_EQ(EBADMSG, m.failed.err);
	ASSERT_LT(0, job_part_msg_format(&m, buf, sizeof(buf)));
	EXPECT_STREQ("crdbg-part failed errno=74 why=line one line 2", buf);
	/* no errno: EIO */
	job_part_msg_failed(&m, 0, "x");
	EXPECT_EQ(EIO, m.failed.err);
}

TEST(not_a_message)
{
	struct job_part_msg m = { .step = JOB_STEP_ALIVE };

	/* the restored program's lines */
	EXPECT_EQ(-ENOMSG, parse("hello from rank 0", &m));
	EXPECT_EQ(-ENOMSG, parse("crdbg-part", &m));
	EXPECT_EQ(-ENOMSG, parse("", &m));
	EXPECT_EQ(-ENOMSG, parse("MPIR debug info) node0:4711", &m));
	EXPECT_EQ(JOB_STEP_ALIVE, m.step);	/* untouched */
}

TEST(malformed)
{
	static const char *const bad[] = {
		"crdbg-part ",
		"crdbg-part froze",
		"crdbg-part frozenx",
		"crdbg-part frozen now",
		"crdbg-part alive ",
		"crdbg-part stored",
		"crdbg-part stored handle=h meta=00 parent=- bytes=1",
		"crdbg-part stored handle=../h meta=" SHA_HEX " parent=- bytes=1",
		"crdbg-part stored handle=h meta=" SHA_HEX " parent=- bytes=-1",
		"crdbg-part stored handle=h meta=" SHA_HEX " parent=- bytes=01",
		"crdbg-part stored handle=h meta=" SHA_HEX " parent=- bytes=18446744073709551616",
		"crdbg-part stored handle=h meta=" SHA_HEX " parent=- bytes=1 tty=-",
		"crdbg-part stored handle=h meta=" SHA_HEX " parent=- bytes=1 tty=1:2:/etc/passwd",
		"crdbg-part stored handle=h meta=" SHA_HEX " parent=- bytes=1 tty=01:2:/dev/pts/1",
		"crdbg-part stored meta=" SHA_HEX " handle=h parent=- bytes=1",
		"crdbg-part stored handle=h meta=" SHA_HEX "00 parent=- bytes=1",
		"crdbg-part stored handle=h  meta=" SHA_HEX " parent=- bytes=1",
		"crdbg-part restored cid=a b parts=1 index=0",
		"crdbg-part restored cid=c parts=4294967296 index=0",
		"crdbg-part restored cid=c parts=1",
		"crdbg-part task pid=0 rank=1",
		"crdbg-part task pid=1073741824 rank=1",
		"crdbg-part task pid=1 rank=one",
		"crdbg-part exit status=",
		"crdbg-part exit 0",
		"crdbg-part failed errno=0 why=x",
		"crdbg-part failed errno=5",
		"crdbg-part failed why=x",
	};
	struct job_part_msg m;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EBADMSG, parse(bad[i], &m)) TH_LOG("%s", bad[i]);
	}
	/* a NUL inside the line */
	EXPECT_EQ(-EBADMSG, job_part_msg_parse("crdbg-part failed errno=5 why=a\0b", 33, &m));
}

TEST(format_refuses)
{
	struct job_part_msg m = { .step = JOB_STEP_STORED };
	char buf[JOB_PART_LINE_MAX + 1], small[16];

	/* no handle */
	EXPECT_EQ(-EINVAL, job_part_msg_format(&m, buf, sizeof(buf)));
	strcpy(m.stored.handle, "h");
	strcpy(m.stored.tty, "/tmp/x");
	EXPECT_EQ(-EINVAL, job_part_msg_format(&m, buf, sizeof(buf)));
	m.stored.tty[0] = 0;
	EXPECT_LT(0, job_part_msg_format(&m, buf, sizeof(buf)));
	EXPECT_EQ(-ENOSPC, job_part_msg_format(&m, small, sizeof(small)));
	m.step = __JOB_STEP_LAST;
	EXPECT_EQ(-EINVAL, job_part_msg_format(&m, buf, sizeof(buf)));
	m.step = JOB_STEP_UNSPEC;
	EXPECT_EQ(-EINVAL, job_part_msg_format(&m, buf, sizeof(buf)));
}

TEST(orders)
{
	char buf[16];
	enum job_part_order o;

	for (int i = JOB_ORDER_UNSPEC + 1; i <= JOB_ORDER_MAX; i++) {
		int n = job_part_order_format((enum job_part_order)i, buf, sizeof(buf));

		ASSERT_LT(0, n);
		ASSERT_EQ(0, job_part_order_parse(buf, (size_t)n, &o));
		EXPECT_EQ(i, o);
	}
	ASSERT_EQ(0, job_part_order_parse("dump\n", 5, &o));
	EXPECT_EQ(JOB_ORDER_DUMP, o);
	EXPECT_EQ(-EBADMSG, job_part_order_parse("dum", 3, &o));
	EXPECT_EQ(-EBADMSG, job_part_order_parse("dumps", 5, &o));
	EXPECT_EQ(-EBADMSG, job_part_order_parse("", 0, &o));
	EXPECT_EQ(-EINVAL, job_part_order_format(JOB_ORDER_UNSPEC, buf, sizeof(buf)));
	EXPECT_EQ(-ENOSPC, job_part_order_format(JOB_ORDER_RELEASE, buf, 4));
}

TEST(end_agents)
{
	char buf[32];
	int code = -1;

	ASSERT_EQ(17, job_part_end_agents_format(0, buf, sizeof(buf)));
	EXPECT_STREQ("end-agents code=0", buf);
	ASSERT_EQ(0, job_part_end_agents_parse(buf, strlen(buf), &code));
	EXPECT_EQ(0, code);
	ASSERT_EQ(0, job_part_end_agents_parse("end-agents code=255\n", 20, &code));
	EXPECT_EQ(255, code);
	EXPECT_EQ(-EBADMSG, job_part_end_agents_parse("end-agents code=256", 19, &code));
	EXPECT_EQ(-EBADMSG, job_part_end_agents_parse("end-agents code=07", 18, &code));
	EXPECT_EQ(-EBADMSG, job_part_end_agents_parse("end-agents code=", 16, &code));
	EXPECT_EQ(-EBADMSG, job_part_end_agents_parse("end-agents code=1x", 18, &code));
	EXPECT_EQ(-EBADMSG, job_part_end_agents_parse("release", 7, &code));
	EXPECT_EQ(-EBADMSG, job_part_order_parse("end-agents code=0", 17, &(enum job_part_order){ 0 }));
	EXPECT_EQ(-EINVAL, job_part_end_agents_format(256, buf, sizeof(buf)));
	EXPECT_EQ(-EINVAL, job_part_end_agents_format(-1, buf, sizeof(buf)));
	EXPECT_EQ(-ENOSPC, job_part_end_agents_format(7, buf, 10));
	EXPECT_EQ(255, code);	/* untouched by a refusal */
}

TEST_HARNESS_MAIN
