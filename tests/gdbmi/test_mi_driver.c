// SPDX-License-Identifier: GPL-2.0
/*
 * GDB/MI driver against the real gdb: breakpoints, run, stop events,
 * print and set, step/next/finish, backtraces, threads, interrupt, the
 * program's stdin and stdout through the pty, attach and detach, a gdb
 * killed mid-session (an error, never a hang, no orphan left), and the
 * private index cache.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "crdbg/gdbmi.h"

#ifndef GDBMI_PROG_DIR
#define GDBMI_PROG_DIR "build/tests/gdbmi"
#endif
#define SRC_DIR		"tests/gdbmi"
#define PROG_SIMPLE	GDBMI_PROG_DIR "/prog_simple"
#define PROG_THREADS	GDBMI_PROG_DIR "/prog_threads"
#define WAIT_MS		20000	/* a bound against hangs, not a timing check */

/* Line of the source line carrying marker (e.g. "MARK_CALL"), or -1. */
static int marker_line(const char *prog, const char *marker)
{
	char path[256], buf[512];
	int line = 0, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), SRC_DIR "/%s.c", prog);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f)) {
		line++;
		if (strstr(buf, marker)) {
			found = line;
			break;
		}
	}
	fclose(f);
	return found;
}

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* Read program output until it contains needle; the text goes in buf. */
static bool read_until(struct mi_driver *d, const char *needle, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	while (!strstr(buf, needle)) {
		ssize_t n;

		if (len + 1 >= size)
			return false;
		n = mi_driver_read_output(d, buf + len, size - 1 - len, WAIT_MS);
		if (n <= 0)
			return false;
		len += n;
		buf[len] = '\0';
	}
	return true;
}

static bool have_gdb(void)
{
	return !system("gdb --version >/dev/null 2>&1");
}

FIXTURE(gdb) {
	struct mi_driver *d;
	char loc[64];
};

FIXTURE_SETUP(gdb)
{
	self->d = NULL;
	if (!have_gdb())
		SKIP(return, "gdb is not installed");
}

FIXTURE_TEARDOWN(gdb)
{
	mi_driver_free(self->d);
}

static int start(struct mi_driver **d, const char *prog, const char *arg)
{
	const char *args[] = { arg, NULL };
	struct mi_driver_opts o = { .program = prog, .args = args, .cmd_timeout_ms = WAIT_MS };

	return mi_driver_start(&o, d);
}

/* Start prog_simple, break at MARK_CALL and run to it. */
static int run_to_call(struct __test_metadata *_metadata, struct mi_driver **d,
		       const char *arg, struct mi_stop *stop)
{
	int line = marker_line("prog_simple", "MARK_CALL");
	char loc[64];

	ASSERT_LT(0, line);
	ASSERT_EQ(0, start(d, PROG_SIMPLE, arg));
	snprintf(loc, sizeof(loc), "prog_simple.c:%d", line);
	ASSERT_EQ(0, mi_break(*d, loc, NULL));
	ASSERT_EQ(0, mi_run(*d));
	ASSERT_EQ(1, mi_wait_stop(*d, WAIT_MS, stop));
	return line;
}

TEST_F(gdb, break_run_stop_event)
{
	int line = marker_line("prog_simple", "MARK_CALL");
	struct mi_breakpoint bp;
	struct mi_stop stop;

	ASSERT_LT(0, line);
	ASSERT_EQ(0, start(&self->d, PROG_SIMPLE, NULL));
	snprintf(self->loc, sizeof(self->loc), "prog_simple.c:%d", line);
	ASSERT_EQ(0, mi_break(self->d, self->loc, &bp));
	EXPECT_LT(0, bp.number);
	EXPECT_EQ(line, bp.line);
	EXPECT_STREQ("main", bp.func);
	mi_breakpoint_release(&bp);

	ASSERT_EQ(0, mi_run(self->d));
	ASSERT_EQ(1, mi_wait_stop(self->d, WAIT_MS, &stop));
	EXPECT_STREQ("breakpoint-hit", stop.reason);
	EXPECT_EQ(bp.number, stop.bkptno);
	EXPECT_STREQ("main", stop.frame.func);
	EXPECT_STREQ("prog_simple.c", base(stop.frame.file));
	EXPECT_EQ(line, stop.frame.line);
	EXPECT_NE(0, stop.frame.addr);
	EXPECT_EQ(1, stop.thread_id);
	EXPECT_FALSE(stop.exited);
	mi_stop_release(&stop);
	EXPECT_LT(0, mi_driver_inferior_pid(self->d));

	/* Continue to the end: an exit event with the exit code. */
	ASSERT_EQ(0, mi_continue(self->d));
	ASSERT_EQ(1, mi_wait_stop(self->d, WAIT_MS, &stop));
	EXPECT_TRUE(stop.exited);
	EXPECT_STREQ("exited-normally", stop.reason);
	EXPECT_EQ(0, stop.exit_code);
	mi_stop_release(&stop);
}

TEST_F(gdb, print_and_set_variable)
{
	struct mi_stop stop;
	char *val;

	run_to_call(_metadata, &self->d, NULL, &stop);
	mi_stop_release(&stop);
	ASSERT_EQ(0, mi_print(self->d, "x", &val));
	EXPECT_STREQ("4", val);
	free(val);
	ASSERT_EQ(0, mi_print(self->d, "x * 10 + 2", &val));
	EXPECT_STREQ("42", val);
	free(val);

	ASSERT_EQ(0, mi_driver_cmd(self->d, NULL, "-gdb-set var x=5"));
	ASSERT_EQ(0, mi_print(self->d, "x", &val));
	EXPECT_STREQ("5", val);
	free(val);

	/* A gdb error is -EREMOTEIO with gdb's message; the session goes on. */
	EXPECT_EQ(-EREMOTEIO, mi_print(self->d, "no_such_variable", &val));
	EXPECT_NE(NULL, strstr(mi_driver_error(self->d), "no_such_variable"))
		TH_LOG("error: %s", mi_driver_error(self->d));
	/* A quote in the expression is escaped, not an MI syntax error. */
	ASSERT_EQ(0, mi_print(self->d, "sizeof(\"ab\\\"c\")", &val));
	EXPECT_STREQ("5", val);
	free(val);

	/* x = 5 now: square gives 25, main returns 1. */
	ASSERT_EQ(0, mi_continue(self->d));
	ASSERT_EQ(1, mi_wait_stop(self->d, WAIT_MS, &stop));
	EXPECT_STREQ("exited", stop.reason);
	EXPECT_EQ(1, stop.exit_code);
	mi_stop_release(&stop);
}

TEST_F(gdb, step_next_finish_backtrace)
{
	int sq = marker_line("prog_simple", "MARK_SQUARE");
	int after = marker_line("prog_simple", "MARK_AFTER");
	struct mi_frames bt;
	struct mi_stop stop;
	int call;
	char *val;

	ASSERT_LT(0, sq);
	call = run_to_call(_metadata, &self->d, NULL, &stop);
	mi_stop_release(&stop);

	ASSERT_EQ(0, mi_step(self->d));
	ASSERT_EQ(1, mi_wait_stop(self->d, WAIT_MS, &stop));
	EXPECT_STREQ("end-stepping-range", stop.reason);
	EXPECT_STREQ("square", stop.frame.func);
	EXPECT_EQ(sq, stop.frame.line);
	mi_stop_release(&stop);

	ASSERT_EQ(0, mi_backtrace(self->d, 0, &bt));
	ASSERT_EQ(2, bt.n);
	EXPECT_STREQ("square", bt.frames[0].func);
	EXPECT_EQ(0, bt.frames[0].level);
	EXPECT_STREQ("main", bt.frames[1].func);
	EXPECT_EQ(1, bt.frames[1].level);
	EXPECT_EQ(call, bt.frames[1].line);
	mi_frames_release(&bt);
	ASSERT_EQ(0, mi_backtrace(self->d, 1, &bt));
	EXPECT_EQ(1, bt.n);
	mi_frames_release(&bt);

	/* Frame selection: main's x is still 4, square's v is 4. */
	ASSERT_EQ(0, mi_driver_cmd(self->d, NULL, "-stack-select-frame 1"));
	ASSERT_EQ(0, mi_print(self->d, "x", &val));
	EXPECT_STREQ("4", val);
	free(val);
	ASSERT_EQ(0, mi_driver_cmd(self->d, NULL, "-stack-select-frame 0"));
	ASSERT_EQ(0, mi_print(self->d, "v", &val));
	EXPECT_STREQ("4", val);
	free(val);

	ASSERT_EQ(0, mi_finish(self->d));
	ASSERT_EQ(1, mi_wait_stop(self->d, WAIT_MS, &stop));
	EXPECT_STREQ("function-finished", stop.reason);
	EXPECT_STREQ("main", stop.frame.func);
	mi_stop_release(&stop);

	ASSERT_EQ(0, mi_next(self->d));
	ASSERT_EQ(1, mi_wait_stop(self->d, WAIT_MS, &stop));
	EXPECT_STREQ("end-stepping-range", stop.reason);
	EXPECT_EQ(after, stop.frame.line);
	mi_stop_release(&stop);
	ASSERT_EQ(0, mi_print(self->d, "x", &val));
	EXPECT_STREQ("16", val);
	free(val);
}

/* Commands sent without waiting, results taken in any order. */
TEST_F(gdb, async_commands)
{
	struct mi_record *rec;
	uint64_t tok[4];
	struct pollfd fds[8];
	int got = 0, nfds;
	bool done[4] = { false };
	char *val;

	ASSERT_EQ(0, start(&self->d, PROG_SIMPLE, NULL));
	ASSERT_EQ(0, mi_driver_send(self->d, &tok[0], "-data-evaluate-expression 1+1"));
	ASSERT_EQ(0, mi_driver_send(self->d, &tok[1], "-data-evaluate-expression \"sizeof(int)*3\""));
	ASSERT_EQ(0, mi_driver_send(self->d, &tok[2], "-data-evaluate-expression nosuchsym"));
	ASSERT_EQ(0, mi_driver_send(self->d, &tok[3], "-break-insert square"));
	EXPECT_EQ(-ENOENT, mi_driver_take_result(self->d, tok[3] + 100, &rec));
	/* A synchronous command in between still gets its own result. */
	ASSERT_EQ(0, mi_print(self->d, "2*21", &val));
	EXPECT_STREQ("42", val);
	free(val);

	while (got < 4) {
		nfds = mi_driver_pollfds(self->d, fds, 8);
		ASSERT_LT(0, nfds);
		for (int i = 3; i >= 0; i--) {	/* take in reverse order */
			int r;

			if (done[i])
				continue;
			r = mi_driver_take_result(self->d, tok[i], &rec);
			ASSERT_LE(0, r);
			if (!r)
				continue;
			done[i] = true;
			got++;
			switch (i) {
			case 0:
				EXPECT_STREQ("2", mi_get_str(rec->results, "value"));
				break;
			case 1:
				EXPECT_STREQ("12", mi_get_str(rec->results, "value"));
				break;
			case 2:
				EXPECT_EQ(MI_RC_ERROR, rec->rclass);
				break;
			case 3:
				EXPECT_STREQ("square", mi_get_str(rec->results, "bkpt.func"));
				break;
			}
			mi_record_free(rec);
		}
		if (got < 4) {
			ASSERT_LT(0, poll(fds, nfds, WAIT_MS));
			ASSERT_EQ(0, mi_driver_pump(self->d, 0));
		}
	}
	EXPECT_EQ(-ENOENT, mi_driver_take_result(self->d, tok[0], &rec));	/* taken */
	EXPECT_EQ(-EINVAL, mi_driver_send(self->d, &tok[0], "-gdb-version\n-gdb-exit"));

	/*
	 * gdb gone: a result that did not come is -EPIPE. gdb is stopped
	 * first so that it cannot answer before it dies.
	 */
	ASSERT_EQ(0, kill(mi_driver_gdb_pid(self->d), SIGSTOP));
	ASSERT_EQ(0, mi_driver_send(self->d, &tok[0], "-gdb-version"));
	ASSERT_EQ(0, kill(mi_driver_gdb_pid(self->d), SIGKILL));
	while (mi_driver_pump(self->d, WAIT_MS) == 0)
		;
	EXPECT_EQ(-EPIPE, mi_driver_take_result(self->d, tok[0], &rec));
	EXPECT_EQ(-EPIPE, mi_driver_send(self->d, &tok[1], "-gdb-version"));
}

/* A breakpoint gdb puts in several places: the first source line and the count. */
TEST_F(gdb, breakpoint_with_two_locations)
{
	int line = marker_line("prog_simple", "MARK_TWICE");
	struct mi_breakpoint bp;

	ASSERT_LT(0, line);
	ASSERT_EQ(0, start(&self->d, PROG_SIMPLE, NULL));
	ASSERT_EQ(0, mi_break(self->d, "twice", &bp));
	EXPECT_EQ(2, bp.nlocations);
	ASSERT_NE(NULL, bp.file);
	EXPECT_NE(NULL, strstr(bp.file, "prog_simple.c"));
	EXPECT_EQ(line, bp.line);
	mi_breakpoint_release(&bp);
	ASSERT_EQ(0, mi_break(self->d, "square", &bp));
	EXPECT_EQ(1, bp.nlocations);
	mi_breakpoint_release(&bp);
}

TEST_F(gdb, delete_breakpoint)
{
	struct mi_breakpoint bp;
	struct mi_stop stop;
	char buf[256];

	ASSERT_EQ(0, start(&self->d, PROG_SIMPLE, NULL));
	ASSERT_EQ(0, mi_break(self->d, "square", &bp));
	EXPECT_STREQ("square", bp.func);
	ASSERT_EQ(0, mi_driver_cmd(self->d, NULL, "-break-delete %d", bp.number));
	mi_breakpoint_release(&bp);
	ASSERT_EQ(0, mi_run(self->d));
	/* No stop in square: the program's output, then its exit. */
	ASSERT_TRUE(read_until(self->d, "x=16\n", buf, sizeof(buf)));
	ASSERT_EQ(1, mi_wait_stop(self->d, WAIT_MS, &stop));
	EXPECT_TRUE(stop.exited);
	mi_stop_release(&stop);
}

TEST_F(gdb, threads)
{
	int line = marker_line("prog_threads", "MARK_ALL_STARTED");
	struct mi_threads th;
	struct mi_stop stop;
	size_t stopped = 0, workers = 0;

	ASSERT_LT(0, line);
	ASSERT_EQ(0, start(&self->d, PROG_THREADS, NULL));
	snprintf(self->loc, sizeof(self->loc), "prog_threads.c:%d", line);
	ASSERT_EQ(0, mi_break(self->d, self->loc, NULL));
	ASSERT_EQ(0, mi_run(self->d));
	ASSERT_EQ(1, mi_wait_stop(self->d, WAIT_MS, &stop));
	EXPECT_STREQ("all_started", stop.frame.func);
	mi_stop_release(&stop);

	ASSERT_EQ(0, mi_thread_info(self->d, &th));
	ASSERT_EQ(4, th.n);
	EXPECT_NE(0, th.current);
	for (size_t i = 0; i < th.n; i++) {
		struct mi_frames bt;

		EXPECT_LT(0, th.threads[i].id);
		EXPECT_NE(NULL, th.threads[i].target_id);
		if (th.threads[i].state && !strcmp(th.threads[i].state, "stopped"))
			stopped++;
		/* Each worker's stack has worker_wait above worker. */
		ASSERT_EQ(0, mi_driver_cmd(self->d, NULL, "-thread-select %d", th.threads[i].id));
		ASSERT_EQ(0, mi_backtrace(self->d, 0, &bt));
		for (size_t f = 0; f < bt.n; f++)
			if (!strcmp(bt.frames[f].func, "worker_wait"))
				workers++;
		mi_frames_release(&bt);
	}
	EXPECT_EQ(4, stopped);
	EXPECT_EQ(3, workers);
	EXPECT_EQ(-EREMOTEIO, mi_driver_cmd(self->d, NULL, "-thread-select 99"));
	mi_threads_release(&th);
}

TEST_F(gdb, interrupt_busy_loop)
{
	struct mi_frames bt;
	struct mi_stop stop;
	char buf[256];
	bool in_busy = false;

	ASSERT_EQ(0, start(&self->d, PROG_SIMPLE, "busy"));
	ASSERT_EQ(0, mi_run(self->d));
	/* busy() prints this, then spins: from now on it is on the stack. */
	ASSERT_TRUE(read_until(self->d, "spinning\n", buf, sizeof(buf)));
	ASSERT_EQ(0, mi_interrupt(self->d));
	ASSERT_EQ(1, mi_wait_stop(self->d, WAIT_MS, &stop));
	EXPECT_STREQ("signal-received", stop.reason);
	EXPECT_STREQ("SIGINT", stop.signal);
	mi_stop_release(&stop);
	ASSERT_EQ(0, mi_backtrace(self->d, 0, &bt));
	ASSERT_LT(0, bt.n);
	EXPECT_STREQ("main", bt.frames[bt.n - 1].func);
	for (size_t i = 0; i < bt.n; i++)
		in_busy |= !strcmp(bt.frames[i].func, "busy");
	EXPECT_TRUE(in_busy);
	mi_frames_release(&bt);

	/* Interrupt works again after a continue. */
	ASSERT_EQ(0, mi_continue(self->d));
	ASSERT_EQ(0, mi_interrupt(self->d));
	ASSERT_EQ(1, mi_wait_stop(self->d, WAIT_MS, &stop));
	EXPECT_STREQ("signal-received", stop.reason);
	mi_stop_release(&stop);
	ASSERT_EQ(0, mi_driver_cmd(self->d, NULL, "-interpreter-exec console kill"));
}

TEST_F(gdb, program_io_through_pty)
{
	struct mi_stop stop;
	char buf[256];

	ASSERT_EQ(0, start(&self->d, PROG_SIMPLE, "echo"));
	EXPECT_EQ(0, strncmp(mi_driver_tty(self->d), "/dev/pts/", 9));
	ASSERT_EQ(0, mi_run(self->d));
	ASSERT_TRUE(read_until(self->d, "x=16\n", buf, sizeof(buf)));
	EXPECT_STREQ("x=16\n", buf);	/* no \r: the pty does not translate */
	ASSERT_EQ(0, mi_driver_write_input(self->d, "hello pty\n", 10));
	ASSERT_TRUE(read_until(self->d, "got:hello pty\n", buf, sizeof(buf)));
	EXPECT_EQ(NULL, strstr(buf, "got:hello pty\ngot")) /* no echo of our input */;
	ASSERT_EQ(1, mi_wait_stop(self->d, WAIT_MS, &stop));
	EXPECT_STREQ("exited-normally", stop.reason);
	mi_stop_release(&stop);
}

/*
 * FIFO mode (checkpointable programs): output on one FIFO, stdin on
 * another. With a single FIFO the program would read its own "x=16".
 */
TEST_F(gdb, program_io_through_fifos)
{
	const char *args[] = { "echo", NULL };
	struct mi_driver_opts o = { .program = PROG_SIMPLE, .args = args,
				    .cmd_timeout_ms = WAIT_MS, .fifo = true };
	struct mi_stop stop;
	char buf[256];

	ASSERT_EQ(0, mi_driver_start(&o, &self->d));
	EXPECT_EQ(0, strncmp(mi_driver_tty(self->d), "/tmp/crdbg-io-", 14));
	ASSERT_EQ(0, mi_run(self->d));
	ASSERT_TRUE(read_until(self->d, "x=16\n", buf, sizeof(buf)));
	ASSERT_EQ(0, mi_driver_write_input(self->d, "hello fifo\n", 11));
	ASSERT_TRUE(read_until(self->d, "got:", buf, sizeof(buf)));
	if (!strchr(strstr(buf, "got:"), '\n'))
		ASSERT_TRUE(read_until(self->d, "\n", buf + strlen(buf),
				       sizeof(buf) - strlen(buf)));
	EXPECT_NE(NULL, strstr(buf, "got:hello fifo\n")) TH_LOG("%s", buf);
	ASSERT_EQ(1, mi_wait_stop(self->d, WAIT_MS, &stop));
	EXPECT_STREQ("exited-normally", stop.reason);
	mi_stop_release(&stop);
}

/*
 * A driver killed before mi_driver_free leaves its FIFOs; the next one
 * removes those of a pid that is gone in its PID namespace, and no other.
 */
TEST_F(gdb, dead_drivers_fifos_swept)
{
	const char *args[] = { "echo", NULL };
	struct mi_driver_opts o = { .program = PROG_SIMPLE, .args = args,
				    .cmd_timeout_ms = WAIT_MS, .fifo = true };
	char dead[96], live[96], other[96];
	unsigned long ns;
	struct stat st;
	pid_t gone;

	ASSERT_EQ(0, stat("/proc/self/ns/pid", &st));
	ns = (unsigned long)st.st_ino;
	gone = fork();
	if (!gone)
		_exit(0);
	ASSERT_EQ(gone, waitpid(gone, NULL, 0));
	snprintf(dead, sizeof(dead), "/tmp/crdbg-io-%lu-%d-0x1.in", ns, (int)gone);
	snprintf(live, sizeof(live), "/tmp/crdbg-io-%lu-%d-0x1", ns, (int)getpid());
	snprintf(other, sizeof(other), "/tmp/crdbg-io-%lu-%d-0x1", ns + 1, (int)gone);
	ASSERT_EQ(0, mkfifo(dead, 0600));
	ASSERT_EQ(0, mkfifo(live, 0600));
	ASSERT_EQ(0, mkfifo(other, 0600));
	ASSERT_EQ(0, mi_driver_start(&o, &self->d));
	EXPECT_NE(0, access(dead, F_OK));
	EXPECT_EQ(0, access(live, F_OK));
	EXPECT_EQ(0, access(other, F_OK));
	unlink(dead);
	unlink(live);
	unlink(other);
}

static int pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

TEST_F(gdb, gdb_killed_mid_session)
{
	struct mi_record *rec;
	struct mi_stop stop;
	struct pollfd pfd;
	pid_t gdb, inf;
	char *val;

	run_to_call(_metadata, &self->d, NULL, &stop);
	mi_stop_release(&stop);
	gdb = mi_driver_gdb_pid(self->d);
	inf = mi_driver_inferior_pid(self->d);
	ASSERT_LT(0, gdb);
	ASSERT_LT(0, inf);
	pfd.fd = pidfd_open(inf);
	pfd.events = POLLIN;
	ASSERT_LE(0, pfd.fd);

	ASSERT_EQ(0, kill(gdb, SIGKILL));
	/* Every call now fails with -EPIPE instead of waiting. */
	EXPECT_EQ(-EPIPE, mi_print(self->d, "x", &val));
	EXPECT_FALSE(mi_driver_alive(self->d));
	EXPECT_NE(NULL, strstr(mi_driver_error(self->d), "signal 9"))
		TH_LOG("error: %s", mi_driver_error(self->d));
	EXPECT_EQ(-EPIPE, mi_continue(self->d));
	EXPECT_EQ(-EPIPE, mi_wait_stop(self->d, -1, &stop));
	EXPECT_EQ(-EPIPE, mi_driver_next_event(self->d, -1, &rec));
	EXPECT_EQ(-EPIPE, mi_driver_pump(self->d, -1));

	/* Freeing the driver does not leave the orphaned program behind. */
	mi_driver_free(self->d);
	self->d = NULL;
	ASSERT_EQ(1, poll(&pfd, 1, WAIT_MS));
	close(pfd.fd);
}

/* gdb dies while we block waiting for the running program to stop. */
TEST_F(gdb, gdb_killed_while_waiting)
{
	struct mi_stop stop;
	char buf[256];
	pid_t killer, gdb;
	int status;

	ASSERT_EQ(0, start(&self->d, PROG_SIMPLE, "busy"));
	ASSERT_EQ(0, mi_run(self->d));
	ASSERT_TRUE(read_until(self->d, "spinning\n", buf, sizeof(buf)));
	gdb = mi_driver_gdb_pid(self->d);
	killer = fork();
	ASSERT_LE(0, killer);
	if (killer == 0) {
		kill(gdb, SIGKILL);
		_exit(0);
	}
	/* No timeout: only gdb's death can end this wait. */
	EXPECT_EQ(-EPIPE, mi_wait_stop(self->d, -1, &stop));
	EXPECT_EQ(-EPIPE, mi_interrupt(self->d));
	ASSERT_EQ(killer, waitpid(killer, &status, 0));
}

TEST_F(gdb, attach_and_detach)
{
	struct mi_frames bt;
	char buf[64] = "";
	int pfd[2], status;
	bool found = false;
	size_t len = 0;
	pid_t child;
	ssize_t n;

	ASSERT_EQ(0, pipe(pfd));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pfd[1], 1);
		execl(PROG_SIMPLE, "prog_simple", "busy", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	/* Wait until it spins (and has allowed ptrace by anyone). */
	while (!strstr(buf, "spinning") && len < sizeof(buf) - 1 &&
	       (n = read(pfd[0], buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += n;
		buf[len] = '\0';
	}
	ASSERT_NE(NULL, strstr(buf, "spinning"));

	ASSERT_EQ(0, start(&self->d, NULL, NULL));
	ASSERT_EQ(0, mi_driver_cmd(self->d, NULL, "-file-exec-and-symbols %s", PROG_SIMPLE));
	if (mi_attach(self->d, child)) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		SKIP(return, "gdb cannot attach (ptrace restricted): %s",
		     mi_driver_error(self->d));
	}
	ASSERT_EQ(0, mi_backtrace(self->d, 0, &bt));
	for (size_t i = 0; i < bt.n; i++)
		found |= !strcmp(bt.frames[i].func, "busy");
	EXPECT_TRUE(found);
	mi_frames_release(&bt);
	ASSERT_EQ(0, mi_detach(self->d));
	EXPECT_EQ(0, mi_driver_inferior_pid(self->d));
	mi_driver_free(self->d);
	self->d = NULL;

	/* Detached, not killed: still running until we end it. */
	EXPECT_EQ(0, waitpid(child, &status, WNOHANG));
	kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	close(pfd[0]);
}

/* The crdbg-gdb-index.* directories under dir: how many, the last one's path. */
static int cache_dirs(const char *dir, char *path, size_t size)
{
	struct dirent *e;
	DIR *dp = opendir(dir);
	int n = 0;

	while (dp && (e = readdir(dp)))
		if (!strncmp(e->d_name, "crdbg-gdb-index.", 16)) {
			snprintf(path, size, "%s/%s", dir, e->d_name);
			n++;
		}
	if (dp)
		closedir(dp);
	return n;
}

/* Whether dir holds a file named *.gdb-index. */
static bool has_index(const char *dir)
{
	struct dirent *e;
	DIR *dp = opendir(dir);
	bool found = false;

	while (dp && !found && (e = readdir(dp)))
		found = strstr(e->d_name, ".gdb-index") != NULL;
	if (dp)
		closedir(dp);
	return found;
}

/*
 * Two drivers with index_cache share one directory of their own under
 * $TMPDIR (mode 0700), where gdb writes the DWARF index of the program it
 * loaded; a driver without it makes none; the directory goes with the
 * last driver that used it.
 */
TEST_F(gdb, index_cache_private_and_removed)
{
	const char *args[] = { NULL };
	struct mi_driver_opts o = { .program = PROG_SIMPLE, .args = args,
				    .cmd_timeout_ms = WAIT_MS, .index_cache = true };
	struct mi_driver *second = NULL, *plain = NULL;
	char tmp[] = "/tmp/crdbg-test-index.XXXXXX", dir[512] = "", *old;
	struct stat st;

	ASSERT_NE(NULL, mkdtemp(tmp));
	old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	setenv("TMPDIR", tmp, 1);

	ASSERT_EQ(0, start(&plain, PROG_SIMPLE, NULL));
	EXPECT_EQ(0, cache_dirs(tmp, dir, sizeof(dir)));
	ASSERT_EQ(0, mi_driver_start(&o, &self->d));
	ASSERT_EQ(0, mi_driver_start(&o, &second));
	ASSERT_EQ(1, cache_dirs(tmp, dir, sizeof(dir)));
	ASSERT_EQ(0, stat(dir, &st));
	EXPECT_EQ(0700, st.st_mode & 0777);
	/* gdb writes the index once it has read the program's DWARF */
	for (int i = 0; i < WAIT_MS / 50 && !has_index(dir); i++)
		usleep(50 * 1000);
	EXPECT_TRUE(has_index(dir));

	mi_driver_free(self->d);
	self->d = NULL;
	EXPECT_EQ(0, access(dir, F_OK));
	mi_driver_free(second);
	EXPECT_NE(0, access(dir, F_OK));
	EXPECT_EQ(0, cache_dirs(tmp, dir, sizeof(dir)));
	mi_driver_free(plain);

	if (old)
		setenv("TMPDIR", old, 1);
	else
		unsetenv("TMPDIR");
	free(old);
	rmdir(tmp);
}

TEST(start_failures)
{
	struct mi_driver_opts o = { .gdb = "/nonexistent/gdb" };
	struct mi_driver *d = NULL;

	EXPECT_EQ(-ENOENT, mi_driver_start(&o, &d));
	EXPECT_EQ(NULL, d);
	mi_driver_free(NULL);
}

TEST_HARNESS_MAIN
