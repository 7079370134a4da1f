// SPDX-License-Identifier: GPL-2.0
/*
 * The debugger protocol (crdbg/dbgproto.h): every command encoded and
 * parsed back, malformed commands refused with the documented error,
 * replies classified, stop texts and fields, status lines.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "crdbg/dbgproto.h"

/* Parse a copy of a C string (dbgp_parse writes a NUL after it). */
static int parse(const char *s, char *buf, size_t size, struct dbgp_cmd *ret)
{
	size_t len = strlen(s);

	if (len + 1 > size)
		return -E2BIG;
	memcpy(buf, s, len);
	return dbgp_parse(buf, len, ret);
}

TEST(every_command_round_trips)
{
	static const struct dbgp_cmd cmds[] = {
		{ .verb = DBGP_LOAD, .arg = "/bin/prog\x1f-a\x1f" "b c" },
		{ .verb = DBGP_ATTACH, .pid = 4242, .arg = "/usr/bin/my prog" },
		{ .verb = DBGP_START, .wait_ms = 500 },
		{ .verb = DBGP_EXEC, .wait_ms = 0, .exec = DBGP_EXEC_CONTINUE },
		{ .verb = DBGP_EXEC, .wait_ms = 7, .exec = DBGP_EXEC_NEXTI },
		{ .verb = DBGP_EXEC, .wait_ms = DBGP_WAIT_MAX_MS, .exec = DBGP_EXEC_FINISH },
		{ .verb = DBGP_WAIT, .wait_ms = 1 },
		{ .verb = DBGP_INTERRUPT, .wait_ms = 500 },
		{ .verb = DBGP_START, .wait_ms = 500, .hold_exits = true },
		{ .verb = DBGP_EXEC, .wait_ms = 3, .exec = DBGP_EXEC_NEXT, .hold_exits = true },
		{ .verb = DBGP_WAIT, .wait_ms = 0, .hold_exits = true },
		{ .verb = DBGP_INTERRUPT, .wait_ms = 9, .hold_exits = true },
		{ .verb = DBGP_PRINT, .arg = "a[1] + *p" },
		{ .verb = DBGP_BREAK, .arg = "prog.c:12" },
		{ .verb = DBGP_BT },
		{ .verb = DBGP_BT, .arg = "4" },
		{ .verb = DBGP_BT, .arg = "-2" },
		{ .verb = DBGP_STACK },
		{ .verb = DBGP_STATUS },
		{ .verb = DBGP_CLI, .arg = "info threads" },
		{ .verb = DBGP_INPUT, .arg = "" },
		{ .verb = DBGP_INPUT, .arg = "two  spaces " },
	};
	char buf[DBGP_CMD_MAX + 1];

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const struct dbgp_cmd *c = &cmds[i];
		struct dbgp_cmd p;
		int n = dbgp_encode(buf, sizeof(buf), c);

		ASSERT_LT(0, n) TH_LOG("command %zu", i);
		ASSERT_EQ(strlen(buf), (size_t)n);
		ASSERT_EQ(0, dbgp_parse(buf, n, &p)) TH_LOG("'%s'", buf);
		EXPECT_EQ(c->verb, p.verb);
		EXPECT_EQ(c->wait_ms, p.wait_ms);
		EXPECT_EQ(c->exec, p.exec);
		EXPECT_EQ(c->pid, p.pid);
		EXPECT_EQ(c->hold_exits, p.hold_exits) TH_LOG("'%s'", buf);
		if (c->arg && c->verb != DBGP_EXEC)
			EXPECT_STREQ(c->arg, p.arg);
	}
}

TEST(wire_form_is_the_documented_one)
{
	struct dbgp_cmd exec = { .verb = DBGP_EXEC, .wait_ms = 500, .exec = DBGP_EXEC_STEP };
	struct dbgp_cmd attach = { .verb = DBGP_ATTACH, .pid = 12, .arg = "/a.out" };
	struct dbgp_cmd bt = { .verb = DBGP_BT };
	char buf[128];

	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &exec));
	EXPECT_STREQ("exec 500 step", buf);
	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &attach));
	EXPECT_STREQ("attach 12 /a.out", buf);
	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &bt));
	EXPECT_STREQ("bt", buf);
	bt.arg = "4";
	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &bt));
	EXPECT_STREQ("bt 4", buf);
	bt.arg = "four";
	EXPECT_EQ(-EINVAL, dbgp_encode(buf, sizeof(buf), &bt));
	exec.hold_exits = true;
	exec.exec = DBGP_EXEC_UNTIL;
	exec.arg = "app.c:9";
	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &exec));
	EXPECT_STREQ("exec 500 hold until app.c:9", buf);
	exec = (struct dbgp_cmd){ .verb = DBGP_WAIT, .wait_ms = 0, .hold_exits = true };
	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &exec));
	EXPECT_STREQ("wait 0 hold", buf);
}

/* The parallel step's verb and run kind (usr/console/pstep.c). */
TEST(mpi_verb_and_mpi_return)
{
	struct dbgp_cmd state = { .verb = DBGP_MPI };
	struct dbgp_cmd frames = { .verb = DBGP_MPI, .arg = "frames off" };
	struct dbgp_cmd back = { .verb = DBGP_EXEC, .exec = DBGP_EXEC_MPI_RETURN };
	struct dbgp_cmd p;
	char buf[128], in[128];

	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &state));
	EXPECT_STREQ("mpi", buf);
	ASSERT_EQ(0, parse("mpi", in, sizeof(in), &p));
	EXPECT_EQ(DBGP_MPI, p.verb);
	EXPECT_STREQ("", p.arg);
	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &frames));
	EXPECT_STREQ("mpi frames off", buf);
	ASSERT_EQ(0, parse("mpi frames off", in, sizeof(in), &p));
	EXPECT_STREQ("frames off", p.arg);
	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &back));
	EXPECT_STREQ("exec 0 mpi-return", buf);
	ASSERT_EQ(0, parse("exec 0 mpi-return", in, sizeof(in), &p));
	EXPECT_EQ(DBGP_EXEC_MPI_RETURN, p.exec);
	EXPECT_EQ(-ENOENT, parse("mpix", in, sizeof(in), &p));
}

/* The checkpoint's park/plan verb (usr/server/hook-park.c). */
TEST(hook_verb)
{
	struct dbgp_cmd park = { .verb = DBGP_HOOK, .arg = "park 513" };
	struct dbgp_cmd p;
	char buf[128], in[128];

	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &park));
	EXPECT_STREQ("hook park 513", buf);
	ASSERT_EQ(0, parse("hook plan", in, sizeof(in), &p));
	EXPECT_EQ(DBGP_HOOK, p.verb);
	EXPECT_STREQ("plan", p.arg);
	EXPECT_EQ(-ENOENT, parse("hooks", in, sizeof(in), &p));
}

/* A job checkpoint part's verb (usr/server/part-run.c): its text as is. */
TEST(part_verb)
{
	struct dbgp_cmd start = { .verb = DBGP_PART, .arg = "start verify\x1fH" };
	struct dbgp_cmd p;
	char buf[128], in[128];

	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &start));
	EXPECT_STREQ("part start verify\x1fH", buf);
	ASSERT_EQ(0, parse("part wait 1000 frozen", in, sizeof(in), &p));
	EXPECT_EQ(DBGP_PART, p.verb);
	EXPECT_STREQ("wait 1000 frozen", p.arg);
	start.arg = "order dump\nrelease";
	EXPECT_EQ(-EINVAL, dbgp_encode(buf, sizeof(buf), &start));
	EXPECT_EQ(-ENOENT, parse("parts", in, sizeof(in), &p));
}

/* The hook command's argument, both ways. */
TEST(hook_arguments)
{
	static const char *const bad[] = {
		"", "park", "park ", "park -1", "park 1x", "park 18446744073709551616",
		"parked 3", "plan ", "Release", "unpark 1",
	};
	struct dbgp_hook_cmd h;
	char buf[64];

	ASSERT_EQ(0, dbgp_hook_parse("park 513", &h));
	EXPECT_EQ(DBGP_HOOK_PARK, h.op);
	EXPECT_EQ(513, h.arg);
	ASSERT_EQ(0, dbgp_hook_parse("park 18446744073709551615", &h));
	EXPECT_EQ(UINT64_MAX, h.arg);
	ASSERT_EQ(0, dbgp_hook_parse("release", &h));
	EXPECT_EQ(DBGP_HOOK_RELEASE, h.op);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, dbgp_hook_parse(bad[i], &h)) TH_LOG("\"%s\"", bad[i]);
	}
	EXPECT_EQ(8, dbgp_hook_format(buf, sizeof(buf),
				      &(struct dbgp_hook_cmd){ .op = DBGP_HOOK_PARK, .arg = 513 }));
	EXPECT_STREQ("park 513", buf);
	EXPECT_LT(0, dbgp_hook_format(buf, sizeof(buf),
				      &(struct dbgp_hook_cmd){ .op = DBGP_HOOK_UNPARK }));
	EXPECT_STREQ("unpark", buf);
	EXPECT_EQ(-EINVAL, dbgp_hook_format(buf, sizeof(buf),
					    &(struct dbgp_hook_cmd){ .op = 7 }));
	EXPECT_EQ(-ENOSPC, dbgp_hook_format(buf, 4,
					    &(struct dbgp_hook_cmd){ .op = DBGP_HOOK_PLAN }));
}

/* The part command's argument: what the console formats, the server parses the same. */
TEST(part_arguments)
{
	static const char *const bad[] = {
		"", "bogus", "wait", "wait x verified", "wait 1000", "wait 1000 debug 0",
		"wait 1000 debug", "wait 1000 debug 5 6", "wait 99999999999 verified",
		"wait 1000 debug x", "finish", "finish -1", "finish 10 20", "finish ",
		"start", "start ", "start \x1f\x1f", "start ls\x1f-l", "start list",
		"order", "order ", "drain", "drain x", "wait 1000 debug 5,", "wait 1000 debug ,5",
		"wait 1000 debug 5,,6", "wait 1000 debug 5,0", "wait 1000 debug 5, 6",
	};
	struct dbgp_part_cmd c = { .op = DBGP_PART_START, .argc = 3,
				   .argv = { NULL, "restart", "H", "--debug", NULL } }, d;
	const char *why;
	char buf[DBGP_CMD_MAX + 1], in[256];

	ASSERT_LT(0, dbgp_part_format(buf, sizeof(buf), &c));
	EXPECT_STREQ("start restart\x1fH\x1f--debug", buf);
	ASSERT_EQ(0, dbgp_part_parse(buf, &c, &why));
	EXPECT_EQ(DBGP_PART_START, c.op);
	ASSERT_EQ(3, c.argc);
	EXPECT_STREQ("restart", c.argv[1]);
	EXPECT_STREQ("--debug", c.argv[3]);
	EXPECT_EQ(NULL, c.argv[4]);
	c = (struct dbgp_part_cmd){ .op = DBGP_PART_START, .argc = 1, .argv = { NULL, "list" } };
	EXPECT_EQ(-EINVAL, dbgp_part_format(buf, sizeof(buf), &c));
	c = (struct dbgp_part_cmd){ .op = DBGP_PART_START, .argc = 2,
				    .argv = { NULL, "rm", "a\x1f" "b" } };
	EXPECT_EQ(-EINVAL, dbgp_part_format(buf, sizeof(buf), &c));

	c = (struct dbgp_part_cmd){ .op = DBGP_PART_WAIT, .ms = 1000, .pid = { 42 }, .npid = 1 };
	ASSERT_LT(0, dbgp_part_format(buf, sizeof(buf), &c));
	EXPECT_STREQ("wait 1000 debug 42", buf);
	ASSERT_EQ(0, dbgp_part_parse(buf, &c, &why));
	EXPECT_EQ(1u, c.npid);
	EXPECT_EQ(42, c.pid[0]);
	EXPECT_STREQ("debug", c.step);
	/* one wait for a set of processes: the whole set round-trips */
	c = (struct dbgp_part_cmd){ .op = DBGP_PART_WAIT, .ms = 7, .npid = DBGP_PART_PIDS_MAX };
	for (unsigned int i = 0; i < DBGP_PART_PIDS_MAX; i++)
		c.pid[i] = 1000000000 + (int)i;
	ASSERT_LT(0, dbgp_part_format(buf, sizeof(buf), &c));
	memset(&d, 0, sizeof(d));
	ASSERT_EQ(0, dbgp_part_parse(buf, &d, &why));
	EXPECT_EQ((unsigned int)DBGP_PART_PIDS_MAX, d.npid);
	EXPECT_EQ(0, memcmp(c.pid, d.pid, sizeof(c.pid)));
	c.npid = DBGP_PART_PIDS_MAX + 1;
	EXPECT_EQ(-EINVAL, dbgp_part_format(buf, sizeof(buf), &c));
	c = (struct dbgp_part_cmd){ .op = DBGP_PART_WAIT, .ms = 7, .pid = { 5, 0 }, .npid = 2 };
	EXPECT_EQ(-EINVAL, dbgp_part_format(buf, sizeof(buf), &c));
	c = (struct dbgp_part_cmd){ .op = DBGP_PART_WAIT, .ms = 5, .step = "frozen" };
	ASSERT_LT(0, dbgp_part_format(buf, sizeof(buf), &c));
	EXPECT_STREQ("wait 5 frozen", buf);
	c = (struct dbgp_part_cmd){ .op = DBGP_PART_WAIT, .ms = 5, .step = "debug" };
	EXPECT_EQ(-EINVAL, dbgp_part_format(buf, sizeof(buf), &c));
	c = (struct dbgp_part_cmd){ .op = DBGP_PART_ORDER, .line = "dump" };
	ASSERT_LT(0, dbgp_part_format(buf, sizeof(buf), &c));
	EXPECT_STREQ("order dump", buf);
	c = (struct dbgp_part_cmd){ .op = DBGP_PART_ORDER, .line = "dump\nrelease" };
	EXPECT_EQ(-EINVAL, dbgp_part_format(buf, sizeof(buf), &c));
	c = (struct dbgp_part_cmd){ .op = DBGP_PART_DRAIN, .ms = 3000 };
	ASSERT_LT(0, dbgp_part_format(buf, sizeof(buf), &c));
	EXPECT_STREQ("drain 3000", buf);
	c = (struct dbgp_part_cmd){ .op = DBGP_PART_FINISH, .ms = DBGP_WAIT_MAX_MS + 1 };
	EXPECT_EQ(-EINVAL, dbgp_part_format(buf, sizeof(buf), &c));

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(in, sizeof(in), "%s", bad[i]);
		why = NULL;
		EXPECT_EQ(-EINVAL, dbgp_part_parse(in, &c, &why)) TH_LOG("\"%s\"", bad[i]);
		EXPECT_NE(NULL, why);
	}
}

/* The answer to part finish: what the server formats, the console parses the same. */
TEST(part_end)
{
	static const char *const bad[] = {
		"", "exit", "exit ", "exit x", "exit 3", "exit 3:", "exit 3:x", "exit 256: x",
		"exit -1: x", "exit 0: x", "exit 0 ", "Running", "running ", "exit 3: a\nb",
	};
	struct dbgp_part_end e = { .status = 2, .why = "criu dump failed" };
	char buf[128];

	ASSERT_LT(0, dbgp_part_end_format(buf, sizeof(buf), &e));
	EXPECT_STREQ("exit 2: criu dump failed", buf);
	ASSERT_EQ(0, dbgp_part_end_parse(buf, &e));
	EXPECT_FALSE(e.running);
	EXPECT_EQ(2, e.status);
	EXPECT_STREQ("criu dump failed", e.why);
	ASSERT_EQ(0, dbgp_part_end_parse("exit 0", &e));
	EXPECT_EQ(0, e.status);
	EXPECT_STREQ("", e.why);
	ASSERT_EQ(0, dbgp_part_end_parse("running", &e));
	EXPECT_TRUE(e.running);
	e = (struct dbgp_part_end){ .status = 256, .why = "x" };
	EXPECT_EQ(-EINVAL, dbgp_part_end_format(buf, sizeof(buf), &e));
	e = (struct dbgp_part_end){ .status = 1, .why = "a\nb" };
	EXPECT_EQ(-EINVAL, dbgp_part_end_format(buf, sizeof(buf), &e));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, dbgp_part_end_parse(bad[i], &e)) TH_LOG("\"%s\"", bad[i]);
	}
}

TEST(load_argv_round_trips)
{
	char *const argv[] = { "/bin/prog", "one", "", "three four", NULL };
	const char *args[DBGP_ARGS_MAX + 1];
	struct dbgp_cmd p, load = { .verb = DBGP_LOAD };
	char spec[256], buf[256];
	int n = dbgp_load_spec(spec, sizeof(spec), argv);

	ASSERT_LT(0, n);
	EXPECT_STREQ("/bin/prog\x1fone\x1f\x1fthree four", spec);
	load.arg = spec;
	n = dbgp_encode(buf, sizeof(buf), &load);
	ASSERT_LT(0, n);
	EXPECT_STREQ("load /bin/prog\x1fone\x1f\x1fthree four", buf);
	ASSERT_EQ(0, dbgp_parse(buf, n, &p));
	ASSERT_EQ(DBGP_LOAD, p.verb);
	ASSERT_EQ(3, dbgp_split_load((char *)p.arg, args, DBGP_ARGS_MAX));
	EXPECT_STREQ("/bin/prog", p.arg);
	EXPECT_STREQ("one", args[0]);
	EXPECT_STREQ("", args[1]);
	EXPECT_STREQ("three four", args[2]);
	EXPECT_EQ(NULL, args[3]);
}

TEST(load_preload_option_round_trips)
{
	char *const argv[] = { "/bin/prog", "a=b", NULL };
	struct dbgp_cmd p, load = { .verb = DBGP_LOAD, .preload = "/lib/libcrdbg.so" };
	char spec[256], buf[256];
	int n = dbgp_load_spec(spec, sizeof(spec), argv);

	ASSERT_LT(0, n);
	load.arg = spec;
	n = dbgp_encode(buf, sizeof(buf), &load);
	ASSERT_LT(0, n);
	EXPECT_STREQ("load preload=/lib/libcrdbg.so\x1e/bin/prog\x1f" "a=b", buf);
	ASSERT_EQ(0, dbgp_parse(buf, n, &p));
	ASSERT_EQ(DBGP_LOAD, p.verb);
	EXPECT_STREQ("/lib/libcrdbg.so", p.preload);
	EXPECT_STREQ("/bin/prog\x1f" "a=b", p.arg);

	/* Without the option nothing is preloaded, whatever PROG is called. */
	ASSERT_EQ(0, parse("load preload=x", buf, sizeof(buf), &p));
	EXPECT_EQ(NULL, p.preload);
	EXPECT_STREQ("preload=x", p.arg);
}

TEST(load_options_are_checked)
{
	char *const sep_argv[] = { "/bin/prog", "a\x1f" "b", NULL };
	struct dbgp_cmd p, load = { .verb = DBGP_LOAD, .arg = "/bin/prog" };
	char buf[256];

	EXPECT_EQ(-EINVAL, parse("load color=red\x1e/bin/prog", buf, sizeof(buf), &p));
	EXPECT_EQ(-EINVAL, parse("load preload=\x1e/bin/prog", buf, sizeof(buf), &p));
	EXPECT_EQ(-EINVAL, parse("load preload=/l.so\x1e", buf, sizeof(buf), &p));
	EXPECT_EQ(-EINVAL, parse("load preload=/l.so\x1e\x1f" "a", buf, sizeof(buf), &p));
	load.preload = "";
	EXPECT_EQ(-EINVAL, dbgp_encode(buf, sizeof(buf), &load));
	load.preload = "/l.so\x1e/x";
	EXPECT_EQ(-EINVAL, dbgp_encode(buf, sizeof(buf), &load));
	load.preload = NULL;
	load.arg = "/bin/prog\x1e";
	EXPECT_EQ(-EINVAL, dbgp_encode(buf, sizeof(buf), &load));
	/* An argument holding a separator would be split: refused. */
	EXPECT_EQ(-EINVAL, dbgp_load_spec(buf, sizeof(buf), sep_argv));
}

TEST(load_too_many_args_stay_in_the_last)
{
	char spec[] = "p\x1f" "a\x1f" "b\x1f" "c";
	const char *args[3];

	ASSERT_EQ(2, dbgp_split_load(spec, args, 2));
	EXPECT_STREQ("a", args[0]);
	EXPECT_STREQ("b\x1f" "c", args[1]);
	EXPECT_EQ(NULL, args[2]);
}

TEST(encode_refuses_what_the_wire_cannot_carry)
{
	char *const noprog[] = { "", NULL };
	char *const nl[] = { "p", "a\nb", NULL };
	char *const many[DBGP_ARGS_MAX + 3] = { "p" };
	struct dbgp_cmd c = { .verb = DBGP_PRINT, .arg = "a\nb" };
	char big[DBGP_CMD_MAX + 16], buf[DBGP_CMD_MAX + 64];
	char *const toolong[] = { big, NULL };

	EXPECT_EQ(-EINVAL, dbgp_encode(buf, sizeof(buf), &c));
	c = (struct dbgp_cmd){ .verb = __DBGP_VERB_LAST };
	EXPECT_EQ(-EINVAL, dbgp_encode(buf, sizeof(buf), &c));
	c = (struct dbgp_cmd){ .verb = DBGP_EXEC, .exec = __DBGP_EXEC_LAST };
	EXPECT_EQ(-EINVAL, dbgp_encode(buf, sizeof(buf), &c));
	c = (struct dbgp_cmd){ .verb = DBGP_WAIT, .wait_ms = DBGP_WAIT_MAX_MS + 1 };
	EXPECT_EQ(-EINVAL, dbgp_encode(buf, sizeof(buf), &c));
	c = (struct dbgp_cmd){ .verb = DBGP_ATTACH, .pid = 0, .arg = "p" };
	EXPECT_EQ(-EINVAL, dbgp_encode(buf, sizeof(buf), &c));
	c = (struct dbgp_cmd){ .verb = DBGP_PRINT, .arg = "x" };
	EXPECT_EQ(-ENOSPC, dbgp_encode(buf, 7, &c));	/* "print x" needs 8 */
	EXPECT_EQ(7, dbgp_encode(buf, 8, &c));
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	c.arg = big;
	EXPECT_EQ(-ENOSPC, dbgp_encode(buf, sizeof(buf), &c));
	EXPECT_EQ(-EINVAL, dbgp_load_spec(buf, sizeof(buf), noprog));
	EXPECT_EQ(-EINVAL, dbgp_load_spec(buf, sizeof(buf), nl));
	for (int i = 1; i < DBGP_ARGS_MAX + 2; i++)
		((char **)many)[i] = "a";
	EXPECT_EQ(-E2BIG, dbgp_load_spec(buf, sizeof(buf), many));
	/* The whole command must fit: "load " and the spec. */
	big[DBGP_CMD_MAX - 5] = 0;
	EXPECT_EQ(DBGP_CMD_MAX - 5, dbgp_load_spec(buf, sizeof(buf), toolong));
	big[DBGP_CMD_MAX - 5] = 'x';
	big[DBGP_CMD_MAX - 4] = 0;
	EXPECT_EQ(-ENOSPC, dbgp_load_spec(buf, sizeof(buf), toolong));
}

TEST(malformed_commands_are_refused)
{
	static const struct {
		const char *cmd;
		int err;
		int verb;	/* set on -EINVAL */
	} bad[] = {
		{ "", -ENOENT, -1 },
		{ "frobnicate", -ENOENT, -1 },
		{ "printx", -ENOENT, -1 },
		{ "bt full", -ENOENT, -1 },
		{ "bt 0", -ENOENT, -1 },
		{ "bt 4x", -ENOENT, -1 },
		{ "bt -", -ENOENT, -1 },
		{ "bt ", -ENOENT, -1 },
		{ "status ", -ENOENT, -1 },
		{ "start", -ENOENT, -1 },
		{ "exec 500", -ENOENT, -1 },
		{ "load", -ENOENT, -1 },
		{ "attach", -ENOENT, -1 },
		{ "start 5x", -EINVAL, DBGP_START },
		{ "start -5", -EINVAL, DBGP_START },
		{ "wait 500 more", -EINVAL, DBGP_WAIT },
		{ "wait 99999999999999999999", -EINVAL, DBGP_WAIT },
		{ "interrupt ", -EINVAL, DBGP_INTERRUPT },
		{ "exec 500 jump", -EINVAL, DBGP_EXEC },
		{ "exec 500 continue x", -EINVAL, DBGP_EXEC },
		{ "exec 500 hold", -ENOENT, -1 },
		{ "exec 500 holdcontinue", -EINVAL, DBGP_EXEC },
		{ "exec 500 hold hold continue", -EINVAL, DBGP_EXEC },
		{ "wait 500 hold ", -EINVAL, DBGP_WAIT },
		{ "wait 500 holds", -EINVAL, DBGP_WAIT },
		{ "wait hold", -EINVAL, DBGP_WAIT },
		{ "attach 12", -EINVAL, DBGP_ATTACH },
		{ "attach 12 ", -EINVAL, DBGP_ATTACH },
		{ "attach 0 /a.out", -EINVAL, DBGP_ATTACH },
		{ "attach x /a.out", -EINVAL, DBGP_ATTACH },
		{ "attach 99999999999 /a.out", -EINVAL, DBGP_ATTACH },
		{ "load ", -EINVAL, DBGP_LOAD },
		{ "load \x1f" "arg", -EINVAL, DBGP_LOAD },
	};
	char buf[DBGP_CMD_MAX + 2];
	struct dbgp_cmd p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(bad[i].err, parse(bad[i].cmd, buf, sizeof(buf), &p))
			TH_LOG("'%s'", bad[i].cmd);
		if (bad[i].err == -EINVAL)
			EXPECT_EQ(bad[i].verb, (int)p.verb) TH_LOG("'%s'", bad[i].cmd);
	}
	/* The offending text is at hand for the error message. */
	ASSERT_EQ(-EINVAL, parse("exec 500 jump", buf, sizeof(buf), &p));
	EXPECT_STREQ("jump", p.arg);

	memcpy(buf, "print a\0b", 9);
	EXPECT_EQ(-EBADMSG, dbgp_parse(buf, 9, &p));
	memcpy(buf, "print a\nb", 9);
	EXPECT_EQ(-EBADMSG, dbgp_parse(buf, 9, &p));
	memset(buf, 'x', sizeof(buf));
	memcpy(buf, "print ", 6);
	EXPECT_EQ(-EMSGSIZE, dbgp_parse(buf, DBGP_CMD_MAX + 1, &p));
	EXPECT_EQ(0, dbgp_parse(buf, DBGP_CMD_MAX, &p));
	EXPECT_EQ(DBGP_PRINT, p.verb);
	EXPECT_EQ(DBGP_CMD_MAX - 6, strlen(p.arg));
}

TEST(text_verbs_take_an_empty_text)
{
	char buf[32];
	struct dbgp_cmd p;

	ASSERT_EQ(0, parse("print", buf, sizeof(buf), &p));
	EXPECT_EQ(DBGP_PRINT, p.verb);
	EXPECT_STREQ("", p.arg);
	ASSERT_EQ(0, parse("cli ", buf, sizeof(buf), &p));
	EXPECT_EQ(DBGP_CLI, p.verb);
	EXPECT_STREQ("", p.arg);
}

TEST(reply_kinds)
{
	EXPECT_EQ(DBGP_REPLY_STOPPED, dbgp_reply_kind("stopped: breakpoint 1, main"));
	EXPECT_EQ(DBGP_REPLY_EXITED, dbgp_reply_kind("exited: code 0\x1e" "code=0"));
	EXPECT_EQ(DBGP_REPLY_RUNNING, dbgp_reply_kind("running"));
	EXPECT_EQ(DBGP_REPLY_OTHER, dbgp_reply_kind("running gdb=1 pid=2 "));
	EXPECT_EQ(DBGP_REPLY_ERROR, dbgp_reply_kind("error: No symbol \"y\""));
	EXPECT_EQ(DBGP_REPLY_LOST, dbgp_reply_kind("lost: gdb killed by signal 9"));
	EXPECT_EQ(DBGP_REPLY_OTHER, dbgp_reply_kind("lost gdb=1 pid=2 why"));
	EXPECT_EQ(DBGP_REPLY_OTHER, dbgp_reply_kind("x = 4"));
	EXPECT_EQ(DBGP_REPLY_OTHER, dbgp_reply_kind(""));
	EXPECT_EQ(DBGP_REPLY_OTHER, dbgp_reply_kind("stopped"));
}

TEST(stop_text_and_fields_round_trip)
{
	struct dbgp_stop st = {
		.reason = "breakpoint-hit", .bkptno = 2, .func = "compute",
		.file = "app.c", .line = 17, .pc = 0x5555555551b0,
	};
	static const char *const want[][2] = {
		{ "reason", "breakpoint-hit" }, { "bkptno", "2" }, { "func", "compute" },
		{ "file", "app.c" }, { "line", "17" }, { "pc", "0x5555555551b0" },
	};
	char reply[512];
	struct dbgp_field f;
	const char *cur;
	size_t n, k = 0;

	n = dbgp_stop_text(reply, sizeof(reply), &st);
	n += dbgp_stop_fields(reply + n, sizeof(reply) - n, &st);
	EXPECT_STREQ("stopped: breakpoint 2, compute at app.c:17\x1ereason=breakpoint-hit"
		     "\x1f" "bkptno=2\x1f" "func=compute\x1f" "file=app.c\x1f" "line=17"
		     "\x1fpc=0x5555555551b0", reply);
	EXPECT_EQ(strlen(reply), n);
	EXPECT_EQ(DBGP_REPLY_STOPPED, dbgp_reply_kind(reply));
	EXPECT_EQ(strlen("stopped: breakpoint 2, compute at app.c:17"),
		  dbgp_reply_text_len(reply));
	cur = dbgp_reply_fields(reply);
	ASSERT_NE(NULL, cur);
	while (dbgp_next_field(&cur, &f)) {
		ASSERT_LT(k, 6);
		EXPECT_EQ(strlen(want[k][0]), f.klen);
		EXPECT_EQ(0, memcmp(want[k][0], f.key, f.klen));
		EXPECT_EQ(strlen(want[k][1]), f.vlen);
		EXPECT_EQ(0, memcmp(want[k][1], f.value, f.vlen));
		k++;
	}
	EXPECT_EQ(6, k);
	EXPECT_EQ(NULL, dbgp_reply_fields("x = 4"));
	EXPECT_EQ(5, dbgp_reply_text_len("x = 4"));
}

/* An exit held in _exit reads as the exit, its field held=1 tells. */
TEST(held_exit_fields)
{
	struct dbgp_stop st = { .exited = true, .held = true, .exit_code = 3 };
	char reply[256];
	size_t n;

	n = dbgp_stop_text(reply, sizeof(reply), &st);
	n += dbgp_stop_fields(reply + n, sizeof(reply) - n, &st);
	EXPECT_STREQ("exited: code 3\x1e" "code=3\x1f" "held=1", reply);
	EXPECT_EQ(strlen(reply), n);
	EXPECT_EQ(DBGP_REPLY_EXITED, dbgp_reply_kind(reply));
	{
		const char *cur = dbgp_reply_fields(reply);
		struct dbgp_field f;
		int held = 0;

		while (cur && dbgp_next_field(&cur, &f))
			held += dbgp_field_is(&f, "held") && !dbgp_field_is(&f, "hel");
		EXPECT_EQ(1, held);
	}
	st.held = false;
	n = dbgp_stop_text(reply, sizeof(reply), &st);
	dbgp_stop_fields(reply + n, sizeof(reply) - n, &st);
	EXPECT_STREQ("exited: code 3\x1e" "code=3", reply);
}

TEST(stop_texts)
{
	struct dbgp_stop sig = { .reason = "signal-received", .signal = "SIGINT", .func = "pause" };
	struct dbgp_stop step = { .reason = "end-stepping-range", .func = "main",
				  .file = "prog.c", .line = 13 };
	struct dbgp_stop code = { .exited = true, .reason = "exited", .exit_code = 3 };
	struct dbgp_stop killed = { .exited = true, .reason = "exited-signalled",
				    .signal = "SIGSEGV" };
	struct dbgp_stop att = { .attached = true, .func = "main", .file = "a.c", .line = 3,
				 .pc = 0x10 };
	struct dbgp_stop att0 = { .attached = true };
	char buf[256];

	dbgp_stop_text(buf, sizeof(buf), &sig);
	EXPECT_STREQ("stopped: signal SIGINT, pause", buf);
	dbgp_stop_text(buf, sizeof(buf), &step);
	EXPECT_STREQ("stopped: end-stepping-range, main at prog.c:13", buf);
	dbgp_stop_text(buf, sizeof(buf), &code);
	EXPECT_STREQ("exited: code 3", buf);
	dbgp_stop_fields(buf, sizeof(buf), &code);
	EXPECT_STREQ("\x1ereason=exited\x1f" "code=3", buf);
	dbgp_stop_text(buf, sizeof(buf), &killed);
	EXPECT_STREQ("exited: signal SIGSEGV", buf);
	dbgp_stop_fields(buf, sizeof(buf), &killed);
	EXPECT_STREQ("\x1ereason=exited-signalled\x1fsignal=SIGSEGV", buf);
	dbgp_stop_text(buf, sizeof(buf), &att);
	EXPECT_STREQ("stopped: attached, main at a.c:3", buf);
	dbgp_stop_fields(buf, sizeof(buf), &att);
	EXPECT_STREQ("\x1e" "func=main\x1f" "file=a.c\x1fline=3\x1fpc=0x10", buf);
	dbgp_stop_text(buf, sizeof(buf), &att0);
	EXPECT_STREQ("stopped: attached", buf);
	EXPECT_EQ(0, dbgp_stop_fields(buf, sizeof(buf), &att0));
	EXPECT_STREQ("", buf);
}

/* A watchpoint's values and a finish's return value, in text and fields. */
TEST(watch_and_finish_stops)
{
	struct dbgp_stop w = { .reason = "watchpoint-trigger", .bkptno = 3, .wpt_exp = "value",
			       .old_value = "0", .new_value = "9", .func = "compute",
			       .file = "a.c", .line = 18 };
	struct dbgp_stop rw = { .reason = "read-watchpoint-trigger", .bkptno = 4,
				.wpt_exp = "total", .new_value = "3", .func = "f" };
	struct dbgp_stop fin = { .reason = "function-finished", .func = "main", .file = "a.c",
				 .line = 40, .return_value = "4" };
	char buf[256];

	dbgp_stop_text(buf, sizeof(buf), &w);
	EXPECT_STREQ("stopped: watchpoint 3: value = 9 (was 0), compute at a.c:18", buf);
	dbgp_stop_fields(buf, sizeof(buf), &w);
	EXPECT_STREQ("\x1ereason=watchpoint-trigger\x1f" "bkptno=3\x1f" "exp=value\x1f"
		     "old=0\x1fnew=9\x1f" "func=compute\x1f" "file=a.c\x1fline=18", buf);
	dbgp_stop_text(buf, sizeof(buf), &rw);
	EXPECT_STREQ("stopped: watchpoint 4: total = 3, f", buf);
	dbgp_stop_text(buf, sizeof(buf), &fin);
	EXPECT_STREQ("stopped: function-finished, main at a.c:40, returned 4", buf);
	dbgp_stop_fields(buf, sizeof(buf), &fin);
	EXPECT_STREQ("\x1ereason=function-finished\x1f" "func=main\x1f" "file=a.c\x1f"
		     "line=40\x1fvalue=4", buf);
}

/* until and advance carry a location (advance must); no other kind does. */
TEST(exec_locations)
{
	struct dbgp_cmd until = { .verb = DBGP_EXEC, .wait_ms = 500, .exec = DBGP_EXEC_UNTIL,
				  .arg = "prog.c:40" };
	struct dbgp_cmd bare = { .verb = DBGP_EXEC, .wait_ms = 5, .exec = DBGP_EXEC_UNTIL };
	struct dbgp_cmd adv = { .verb = DBGP_EXEC, .wait_ms = 5, .exec = DBGP_EXEC_ADVANCE };
	struct dbgp_cmd cont = { .verb = DBGP_EXEC, .wait_ms = 5, .exec = DBGP_EXEC_CONTINUE,
				 .arg = "3" };
	char buf[DBGP_CMD_MAX + 1], in[64];
	struct dbgp_cmd p;

	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &until));
	EXPECT_STREQ("exec 500 until prog.c:40", buf);
	ASSERT_EQ(0, dbgp_parse(buf, strlen(buf), &p));
	EXPECT_EQ(DBGP_EXEC_UNTIL, p.exec);
	EXPECT_STREQ("prog.c:40", p.arg);
	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &bare));
	EXPECT_STREQ("exec 5 until", buf);
	ASSERT_EQ(0, dbgp_parse(buf, strlen(buf), &p));
	EXPECT_STREQ("", p.arg);
	EXPECT_EQ(-EINVAL, dbgp_encode(buf, sizeof(buf), &adv));
	adv.arg = "compute";
	ASSERT_LT(0, dbgp_encode(buf, sizeof(buf), &adv));
	EXPECT_STREQ("exec 5 advance compute", buf);
	EXPECT_EQ(-EINVAL, dbgp_encode(buf, sizeof(buf), &cont));
	strcpy(in, "exec 5 continue 3");
	EXPECT_EQ(-EINVAL, dbgp_parse(in, strlen(in), &p));
	strcpy(in, "exec 5 advance");
	EXPECT_EQ(-EINVAL, dbgp_parse(in, strlen(in), &p));
	strcpy(in, "exec 5 until ");
	EXPECT_EQ(-EINVAL, dbgp_parse(in, strlen(in), &p));
}

TEST(fields_are_clean_and_bounded)
{
	struct dbgp_stop st = { .reason = "breakpoint-hit", .bkptno = 1,
				.func = "f\x1e\x1fg\n", .file = "a.c", .line = 1 };
	struct dbgp_field f;
	const char *cur;
	char buf[256], small[24];
	size_t n;

	dbgp_stop_fields(buf, sizeof(buf), &st);
	EXPECT_STREQ("\x1ereason=breakpoint-hit\x1f" "bkptno=1\x1f" "func=f??g?\x1f"
		     "file=a.c\x1fline=1", buf);
	/* Only whole fields: "\x1ereason=breakpoint-hit" is 22 bytes. */
	n = dbgp_stop_fields(small, sizeof(small), &st);
	EXPECT_EQ(strlen(small), n);
	EXPECT_STREQ("\x1ereason=breakpoint-hit", small);
	/* Pieces without a key are skipped by the reader. */
	cur = "=x\x1fnoequals\x1fk=v\x1f";
	ASSERT_EQ(1, dbgp_next_field(&cur, &f));
	EXPECT_EQ(1, f.klen);
	EXPECT_EQ('k', f.key[0]);
	EXPECT_EQ(1, f.vlen);
	EXPECT_EQ('v', f.value[0]);
	EXPECT_EQ(0, dbgp_next_field(&cur, &f));
}

TEST(status_round_trips)
{
	struct dbgp_status st;
	char buf[256];

	dbgp_status_text(buf, sizeof(buf), "stopped", 10, 11,
			 "stopped: breakpoint 1, main at a.c:3", 0x401136);
	EXPECT_STREQ("stopped gdb=10 pid=11 stopped: breakpoint 1, main at a.c:3, pc 0x401136",
		     buf);
	ASSERT_EQ(0, dbgp_parse_status(buf, &st));
	EXPECT_STREQ("stopped", st.state);
	EXPECT_EQ(10, st.gdb_pid);
	EXPECT_EQ(11, st.pid);
	EXPECT_STREQ("stopped: breakpoint 1, main at a.c:3, pc 0x401136", st.where);
	dbgp_status_text(buf, sizeof(buf), "running", 10, 11, "", 0);
	EXPECT_STREQ("running gdb=10 pid=11 ", buf);
	ASSERT_EQ(0, dbgp_parse_status(buf, &st));
	EXPECT_STREQ("running", st.state);
	EXPECT_STREQ("", st.where);
	EXPECT_EQ(-EINVAL, dbgp_parse_status("x = 4", &st));
	EXPECT_EQ(-EINVAL, dbgp_parse_status("running gdb=1", &st));
	EXPECT_EQ(-EINVAL, dbgp_parse_status("", &st));
}

/* Binary fields: every byte value round-trips; wrong length or digits refused. */
TEST(hex_fields)
{
	unsigned char in[256], out[256];
	char hex[2 * sizeof(in) + 1];

	for (int i = 0; i < 256; i++)
		in[i] = i;
	dbgp_hex_encode(hex, in, sizeof(in));
	ASSERT_EQ(2 * sizeof(in), strlen(hex));
	EXPECT_EQ(0, strncmp(hex, "000102", 6));
	EXPECT_EQ(0, strcmp(hex + 2 * 254, "feff"));
	ASSERT_EQ(0, dbgp_hex_decode(out, sizeof(out), hex, strlen(hex)));
	EXPECT_EQ(0, memcmp(in, out, sizeof(in)));
	EXPECT_EQ(-EBADMSG, dbgp_hex_decode(out, sizeof(out), hex, strlen(hex) - 1));
	EXPECT_EQ(-EBADMSG, dbgp_hex_decode(out, 2, "0g12", 4));
	EXPECT_EQ(-EBADMSG, dbgp_hex_decode(out, 2, "0A12", 4));
	EXPECT_EQ(0, dbgp_hex_decode(out, 0, "", 0));
}

TEST_HARNESS_MAIN
