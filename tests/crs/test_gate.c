// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg's dump gate (usr/crs/gate/criu-gate.c) as criu.c runs it:
 * preloaded into criu, it holds CRIU's first PTRACE_SEIZE of the tree's
 * root until crdbg writes "go" (the tree untouched meanwhile), fails
 * that seize when crdbg goes away, lets any other seize through, and
 * keeps itself out of criu's children. Loaded only as a plugin (the
 * preload did not take), it holds CRIU at init(DUMP) instead.
 * tests/crs/prog_seize stands in for criu.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gate-test.h"
#include "kselftest_harness.h"
#include "store.h"

#ifndef PROG_SEIZE
#define PROG_SEIZE "build/tests/crs/prog_seize"
#endif

FIXTURE(gate)
{
	char dir[64];
	char so[128];
	int gate_fd, status_fd;
	pid_t root, other;	/* two idle processes to seize */
	pid_t helper;
	int out, in;		/* the helper's stdout, stdin */
};



FIXTURE_SETUP(gate)
{
	size_t len = (size_t)(crs_gate_plugin_end - crs_gate_plugin);
	int fd;

	/* first: they must not hold the FIFOs open */
	self->root = idle_child();
	self->other = idle_child();
	snprintf(self->dir, sizeof(self->dir), "/tmp/crdbg-gate-test-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->so, sizeof(self->so), "%s/crdbg-gate.so", self->dir);
	fd = open(self->so, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, write(fd, crs_gate_plugin, len));
	close(fd);
	self->gate_fd = fifo(self->dir, "gate");
	self->status_fd = fifo(self->dir, "status");
	ASSERT_LE(0, self->gate_fd);
	ASSERT_LE(0, self->status_fd);
	self->helper = 0;
}

FIXTURE_TEARDOWN(gate)
{
	if (self->helper > 0) {
		kill(self->helper, SIGKILL);
		waitpid(self->helper, NULL, 0);
	}
	kill(self->root, SIGKILL);
	kill(self->other, SIGKILL);
	waitpid(self->root, NULL, 0);
	waitpid(self->other, NULL, 0);
	if (self->gate_fd >= 0)
		close(self->gate_fd);
	close(self->status_fd);
	crs_rmtree(AT_FDCWD, self->dir);
}

/* Start the stand-in criu: preloaded (or dlopen()ing the plugin), seizing pids. */
static pid_t start_helper(struct _test_data_gate *self, bool preload, pid_t first, pid_t second)
{
	int out[2], in[2];
	pid_t pid;

	if (pipe(out) || pipe(in))
		return -1;
	pid = fork();
	if (pid == 0) {
		char a[16], b[16], env[32];

		dup2(in[0], 0);
		dup2(out[1], 1);
		snprintf(a, sizeof(a), "%d", first);
		snprintf(b, sizeof(b), "%d", second);
		snprintf(env, sizeof(env), "%d", self->root);
		setenv("CRDBG_GATE", self->dir, 1);
		setenv("CRDBG_GATE_SEIZE", env, 1);
		setenv(preload ? "LD_PRELOAD" : "GATE_DLOPEN", self->so, 1);
		execl(PROG_SEIZE, PROG_SEIZE, a, second ? b : NULL, NULL);
		_exit(127);
	}
	close(out[1]);
	close(in[0]);
	self->out = out[0];
	self->in = in[1];
	self->helper = pid;
	return pid;
}

/* Read from fd until text arrives (1), or ms pass (0). */
static int wait_text(int fd, char *buf, size_t len, const char *text, int ms)
{
	size_t have = strlen(buf);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	for (int waited = 0; waited < ms; waited += 20) {
		if (strstr(buf, text))
			return 1;
		if (poll(&p, 1, 20) <= 0)
			continue;
		n = read(fd, buf + have, len - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
	}
	return strstr(buf, text) != NULL;
}


TEST_F(gate, preloaded_holds_the_root_seize_until_go)
{
	char out[512] = "", status[64] = "";

	ASSERT_LT(0, start_helper(self, true, self->root, 0));
	ASSERT_EQ(1, wait_text(self->status_fd, status, sizeof(status), "ready\n", 10000));
	/* init(DUMP) let CRIU on; the wait is at the seize, the root untouched */
	ASSERT_EQ(1, wait_text(self->out, out, sizeof(out), "init 0\n", 5000));
	EXPECT_NE(NULL, strstr(out, "preload dropped\n"));
	usleep(100 * 1000);
	wait_text(self->out, out, sizeof(out), "seize", 50);
	EXPECT_EQ(NULL, strstr(out, "seize"));
	EXPECT_EQ(0, tracer(self->root));
	ASSERT_EQ(3, write(self->gate_fd, "go\n", 3));
	ASSERT_EQ(1, wait_text(self->out, out, sizeof(out), " ok\n", 5000));
	EXPECT_EQ(self->helper, tracer(self->root));
}

TEST_F(gate, crdbg_gone_fails_the_seize)
{
	char out[512] = "", status[64] = "", want[64];

	ASSERT_LT(0, start_helper(self, true, self->root, 0));
	ASSERT_EQ(1, wait_text(self->status_fd, status, sizeof(status), "ready\n", 10000));
	close(self->gate_fd);	/* end of file at the gate */
	self->gate_fd = -1;
	snprintf(want, sizeof(want), "seize %d %s\n", self->root, strerror(ECANCELED));
	ASSERT_EQ(1, wait_text(self->out, out, sizeof(out), want, 5000));
	EXPECT_EQ(0, tracer(self->root));
}

TEST_F(gate, another_seize_passes)
{
	char out[512] = "", status[64] = "", want[64];

	ASSERT_LT(0, start_helper(self, true, self->other, self->root));
	snprintf(want, sizeof(want), "seize %d ok\n", self->other);
	ASSERT_EQ(1, wait_text(self->out, out, sizeof(out), want, 10000));
	ASSERT_EQ(1, wait_text(self->status_fd, status, sizeof(status), "ready\n", 5000));
	EXPECT_EQ(0, tracer(self->root));
	ASSERT_EQ(3, write(self->gate_fd, "go\n", 3));
	snprintf(want, sizeof(want), "seize %d ok\n", self->root);
	ASSERT_EQ(1, wait_text(self->out, out, sizeof(out), want, 5000));
}

TEST_F(gate, plugin_alone_holds_at_init)
{
	char out[512] = "", status[64] = "", want[64];

	ASSERT_LT(0, start_helper(self, false, self->root, 0));
	ASSERT_EQ(1, wait_text(self->status_fd, status, sizeof(status), "ready\n", 10000));
	usleep(100 * 1000);
	wait_text(self->out, out, sizeof(out), "init", 50);
	EXPECT_EQ(NULL, strstr(out, "init"));
	ASSERT_EQ(3, write(self->gate_fd, "go\n", 3));
	ASSERT_EQ(1, wait_text(self->out, out, sizeof(out), "init 0\n", 5000));
	/* not interposed: the seize goes straight to the kernel */
	snprintf(want, sizeof(want), "seize %d ok\n", self->root);
	ASSERT_EQ(1, wait_text(self->out, out, sizeof(out), want, 5000));
}

TEST_HARNESS_MAIN
