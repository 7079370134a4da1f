// SPDX-License-Identifier: GPL-2.0
/*
 * The part program, crdbg-part (usr/part/), as a coordinator runs it:
 * found beside this program's build directory by job_part_program(), its
 * stdout only the part protocol's messages, a command line it was not
 * made for refused as a failed step (EINVAL, exit 2), and verify and rm,
 * which need no CRIU, doing their work on a real store.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include <crdbg/job-part.h>

/* Run crdbg-part ARGS...; every stdout line into out; its exit status. */
static int run_part(char *out, size_t outlen, const char *const args[])
{
	char prog[PATH_MAX];
	const char *argv[16] = { prog };
	int pipefd[2], st;
	size_t n = 0, a;
	ssize_t r;
	pid_t pid;

	if (job_part_program(prog, sizeof(prog)) || pipe(pipefd))
		return -1;
	for (a = 0; args[a] && a < 14; a++)
		argv[a + 1] = args[a];
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		execv(prog, (char **)argv);
		_exit(127);
	}
	close(pipefd[1]);
	while (n + 1 < outlen && (r = read(pipefd[0], out + n, outlen - n - 1)) > 0)
		n += (size_t)r;
	out[n] = 0;
	close(pipefd[0]);
	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Every line of out is the protocol's; the last one parsed into m. */
static bool all_protocol(char *out, struct job_part_msg *m)
{
	char *save = NULL;
	bool any = false;

	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (job_part_msg_parse(l, strlen(l), m))
			return false;
		any = true;
	}
	return any;
}

TEST(found_beside_the_build)
{
	char prog[PATH_MAX];

	ASSERT_EQ(0, job_part_program(prog, sizeof(prog)));
	EXPECT_NE(NULL, strstr(prog, "/sdm/" JOB_PART_PROGRAM));
	EXPECT_EQ(0, access(prog, X_OK));
}

/* Whatever a caller sends it, it answers a failed step with a reason. */
TEST(refuses_what_it_was_not_made_for)
{
	static const char *const bad[][4] = {
		{ NULL },
		{ "list", NULL },
		{ "checkpoint", "1", NULL },			/* no --part K/N, --cid */
		{ "checkpoint", "x", "--part", "0/1" },
		{ "restart", "H", "--criu-opt=--action-script=/tmp/x", NULL },
		{ "rm", NULL },
		{ "verify", "H", "--expect-meta", NULL },
		{ "restart", "H", "--node-roots", "1,,2" },
		{ "restart", "H", "--terminal-fd", "1" },
		{ "tasks", NULL },
	};
	struct job_part_msg m;
	char out[4096];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(2, run_part(out, sizeof(out), bad[i])) TH_LOG("case %zu", i);
		ASSERT_TRUE(all_protocol(out, &m)) TH_LOG("case %zu: %s", i, out);
		EXPECT_EQ(JOB_STEP_FAILED, m.step) TH_LOG("case %zu", i);
		EXPECT_EQ(EINVAL, m.failed.err) TH_LOG("case %zu", i);
		EXPECT_EQ(0, strncmp(m.failed.why, "crdbg-part: ", 12)) TH_LOG("%s", m.failed.why);
	}
}

/* verify of a part that is not there fails with the store's reason; rm of it is done. */
TEST(verify_and_rm_on_a_store)
{
	char store[64], out[4096], cmd[128];
	struct job_part_msg m;

	snprintf(store, sizeof(store), "/tmp/crdbg-partprog-%d", (int)getpid());
	ASSERT_EQ(0, mkdir(store, 0700));
	EXPECT_EQ(1, run_part(out, sizeof(out),
			      (const char *const[]){ "verify", "20261125T000000-1", "--store",
						     store, NULL }));
	ASSERT_TRUE(all_protocol(out, &m)) TH_LOG("%s", out);
	EXPECT_EQ(JOB_STEP_FAILED, m.step);
	EXPECT_NE(NULL, strstr(m.failed.why, "20261125T000000-1")) TH_LOG("%s", m.failed.why);
	EXPECT_EQ(0, run_part(out, sizeof(out),
			      (const char *const[]){ "rm", "20261125T000000-1", "--store", store,
						     NULL }));
	EXPECT_EQ(1, run_part(out, sizeof(out),
			      (const char *const[]){ "rm", "../etc", "--store", store, NULL }));
	ASSERT_TRUE(all_protocol(out, &m)) TH_LOG("%s", out);
	EXPECT_EQ(JOB_STEP_FAILED, m.step);
	EXPECT_NE(NULL, strstr(m.failed.why, "invalid checkpoint handle")) TH_LOG("%s", m.failed.why);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", store);
	EXPECT_EQ(0, system(cmd));
}

TEST_HARNESS_MAIN
