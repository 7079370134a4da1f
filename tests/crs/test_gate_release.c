// SPDX-License-Identifier: GPL-2.0
/*
 * The release of a restored tree by crdbg's CRIU plugin
 * (usr/crs/gate/criu-gate.c, gate_release()): this test loads the plugin
 * as criu does and stands in for criu at the end of a restore, the
 * tracer of a stopped child, calling the RESUME_DEVICES_LATE hook with
 * crdbg's orders written and "go" at the gate. It checks that the hook is
 * pushed as the UAPI's hook frame says (the child enters the trampoline
 * with the argument and a frame holding its interrupted registers), that
 * the pc is reported, that a SIGSTOP CRIU queued is ended without a
 * SIGCONT the program sees while a recorded SIGCONT is seen, that a
 * process ordered to stay stopped that CRIU did not stop (a launcher's
 * agent, running at the checkpoint) is in its group stop at the detach,
 * its SIGCONT handler never run, and that an end of file at the gate
 * (crdbg gone, or refusing) kills the process before it runs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criu/criu-plugin.h>
#include <linux/crdbg.h>

#include "gate-test.h"
#include "kselftest_harness.h"
#include "proc.h"
#include "store.h"

/* The child's stand-in trampoline: rsp at the hook frame, rdi the argument. */
void fake_hook(uint64_t arg, const struct crdbg_hook_frame *frame);
__asm__(".text\n"
	".globl fake_trampoline\n"
	"fake_trampoline:\n"
	"	mov %rsp, %rsi\n"
	"	and $-16, %rsp\n"
	"	call fake_hook\n"
	"	ud2\n");
void fake_trampoline(void);

static int report_fd = -1;	/* the child's end of its report pipe */

/* What the trampoline found, to the test: then the child is done. */
void fake_hook(uint64_t arg, const struct crdbg_hook_frame *frame)
{
	uint64_t w[3] = { arg, frame->magic, frame->regs.ip };

	if (write(report_fd, w, sizeof(w)) != sizeof(w))
		_exit(2);
	_exit(0);
}

static void on_sigcont(int sig)
{
	(void)sig;
	if (write(report_fd, "C", 1) != 1)
		_exit(3);
}

FIXTURE(release)
{
	char dir[64];
	int status_fd;
	pid_t child;
	int from_child;
	int (*hook)(int pid);
	void *so;
};


FIXTURE_SETUP(release)
{
	size_t len = (size_t)(crs_gate_plugin_end - crs_gate_plugin);
	cr_plugin_desc_t *d;
	char so[128], ready;
	int fd, p[2], st;

	ASSERT_EQ(0, pipe(p));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		close(p[0]);
		report_fd = p[1];
		signal(SIGCONT, on_sigcont);
		if (write(report_fd, "R", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	self->from_child = p[0];
	/* set up (not still in fork()): then traced */
	ASSERT_EQ(1, read(self->from_child, &ready, 1));
	fcntl(self->from_child, F_SETFL, O_NONBLOCK);
	/* stopped under our ptrace, as CRIU holds a restored thread */
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, self->child, 0, 0));
	ASSERT_EQ(0, ptrace(PTRACE_INTERRUPT, self->child, 0, 0));
	ASSERT_EQ(self->child, waitpid(self->child, &st, __WALL));
	ASSERT_TRUE(WIFSTOPPED(st));

	snprintf(self->dir, sizeof(self->dir), "/tmp/crdbg-release-test-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(so, sizeof(so), "%s/crdbg-gate.so", self->dir);
	fd = open(so, O_WRONLY | O_CREAT | O_EXCL, 0700);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, write(fd, crs_gate_plugin, len));
	close(fd);
	self->status_fd = fifo(self->dir, "status");
	ASSERT_LE(0, self->status_fd);
	setenv("CRDBG_GATE", self->dir, 1);
	self->so = dlopen(so, RTLD_NOW);
	ASSERT_NE(NULL, self->so);
	d = dlsym(self->so, "CR_PLUGIN_DESC");
	ASSERT_NE(NULL, d);
	self->hook = (int (*)(int))d->hooks[CR_PLUGIN_HOOK__RESUME_DEVICES_LATE];
	ASSERT_NE(NULL, self->hook);
}

FIXTURE_TEARDOWN(release)
{
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, __WALL);
	close(self->status_fd);
	close(self->from_child);
	crs_rmtree(AT_FDCWD, self->dir);
}

/* crdbg's side: the orders, then "go" waiting at the gate. */
static int give_orders(const char *dir, const char *orders)
{
	char path[128];
	int fd, gate;

	snprintf(path, sizeof(path), "%s/release", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, orders, strlen(orders)) != (ssize_t)strlen(orders))
		return -1;
	close(fd);
	gate = fifo(dir, "gate");
	if (gate < 0 || write(gate, "go\n", 3) != 3)
		return -1;
	return gate;	/* held open: "go" stays in the FIFO until read */
}

/* What the plugin said on the status FIFO so far. */
static void said(int fd, char *buf, size_t len)
{
	ssize_t n = read(fd, buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
}

static void read_report(const char *dir, char *buf, size_t len)
{
	char path[128];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/report", dir);
	fd = open(path, O_RDONLY);
	if (fd >= 0)
		n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/* Read n bytes the child sends within 5 s: 0, or -1. */
static int from_child(int fd, void *buf, size_t n)
{
	size_t have = 0;

	for (int i = 0; i < 250 && have < n; i++) {
		ssize_t r = read(fd, (char *)buf + have, n - have);

		if (r > 0)
			have += (size_t)r;
		else
			usleep(20 * 1000);
	}
	return have == n ? 0 : -1;
}

TEST_F(release, hook_pushed_as_the_frame_says_and_reported)
{
	char orders[128], status[64], report[256];
	unsigned long long pc = 0;
	uint64_t got[3];
	int gate, st, pid, tid;

	snprintf(orders, sizeof(orders), "hook %d %llx 1234abcd\n", self->child,
		 (unsigned long long)(uintptr_t)fake_trampoline);
	gate = give_orders(self->dir, orders);
	ASSERT_LE(0, gate);
	self->hook(self->child);
	said(self->status_fd, status, sizeof(status));
	EXPECT_STREQ("held\nreleased\n", status);
	read_report(self->dir, report, sizeof(report));
	ASSERT_EQ(3, sscanf(report, "pc %d %d %llx", &pid, &tid, &pc));
	EXPECT_EQ(self->child, pid);
	EXPECT_EQ(self->child, tid);

	/* CRIU's detach: the child runs, into the trampoline first */
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, self->child, 0, 0));
	ASSERT_EQ(0, from_child(self->from_child, got, sizeof(got)));
	EXPECT_EQ(0x1234abcdULL, got[0]);
	EXPECT_EQ((uint64_t)CRDBG_HOOK_MAGIC, got[1]);
	/* interrupted in pause(): the frame's ip goes back on the syscall */
	EXPECT_TRUE(got[2] == pc || got[2] == pc - 2);
	ASSERT_EQ(self->child, waitpid(self->child, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(gate);
}

TEST_F(release, gate_closed_kills_before_it_runs)
{
	char status[64] = "", path[128];
	pid_t other = idle_child();
	int st;

	ASSERT_LT(0, other);

	/* a gate with no writer: crdbg gone */
	snprintf(path, sizeof(path), "%s/gate", self->dir);
	ASSERT_EQ(0, mkfifo(path, 0600));
	self->hook(self->child);
	said(self->status_fd, status, sizeof(status));
	EXPECT_STREQ("held\n", status);
	ASSERT_EQ(self->child, waitpid(self->child, &st, __WALL));
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	self->hook(other);	/* another process of the tree: killed too */
	ASSERT_EQ(other, waitpid(other, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	said(self->status_fd, status, sizeof(status));
	EXPECT_STREQ("", status);	/* nothing released */
	self->child = fork();	/* for the teardown: a child of its own */
	if (self->child == 0)
		_exit(0);
}

TEST_F(release, criu_stop_ended_without_a_sigcont_seen)
{
	char c, orders[64];
	int gate;

	/* CRIU's finalize_restore() for a process it dumped stopped */
	ASSERT_EQ(0, kill(self->child, SIGSTOP));
	snprintf(orders, sizeof(orders), "cont %d\n", self->child);
	gate = give_orders(self->dir, orders);
	ASSERT_LE(0, gate);
	self->hook(self->child);
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, self->child, 0, 0));
	usleep(200 * 1000);
	EXPECT_NE('T', crs_task_state(self->child, self->child));
	EXPECT_NE(0, crs_task_state(self->child, self->child));
	EXPECT_EQ(-1, read(self->from_child, &c, 1));	/* its handler did not run */
	close(gate);
}

TEST_F(release, recorded_sigcont_is_seen)
{
	char c = 0, orders[64];
	int gate;

	snprintf(orders, sizeof(orders), "sigcont %d 0\n", self->child);
	gate = give_orders(self->dir, orders);
	ASSERT_LE(0, gate);
	self->hook(self->child);
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, self->child, 0, 0));
	ASSERT_EQ(0, from_child(self->from_child, &c, 1));
	EXPECT_EQ('C', c);
	close(gate);
}

TEST_F(release, stays_stopped_though_criu_did_not_stop_it)
{
	char c, orders[64];
	int gate;

	/* no SIGSTOP queued: it ran when it was dumped */
	snprintf(orders, sizeof(orders), "stopped %d\n", self->child);
	gate = give_orders(self->dir, orders);
	ASSERT_LE(0, gate);
	self->hook(self->child);
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, self->child, 0, 0));
	for (int i = 0; i < 100 && crs_task_state(self->child, self->child) != 'T'; i++)
		usleep(10 * 1000);
	EXPECT_EQ('T', crs_task_state(self->child, self->child));
	usleep(100 * 1000);
	EXPECT_EQ('T', crs_task_state(self->child, self->child));
	EXPECT_EQ(-1, read(self->from_child, &c, 1));	/* nothing of its own ran */
	close(gate);
}

/*
 * CRIU detaches the root first; preloaded, the plugin's ptrace() lets
 * every listed process go at CRIU's first detach, the last listed (a
 * child) first and one that stays stopped only once in its stop, and
 * CRIU's own detach of them is then a no-op.
 */
TEST_F(release, first_detach_lets_children_go_first)
{
	long (*criu_ptrace)(int, pid_t, void *, void *);
	char orders[96], state;
	pid_t kid = idle_child();
	int gate, st;

	ASSERT_LT(0, kid);
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, kid, 0, 0));
	ASSERT_EQ(0, ptrace(PTRACE_INTERRUPT, kid, 0, 0));
	ASSERT_EQ(kid, waitpid(kid, &st, __WALL));
	ASSERT_EQ(0, kill(kid, SIGSTOP));	/* CRIU's, for a process dumped stopped */
	setenv("CRDBG_GATE_DETACH", "1", 1);
	*(void **)&criu_ptrace = dlsym(self->so, "ptrace");
	ASSERT_NE(NULL, criu_ptrace);
	snprintf(orders, sizeof(orders), "cont %d\nstopped %d\n", self->child, kid);
	gate = give_orders(self->dir, orders);
	ASSERT_LE(0, gate);
	self->hook(self->child);
	self->hook(kid);

	/* CRIU's detach of the root: the child goes first, into its stop */
	ASSERT_EQ(0, criu_ptrace(PTRACE_DETACH, self->child, NULL, NULL));
	EXPECT_EQ(0, tracer(self->child));
	EXPECT_EQ(0, tracer(kid));
	state = crs_task_state(kid, kid);
	EXPECT_EQ('T', state);
	/* CRIU's detach of the child: already done, no error */
	EXPECT_EQ(0, criu_ptrace(PTRACE_DETACH, kid, NULL, NULL));
	usleep(100 * 1000);
	EXPECT_NE('T', crs_task_state(self->child, self->child));
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	close(gate);
}

TEST_HARNESS_MAIN
