// SPDX-License-Identifier: GPL-2.0
/*
 * `crdbg debug` end to end: N copies of prog_debug, each under its own
 * gdb behind an SDM server, driven with -ex / --batch / stdin, and the
 * console's output checked line by line.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "console_run.h"

FIXTURE(debug) {
	struct run r;
};

FIXTURE_SETUP(debug)
{
	if (!have_gdb())
		SKIP(return, "gdb is not installed");
	if (access(CRDBG, X_OK) || access(DEBUG_PROG, X_OK))
		SKIP(return, "%s or %s not built", CRDBG, DEBUG_PROG);
}

FIXTURE_TEARDOWN(debug)
{
	run_free(&self->r);
}

/* Every rank stops at main, then at one breakpoint: one line each. */
TEST_F_TIMEOUT(debug, breakpoint_aggregated, 180)
{
	const char *a[] = { "-n", "4", "-ex", "break compute", "-ex", "continue",
			    DEBUG_PROG, NULL };

	ASSERT_EQ(0, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf,
			       "[0-3]: stopped: breakpoint 1, main at "))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-3]: breakpoint 2 at "))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf,
			       "[0-3]: stopped: breakpoint 2, compute at "))
		TH_LOG("%s", self->r.buf);
	EXPECT_EQ(1, count(self->r.buf, "stopped: breakpoint 2,"))
		TH_LOG("%s", self->r.buf);
	/* The stops' machine-readable fields are not printed. */
	EXPECT_EQ(NULL, strchr(self->r.buf, '\x1e')) TH_LOG("%s", self->r.buf);
	EXPECT_EQ(NULL, strstr(self->r.buf, "reason=")) TH_LOG("%s", self->r.buf);
}

/* print of a rank-dependent value: one line per distinct value. */
TEST_F_TIMEOUT(debug, print_groups_by_value, 180)
{
	const char *a[] = { "-n", "4", "-ex", "break compute", "-ex", "continue",
			    "-ex", "finish", "-ex", "print value",
			    "-ex", "print rank % 2", "-ex", "[1-2] print rank",
			    DEBUG_PROG, NULL };

	ASSERT_EQ(0, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[0,2]: value = 4\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[1,3]: value = 9\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[0,2]: rank % 2 = 0\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[1]: rank = 1\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[2]: rank = 2\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_EQ(NULL, strstr(self->r.buf, "[3]: rank = 3"))
		TH_LOG("%s", self->r.buf);
}

/* The programs' stdout reaches the console, tagged with the rank. */
TEST_F_TIMEOUT(debug, program_output, 180)
{
	const char *a[] = { "-n", "3", "-ex", "continue", DEBUG_PROG, NULL };

	ASSERT_EQ(0, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0] hello from rank 0 x=4\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[1] hello from rank 1 x=9\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[2] hello from rank 2 x=4\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-2]: exited: code 0\n"))
		TH_LOG("%s", self->r.buf);
}

/* Ranks blocked in two places: stacks shows the two branches. */
TEST_F_TIMEOUT(debug, stacks_two_groups, 180)
{
	const char *a[] = { "-n", "4", "-ex", "timeout 3", "-ex", "continue",
			    "-ex", "interrupt", "-ex", "stacks",
			    DEBUG_PROG, "block", NULL };

	ASSERT_EQ(0, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-3]: running\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[0-3] main\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n  [0,2] wait_even\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n  [1,3] wait_odd\n"))
		TH_LOG("%s", self->r.buf);
}

/*
 * In a session started on r's stdin: find rank 1's gdb in status -p, kill
 * it, then print, status -p, status, continue to the end. Returns rank
 * 1's pid.
 */
static int kill_gdb_of_rank1(struct __test_metadata *_metadata, struct run *r)
{
	static const char tail[] = "print value\nstatus -p\nstatus\ncontinue\necho @@END\nquit\n";
	const char *row;
	int gdb = 0, pid = 0;

	ASSERT_EQ(19, write(r->in, "status -p\necho @@1\n", 19));
	ASSERT_TRUE(run_read_until(r, "@@1\n")) TH_LOG("%s", r->buf);
	row = strstr(r->buf, "\n1      stopped ");
	ASSERT_NE(NULL, row) TH_LOG("%s", r->buf);
	ASSERT_EQ(2, sscanf(row, "\n1 stopped %d %d", &gdb, &pid));
	ASSERT_GT(gdb, 0);
	ASSERT_EQ(0, kill(gdb, SIGKILL));
	ASSERT_EQ((ssize_t)strlen(tail), write(r->in, tail, strlen(tail)));
	ASSERT_TRUE(run_read_until(r, "@@END\n")) TH_LOG("%s", r->buf);
	return pid;
}

/* A gdb killed mid-session: its rank is lost, the others go on. */
TEST_F_TIMEOUT(debug, gdb_killed_rank_lost, 180)
{
	const char *argv[] = { CRDBG, "debug", "-n", "4", DEBUG_PROG, NULL };
	struct run *r = &self->r;
	int pid;

	ASSERT_EQ(0, run_start(r, argv, true));
	pid = kill_gdb_of_rank1(_metadata, r);
	/* The session goes on to the end, but a lost rank is a failure. */
	EXPECT_EQ(1, run_finish(r)) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "[0,2-3]: value = 0\n")) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "[1]: lost: ")) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "\n1      lost ")) TH_LOG("%s", r->buf);
	/* status merges the ranks in one state and place: the lost one apart. */
	EXPECT_TRUE(has_line(r->buf, "^\\[1\\] +lost +")) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "[0,2-3]: exited: code 0\n"))
		TH_LOG("%s", r->buf);
	/* Its program did not outlive its gdb (it may take a moment to die). */
	for (int i = 0; i < 200 && alive(pid); i++)
		usleep(50000);
	EXPECT_FALSE(alive(pid));
}

/*
 * ^C at the terminal (SIGINT to the whole process group) while the ranks
 * run: they are interrupted, the SDM daemons survive, the session goes on.
 */
TEST_F_TIMEOUT(debug, sigint_interrupts_ranks, 180)
{
	const char *argv[] = { CRDBG, "debug", "-n", "2", DEBUG_PROG, "block", NULL };
	static const char go[] = "timeout 0\ncontinue\n";
	static const char tail[] = "stacks\necho @@END\nquit\n";
	struct run *r = &self->r;

	ASSERT_EQ(0, run_start(r, argv, true));
	ASSERT_EQ((ssize_t)strlen(go), write(r->in, go, strlen(go)));
	/* Both ranks printed: they are on their way to block. */
	ASSERT_TRUE(run_read_until(r, "[0] hello")) TH_LOG("%s", r->buf);
	ASSERT_TRUE(run_read_until(r, "[1] hello")) TH_LOG("%s", r->buf);
	usleep(1000000);
	ASSERT_EQ(0, kill(-r->pid, SIGINT));
	ASSERT_TRUE(run_read_until(r, "stopped: signal SIGINT")) TH_LOG("%s", r->buf);
	ASSERT_EQ((ssize_t)strlen(tail), write(r->in, tail, strlen(tail)));
	ASSERT_TRUE(run_read_until(r, "@@END\n")) TH_LOG("%s", r->buf);
	EXPECT_EQ(0, run_finish(r)) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "\n[0-1] main\n")) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "\n  [0] wait_even\n")) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "\n  [1] wait_odd\n")) TH_LOG("%s", r->buf);
	EXPECT_EQ(NULL, strstr(r->buf, "lost")) TH_LOG("%s", r->buf);
}

/* A batch file: comments, focus, rank prefixes, an error on one rank. */
TEST_F_TIMEOUT(debug, batch_file_focus_errors, 180)
{
	char path[] = "/tmp/crdbg-batch-XXXXXX";
	static const char script[] =
		"# a comment\n"
		"break compute\n"
		"continue\n"
		"focus 1-2\n"
		"print rank\n"
		"[2] print nosuch\n"
		"[0,3] print rank * 10\n"
		"focus all\n"
		"[7] print 1\n"
		"echo done\n";
	int fd = mkstemp(path);
	const char *a[] = { "-n", "4", "--batch", path, DEBUG_PROG, NULL };

	ASSERT_GE(fd, 0);
	ASSERT_EQ((ssize_t)strlen(script), write(fd, script, strlen(script)));
	close(fd);
	/* A gdb error and a refused rank set: exit status 1. */
	EXPECT_EQ(1, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	unlink(path);
	EXPECT_NE(NULL, strstr(self->r.buf, "focus: [1-2]\n")) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[1]: rank = 1\n[2]: rank = 2\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_EQ(NULL, strstr(self->r.buf, "[0]: rank = 0")) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[2]: error: No symbol \"nosuch\""))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0]: rank * 10 = 0\n[3]: rank * 10 = 30\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "rank out of range: this session has ranks 0-3"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\ndone\n")) TH_LOG("%s", self->r.buf);
}

/* input: a line to rank 0's stdin. */
TEST_F_TIMEOUT(debug, stdin_to_rank0, 180)
{
	const char *a[] = { "-n", "2", "-ex", "input hello there", "-ex", "continue",
			    DEBUG_PROG, "read", NULL };

	ASSERT_EQ(0, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0] rank 0 got: hello there\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-1]: exited: code 0\n"))
		TH_LOG("%s", self->r.buf);
}

/* --json: one object per event. */
TEST_F_TIMEOUT(debug, json_events, 180)
{
	const char *a[] = { "-n", "2", "--json", "-ex", "print 6 * 7",
			    "-ex", "stacks", "-ex", "continue", DEBUG_PROG, NULL };

	ASSERT_EQ(0, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf,
			       "{\"type\":\"reply\",\"cmd\":\"print 6 * 7\","
			       "\"ranks\":\"0-1\",\"error\":false,"
			       "\"text\":\"6 * 7 = 42\"}\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf,
			       "{\"type\":\"output\",\"rank\":1,\"stream\":\"stdout\","
			       "\"text\":\"hello from rank 1 x=9\"}\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf,
			       "{\"type\":\"stacks\",\"tree\":[{\"name\":\"main\","
			       "\"ranks\":\"0-1\""))
		TH_LOG("%s", self->r.buf);
}

/*
 * --json: stops and exits are objects of their own, fields from gdb's
 * *stopped record; identical stops of both ranks are one object.
 */
TEST_F_TIMEOUT(debug, json_stop_exit, 180)
{
	const char *a[] = { "-n", "2", "--json", "-ex", "break compute",
			    "-ex", "continue", "-ex", "finish",
			    "-ex", "gdb return 3", "-ex", "continue",
			    DEBUG_PROG, NULL };
	char re[512];
	const char *b;
	int line = 0;

	ASSERT_EQ(0, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	EXPECT_TRUE(has_line(self->r.buf,
			     "^\\{\"type\":\"stop\",\"ranks\":\"0-1\","
			     "\"reason\":\"breakpoint-hit\",\"bkptno\":1,"
			     "\"func\":\"main\",\"file\":\"[^\"]*prog_debug\\.c\","
			     "\"line\":[0-9]+,\"pc\":\"0x[0-9a-f]+\"\\}$"))
		TH_LOG("%s", self->r.buf);
	b = strstr(self->r.buf, "\"text\":\"breakpoint 2 at ");
	ASSERT_NE(NULL, b) TH_LOG("%s", self->r.buf);
	b = strstr(b, "prog_debug.c:");
	ASSERT_NE(NULL, b) TH_LOG("%s", self->r.buf);
	ASSERT_EQ(1, sscanf(b, "prog_debug.c:%d", &line));
	snprintf(re, sizeof(re),
		 "^\\{\"type\":\"stop\",\"ranks\":\"0-1\","
		 "\"reason\":\"breakpoint-hit\",\"bkptno\":2,"
		 "\"func\":\"compute\",\"file\":\"[^\"]*prog_debug\\.c\","
		 "\"line\":%d,\"pc\":\"0x[0-9a-f]+\"\\}$", line);
	EXPECT_TRUE(has_line(self->r.buf, re)) TH_LOG("%s\n%s", re, self->r.buf);
	/* finish: each rank's returned value, so one object per value. */
	EXPECT_TRUE(has_line(self->r.buf,
			     "^\\{\"type\":\"stop\",\"ranks\":\"0\","
			     "\"reason\":\"function-finished\",\"func\":\"main\","
			     ".*,\"value\":\"4\"\\}$"))
		TH_LOG("%s", self->r.buf);
	EXPECT_TRUE(has_line(self->r.buf,
			     "^\\{\"type\":\"stop\",\"ranks\":\"1\","
			     "\"reason\":\"function-finished\",\"func\":\"main\","
			     ".*,\"value\":\"9\"\\}$"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf,
			       "\n{\"type\":\"exit\",\"ranks\":\"0-1\","
			       "\"reason\":\"exited\",\"code\":3}\n"))
		TH_LOG("%s", self->r.buf);
	/* No stop is left as a text reply. */
	EXPECT_EQ(NULL, strstr(self->r.buf, "\"text\":\"stopped:"))
		TH_LOG("%s", self->r.buf);
	EXPECT_EQ(NULL, strstr(self->r.buf, "\"text\":\"exited:"))
		TH_LOG("%s", self->r.buf);
}

/*
 * The exit status of a batch: 1 if a command failed on some rank (the
 * commands after it still run), 0 if everything succeeded.
 */
TEST_F_TIMEOUT(debug, batch_exit_status, 180)
{
	char bad[] = "/tmp/crdbg-batch-XXXXXX", good[] = "/tmp/crdbg-batch-XXXXXX";
	static const char bad_script[] =
		"break compute\n"
		"print nosuchvar\n"
		"continue\n"
		"print value\n"
		"echo after\n";
	static const char good_script[] =
		"break compute\n"
		"continue\n"
		"print value\n"
		"continue\n";
	const char *a_bad[] = { "-n", "2", "--batch", bad, DEBUG_PROG, NULL };
	const char *a_good[] = { "-n", "2", "--batch", good, DEBUG_PROG, NULL };
	int rc;

	ASSERT_EQ(0, write_script(bad, bad_script));
	ASSERT_EQ(0, write_script(good, good_script));
	rc = debug(&self->r, a_bad);
	unlink(bad);
	EXPECT_EQ(1, rc) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf,
			       "[0-1]: error: No symbol \"nosuchvar\""))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-1]: stopped: breakpoint 2, compute at "))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[0-1]: value = 0\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\nafter\n")) TH_LOG("%s", self->r.buf);
	run_free(&self->r);
	rc = debug(&self->r, a_good);
	unlink(good);
	EXPECT_EQ(0, rc) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-1]: exited: code 0\n"))
		TH_LOG("%s", self->r.buf);
}

/* The text between the n-th (from 1) occurrence of from and the next to. */
static char *between(const char *hay, const char *from, const char *to, int n)
{
	const char *a = hay, *b;

	for (; n > 0 && a; n--) {
		a = strstr(a, from);
		if (a && n > 1)
			a += strlen(from);
	}
	if (!a)
		return NULL;
	a += strlen(from);
	b = strstr(a, to);
	return b ? strndup(a, b - a) : NULL;
}

/*
 * A checkpoint that fails (here: the store cannot be created, so it fails
 * after the ranks were parked and their gdb detached) says why per rank,
 * re-attaches, and brings every rank back exactly: same pc, registers and
 * stacks, and the program runs on to its normal end. The run exits 1.
 * The park/release machinery is the one a successful checkpoint uses.
 */
TEST_F_TIMEOUT(debug, checkpoint_failure_puts_ranks_back, 300)
{
	char path[] = "/tmp/crdbg-batch-XXXXXX", *before, *after;
	static const char script[] =
		"break compute\n"
		"continue\n"
		"echo === regs\n"
		"print $pc\n"
		"info registers rax rbx rcx rdx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15 eflags\n"
		"stacks\n"
		"echo === end\n"
		"checkpoint\n"
		"echo === regs\n"
		"print $pc\n"
		"info registers rax rbx rcx rdx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15 eflags\n"
		"stacks\n"
		"echo === end\n"
		"continue\n";
	const char *a[] = { "-n", "2", "--preload", CRDBG_RUNTIME, "--batch", path,
			    DEBUG_PROG, NULL };
	int rc;

	if (access(CRDBG_RUNTIME, R_OK))
		SKIP(return, "%s is not built", CRDBG_RUNTIME);
	ASSERT_EQ(0, write_script(path, script));
	setenv("CRDBG_STORE", "/proc/crdbg-no-store", 1);
	rc = debug(&self->r, a);
	unsetenv("CRDBG_STORE");
	unlink(path);
	EXPECT_EQ(1, rc) TH_LOG("%s", self->r.buf);
	/* One job checkpoint: one line naming the first part that failed. */
	EXPECT_EQ(1, count(self->r.buf, "checkpoint: failed on ")) TH_LOG("%s", self->r.buf);
	EXPECT_EQ(1, count(self->r.buf, "cannot create store /proc/crdbg-no-store"))
		TH_LOG("%s", self->r.buf);
	EXPECT_EQ(1, count(self->r.buf, "nothing was kept, the job goes on")) TH_LOG("%s", self->r.buf);
	before = between(self->r.buf, "\n=== regs\n", "(crdbg) echo === end", 1);
	after = between(self->r.buf, "\n=== regs\n", "(crdbg) echo === end", 2);
	ASSERT_NE(NULL, before);
	ASSERT_NE(NULL, after);
	EXPECT_NE(NULL, strstr(before, "compute")) TH_LOG("%s", before);
	EXPECT_NE(NULL, strstr(before, "rbp ")) TH_LOG("%s", before);
	EXPECT_STREQ(before, after);
	EXPECT_NE(NULL, strstr(self->r.buf, "[1] hello from rank 1 x=9\n")) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-1]: exited: code 0\n")) TH_LOG("%s", self->r.buf);
	free(before);
	free(after);
}

/*
 * A checkpoint of ranks started without libcrdbg is refused in one line
 * that names them and says how to start the session instead, before
 * anything is parked: no gdb error of the park hook reaches the user, and
 * the ranks stay where they were and run to their end.
 */
TEST_F_TIMEOUT(debug, checkpoint_without_libcrdbg_one_line, 180)
{
	char path[] = "/tmp/crdbg-batch-XXXXXX";
	static const char script[] =
		"break compute\n"
		"continue\n"
		"checkpoint\n"
		"status\n"
		"delete\n"
		"continue\n";
	const char *a[] = { "-n", "2", "--batch", path, DEBUG_PROG, NULL };
	int rc;

	ASSERT_EQ(0, write_script(path, script));
	rc = debug(&self->r, a);
	unlink(path);
	EXPECT_EQ(1, rc) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n(crdbg) checkpoint\ncheckpoint: rank [0-1] runs "
			       "without libcrdbg, which parks the ranks for their image: start "
			       "crdbg debug with --preload PATH/libcrdbg.so\n(crdbg) status\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_EQ(NULL, strstr(self->r.buf, "crdbg_runtime_info")) TH_LOG("%s", self->r.buf);
	EXPECT_EQ(NULL, strstr(self->r.buf, "hook park")) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-1]        stopped  breakpoint 2, compute"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-1]: exited: code 0\n")) TH_LOG("%s", self->r.buf);
}

/* gdb's return moves the ranks to the caller: status says so, not the breakpoint left. */
TEST_F_TIMEOUT(debug, return_restates_the_stop, 180)
{
	const char *a[] = { "-n", "2", "-ex", "break compute", "-ex", "continue", "-ex", "return",
			    "-ex", "status", "-ex", "delete", "-ex", "continue", DEBUG_PROG, NULL };

	debug(&self->r, a);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[0-1]        stopped  returned, main at "
			       "tests/debug/prog_debug.c:")) TH_LOG("%s", self->r.buf);
	EXPECT_EQ(NULL, strstr(self->r.buf, "stopped  breakpoint")) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-1]: exited: code 0\n")) TH_LOG("%s", self->r.buf);
}

/* -ex: an unknown command or a refused rank set fails the run too. */
TEST_F_TIMEOUT(debug, ex_exit_status, 180)
{
	const char *unknown[] = { "-n", "2", "-ex", "frobnicate", "-ex", "echo after",
				  DEBUG_PROG, NULL };
	const char *range[] = { "-n", "2", "-ex", "[5] print 1", DEBUG_PROG, NULL };
	const char *clean[] = { "-n", "2", "-ex", "print 1", DEBUG_PROG, NULL };

	EXPECT_EQ(1, debug(&self->r, unknown)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-1]: error: Undefined command"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\nafter\n")) TH_LOG("%s", self->r.buf);
	run_free(&self->r);
	EXPECT_EQ(1, debug(&self->r, range)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "rank out of range"))
		TH_LOG("%s", self->r.buf);
	run_free(&self->r);
	EXPECT_EQ(0, debug(&self->r, clean)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-1]: 1 = 1\n")) TH_LOG("%s", self->r.buf);
}

/*
 * MPIR launch: ranks acquired from mpirun's proctable, held in MPI_Init.
 * The breakpoint names its file: some ranks may already have ICU loaded
 * (through hwloc), whose icu::compute would be a second location there.
 */
TEST_F_TIMEOUT(debug, mpir_launch, 240)
{
	const char *a[] = { "-ex", "status", "-ex", "break mpi_debug.c:compute", "-ex", "continue",
			    "-ex", "finish", "-ex", "print value", "-ex", "stacks",
			    "-ex", "continue", "-ex", "restart 20261201T000000-1",
			    "--", "mpirun", "--oversubscribe", "-n", "3", MPI_PROG,
			    NULL };

	if (!have_mpi())
		SKIP(return, "no mpirun, or %s not built (mpicc)", MPI_PROG);
	mpi_env();
	/* 1: the last command, a restart once the job has ended, fails */
	ASSERT_EQ(1, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	/* ...saying why it cannot, and what to do instead. */
	EXPECT_NE(NULL, strstr(self->r.buf, "restart: the job has ended, and mpirun's tree cannot "
			       "be brought back without mpirun's debugger: restart it from a "
			       "shell (crdbg restart 20261201T000000-1)\n")) TH_LOG("%s", self->r.buf);
	/*
	 * Acquired: in MPI_Init, past Open MPI's debugger wait (returned
	 * from it, or finished it when a rank was already inside), not at
	 * the acquisition's own breakpoint there.
	 */
	EXPECT_EQ(NULL, strstr(self->r.buf, "ompi_rte_wait_for_debugger")) TH_LOG("%s", self->r.buf);
	EXPECT_TRUE(strstr(self->r.buf, "  stopped  returned, ") ||
		    strstr(self->r.buf, "  stopped  function-finished, ")) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-2]: breakpoint "))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, ", compute at "))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-2]: stopped: breakpoint "))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[0,2]: value = 4\n[1]: value = 9\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[0-2] main\n"))
		TH_LOG("%s", self->r.buf);
	/* Output carries the rank that wrote it (mpirun --tag-output). */
	EXPECT_NE(NULL, strstr(self->r.buf, "[1] mpi rank 1 of 3 value 9\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-2]: exited: code 0\n"))
		TH_LOG("%s", self->r.buf);
}

/*
 * An MPI deadlock: stacks shows the two groups; input reaches rank 0
 * through mpirun's stdin (and only rank 0: mpirun forwards it there).
 */
TEST_F_TIMEOUT(debug, mpir_deadlock_stacks_stdin, 240)
{
	const char *a[] = { "-ex", "input hello mpi", "-ex", "timeout 5", "-ex", "continue",
			    "-ex", "interrupt", "-ex", "stacks", "-ex", "[2] input x",
			    "--", "mpirun", "--oversubscribe", "-n", "4", MPI_PROG, "deadlock",
			    NULL };

	if (!have_mpi())
		SKIP(return, "no mpirun, or %s not built (mpicc)", MPI_PROG);
	mpi_env();
	/* The refused input is a failed command: exit 1. */
	ASSERT_EQ(1, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0] mpi rank 0 got: hello mpi\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[0-3] main\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n  [0,2] recv_forever\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n  [1,3] barrier_forever\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "input: mpirun forwards its stdin to rank 0 only\n"))
		TH_LOG("%s", self->r.buf);
}

/*
 * MPICH: Debian's mpiexec.hydra is stripped of its MPIR symbols, so its
 * ranks are acquired through libcrdbg-mpi's hold in MPI_Init
 * (--mpi-hold); then a session works as under MPIR: one merged
 * breakpoint, print grouped by value, stacks of a deadlock, output
 * labelled by rank.
 */
TEST_F_TIMEOUT(debug, mpich_hydra_break_print_stacks, 240)
{
	const char *prog = "build/tests/debug/mpi_debug_mpich";
	char lib[PATH_MAX];
	const char *a[] = { "--mpi-hold", "-ex", "break mpi_debug.c:51", "-ex", "continue",
			    "-ex", "print value", "-ex", "timeout 5", "-ex", "continue",
			    "-ex", "interrupt", "-ex", "stacks",
			    "--", "mpiexec.hydra", "-n", "4", "-genv", "LD_PRELOAD", lib,
			    prog, "deadlock", NULL };

	if (access(prog, X_OK) || !realpath("build/usr/libcrdbg-mpi-mpich.so", lib) ||
	    system("mpiexec.hydra --version >/dev/null 2>&1"))
		SKIP(return, "no mpiexec.hydra, or %s / libcrdbg-mpi-mpich.so not built "
		     "(mpicc.mpich)", prog);
	ASSERT_EQ(0, debug(&self->r, a)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-3]: stopped: breakpoint 1, main at "))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n[0,2]: value = 4\n[1,3]: value = 9\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n  [0,2] recv_forever"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "\n  [1,3] barrier_forever"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "mpi rank 3 of 4 value 9"))
		TH_LOG("%s", self->r.buf);
}

/* An MPI rank's gdb killed mid-session: that rank is lost, the job goes on. */
TEST_F_TIMEOUT(debug, mpir_gdb_killed_rank_lost, 240)
{
	const char *argv[] = { CRDBG, "debug", "--", "mpirun", "--oversubscribe", "-n", "3",
			       MPI_PROG, NULL };
	struct run *r = &self->r;

	if (!have_mpi())
		SKIP(return, "no mpirun, or %s not built (mpicc)", MPI_PROG);
	mpi_env();
	ASSERT_EQ(0, run_start(r, argv, true));
	kill_gdb_of_rank1(_metadata, r);
	EXPECT_EQ(1, run_finish(r)) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "[0,2]: value = 0\n")) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "[1]: lost: ")) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "\n1      lost ")) TH_LOG("%s", r->buf);
	/* status merges the ranks in one state and place: the lost one apart. */
	EXPECT_TRUE(has_line(r->buf, "^\\[1\\] +lost +")) TH_LOG("%s", r->buf);
	/* Its tracer gone, rank 1 runs on with the job, which ends normally. */
	EXPECT_NE(NULL, strstr(r->buf, "mpi rank 1 of 3 value 9\n")) TH_LOG("%s", r->buf);
	EXPECT_NE(NULL, strstr(r->buf, "[0,2]: exited: code 0\n")) TH_LOG("%s", r->buf);
}

/* crdbg attach to a running job through its mpirun, options before and after the pid. */
TEST_F_TIMEOUT(debug, mpir_attach, 240)
{
	const char *job[] = { "/usr/bin/env", "mpirun", "--oversubscribe", "-n", "2",
			      MPI_PROG, "spin", NULL };
	struct run mpirun;
	char pid[16];
	/* Options after the pid too, as most tools take them. */
	const char *a[] = { "-ex", "checkpoint", pid, "-ex", "print spinning",
			    "-ex", "set var spinning = 0", "-ex", "continue", NULL };
	const char *argv[16] = { CRDBG, "attach" };
	int n = 2;

	if (!have_mpi())
		SKIP(return, "no mpirun, or %s not built (mpicc)", MPI_PROG);
	mpi_env();
	ASSERT_EQ(0, run_start(&mpirun, job, false));
	/* Both ranks are past MPI_Init and spinning once they have printed. */
	ASSERT_TRUE(run_read_until(&mpirun, "mpi rank 1 of 2")) TH_LOG("%s", mpirun.buf);
	ASSERT_TRUE(run_read_until(&mpirun, "mpi rank 0 of 2")) TH_LOG("%s", mpirun.buf);
	snprintf(pid, sizeof(pid), "%d", mpirun.pid);
	for (int i = 0; a[i]; i++)
		argv[n++] = a[i];
	argv[n] = NULL;
	ASSERT_EQ(0, run_start(&self->r, argv, false));
	/* checkpoint is refused in one line (exit 1), the session goes on. */
	EXPECT_EQ(1, run_finish(&self->r)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "a job joined with crdbg attach cannot be checkpointed"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-1]: stopped: attached"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-1]: spinning = 1\n"))
		TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "[0-1]: exited: code 0\n"))
		TH_LOG("%s", self->r.buf);
	/* The job itself ends normally once its ranks are released. */
	EXPECT_EQ(0, run_finish(&mpirun)) TH_LOG("%s", mpirun.buf);
	run_free(&mpirun);
}

/* The first pid in /proc/PID/task/PID/children, or 0 after ~10 s. */
static pid_t first_child(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		int child = 0;

		if (f && fscanf(f, "%d", &child) != 1)
			child = 0;
		if (f)
			fclose(f);
		if (child > 0)
			return child;
		usleep(20000);
	}
	return 0;
}

/* An MPIR launcher of one rank that waits in vfork() until go exists. */
struct vfork_job {
	struct run launcher;
	char prog[PATH_MAX], go[32], pid[16];	/* pid: the launcher's */
	pid_t rank;
};

static void vfork_job_start(struct __test_metadata *_metadata, struct vfork_job *j)
{
	const char *job[] = { MPIR_LAUNCHER, j->prog, j->go, NULL };
	int fd;

	ASSERT_NE(NULL, realpath(VFORK_PROG, j->prog));
	snprintf(j->go, sizeof(j->go), "/tmp/crdbg-vfork-go.XXXXXX");
	fd = mkstemp(j->go);
	ASSERT_LE(0, fd);
	close(fd);
	unlink(j->go);
	ASSERT_EQ(0, run_start(&j->launcher, job, false));
	j->rank = first_child(j->launcher.pid);
	ASSERT_LT(0, j->rank);
	ASSERT_LT(0, first_child(j->rank)) TH_LOG("the rank never called vfork()");
	snprintf(j->pid, sizeof(j->pid), "%d", j->launcher.pid);
}

/*
 * Let the vfork end: the rank, which the attach's SIGSTOP must not have
 * outlived, runs to its end (one that stopped for good is killed, not
 * left behind).
 */
static void vfork_job_end(struct __test_metadata *_metadata, struct vfork_job *j)
{
	bool over;
	int fd;

	fd = open(j->go, O_CREAT | O_WRONLY, 0600);
	ASSERT_LE(0, fd);
	close(fd);
	over = run_read_until(&j->launcher, "vfork over");
	EXPECT_TRUE(over) TH_LOG("%s", j->launcher.buf);
	if (!over)
		kill(j->rank, SIGKILL);
	EXPECT_EQ(0, run_finish(&j->launcher)) TH_LOG("%s", j->launcher.buf);
	unlink(j->go);
	run_free(&j->launcher);
}

/*
 * A rank whose gdb cannot attach (it waits in vfork(), where no stop can
 * reach it) is given up after --attach-timeout, not the default minutes,
 * and is left running: once its vfork ends it goes on to its end.
 */
TEST_F_TIMEOUT(debug, mpir_attach_timeout, 180)
{
	struct vfork_job j;
	const char *argv[] = { CRDBG, "attach", "--attach-timeout", "3", "-ex", "status",
			       j.pid, NULL };

	if (access(MPIR_LAUNCHER, X_OK) || access(VFORK_PROG, X_OK))
		SKIP(return, "%s or %s not built", MPIR_LAUNCHER, VFORK_PROG);
	vfork_job_start(_metadata, &j);
	ASSERT_EQ(0, run_start(&self->r, argv, false));
	EXPECT_NE(0, run_finish(&self->r)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "gdb did not attach within 3 s"))
		TH_LOG("%s", self->r.buf);
	vfork_job_end(_metadata, &j);
}

/* The pid tracing pid (its TracerPid), 0 for none. */
static pid_t tracer_of(pid_t pid)
{
	char path[64], line[128];
	pid_t tracer = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "TracerPid:", 10))
			tracer = atoi(line + 10);
	if (f)
		fclose(f);
	return tracer;
}

/*
 * A gdb that dies while it attaches (here: killed while the rank waits in
 * vfork() and cannot stop) loses its rank in one line, and the SIGSTOP its
 * attach queued goes with it: the rank ends normally once its vfork does.
 */
TEST_F_TIMEOUT(debug, mpir_attach_gdb_killed, 180)
{
	struct vfork_job j;
	const char *argv[] = { CRDBG, "attach", "--attach-timeout", "120", "-ex", "status",
			       j.pid, NULL };
	pid_t gdb = 0;

	if (access(MPIR_LAUNCHER, X_OK) || access(VFORK_PROG, X_OK))
		SKIP(return, "%s or %s not built", MPIR_LAUNCHER, VFORK_PROG);
	vfork_job_start(_metadata, &j);
	ASSERT_EQ(0, run_start(&self->r, argv, false));
	for (int i = 0; i < 600 && !(gdb = tracer_of(j.rank)); i++)
		usleep(100 * 1000);
	ASSERT_LT(0, gdb) TH_LOG("no gdb ever attached to the rank");
	usleep(300 * 1000);	/* into the attach, its SIGSTOP queued */
	kill(gdb, SIGKILL);
	EXPECT_NE(0, run_finish(&self->r)) TH_LOG("%s", self->r.buf);
	EXPECT_NE(NULL, strstr(self->r.buf, "lost")) TH_LOG("%s", self->r.buf);
	vfork_job_end(_metadata, &j);
}

/* Bad invocations fail with one clear line and no session. */
TEST(bad_usage)
{
	const char *none[] = { "-n", "2", NULL };
	const char *zero[] = { "-n", "0", DEBUG_PROG, NULL };
	const char *no_time[] = { "--attach-timeout", "0", DEBUG_PROG, NULL };
	char dir[] = "/tmp/crdbg-launcher.XXXXXX", fake[PATH_MAX], cmd[PATH_MAX + 32];
	const char *stripped[] = { "-ex", "status", "--", fake, "-n", "2", DEBUG_PROG, NULL };
	const char *missing[] = { "-n", "2", "/nonexistent/prog", NULL };
	struct run r;

	EXPECT_EQ(2, debug(&r, none));
	EXPECT_NE(NULL, strstr(r.buf, "no program given")) TH_LOG("%s", r.buf);
	run_free(&r);
	EXPECT_EQ(2, debug(&r, zero));
	EXPECT_NE(NULL, strstr(r.buf, "-n wants")) TH_LOG("%s", r.buf);
	run_free(&r);
	EXPECT_EQ(2, debug(&r, no_time));
	EXPECT_NE(NULL, strstr(r.buf, "--attach-timeout wants 1..86400 seconds, not '0'"))
		TH_LOG("%s", r.buf);
	run_free(&r);
	EXPECT_EQ(1, debug(&r, missing));
	EXPECT_NE(NULL, strstr(r.buf, "cannot run /nonexistent/prog")) TH_LOG("%s", r.buf);
	run_free(&r);
	/* A launcher without MPIR (a copy of true named mpiexec) is refused. */
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(fake, sizeof(fake), "%s/mpiexec", dir);
	snprintf(cmd, sizeof(cmd), "cp /bin/true %s", fake);
	ASSERT_EQ(0, system(cmd));
	EXPECT_EQ(1, debug(&r, stripped));
	EXPECT_NE(NULL, strstr(r.buf, "/mpiexec implements no MPIR (a stripped launcher?)"))
		TH_LOG("%s", r.buf);
	EXPECT_NE(NULL, strstr(r.buf, "use --mpi-hold")) TH_LOG("%s", r.buf);
	EXPECT_EQ(NULL, strstr(r.buf, "(crdbg)")) TH_LOG("%s", r.buf);
	run_free(&r);
	unlink(fake);
	rmdir(dir);
}

TEST_HARNESS_MAIN
