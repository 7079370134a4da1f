// SPDX-License-Identifier: GPL-2.0
/*
 * The options of a criu started ahead, as CRIU configuration lines
 * (usr/crs/criu-config.c): what is carried and how, what is refused,
 * random values that either come back whole or are refused, and the
 * host's criu reading them from a pipe named by $CRIU_CONFIG_FILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "criu-config.h"

static const int dups[3] = { 10, 11, 12 };

static int text_of(char *const *opts, size_t nr, char *const *inherit, size_t ni, char **text)
{
	size_t len;

	return crs_criu_config_text(opts, nr, inherit, ni, dups, text, &len);
}

TEST(options_and_inherited_stdio)
{
	char *opts[] = { "--shell-job", "--network-lock", "iptables", "--ghost-limit=1048576",
			 "--ext-unix-sk=123", "--tcp-established" };
	char *inherit[] = { "--inherit-fd", "fd[1]:pipe:[42]", "--inherit-fd", "fd[0]:tty[88:3]" };
	char *text;

	ASSERT_EQ(0, text_of(opts, 6, inherit, 4, &text));
	EXPECT_STREQ("shell-job\nnetwork-lock iptables\nghost-limit=1048576\next-unix-sk=123\n"
		     "tcp-established\ninherit-fd fd[11]:pipe:[42]\ninherit-fd fd[10]:tty[88:3]\n",
		     text);
	free(text);
	ASSERT_EQ(0, text_of(NULL, 0, NULL, 0, &text));
	EXPECT_STREQ("", text ? text : "(null)");
	free(text);
}

TEST(what_the_syntax_cannot_carry_is_refused)
{
	const char *bad[] = { "--external=a b", "--external=a#b", "--external=\"x\"",
			      "--external=a\\b", "--external=a\nb", "--external=a\tb", "external",
			      "--" };
	char *text = (char *)"untouched";

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *opts[] = { (char *)bad[i] };

		EXPECT_EQ(-EINVAL, text_of(opts, 1, NULL, 0, &text)) TH_LOG("%s", bad[i]);
		EXPECT_EQ(NULL, text);
	}
	/* a value given apart */
	char *apart[] = { "--network-lock", "ip tables" };

	EXPECT_EQ(-EINVAL, text_of(apart, 2, NULL, 0, &text));
}

TEST(an_fd_criu_lacks_is_refused)
{
	char *above[] = { "--inherit-fd", "fd[3]:pipe:[42]" };
	char *nokey[] = { "--inherit-fd", "fd[1]" };
	char *closed[] = { "--inherit-fd", "fd[2]:pipe:[42]" };
	const int no_stderr[3] = { 10, 11, -1 };
	char *text;
	size_t len;

	EXPECT_EQ(-EINVAL, text_of(NULL, 0, above, 2, &text));
	EXPECT_EQ(-EINVAL, text_of(NULL, 0, nokey, 2, &text));
	EXPECT_EQ(-EINVAL, crs_criu_config_text(NULL, 0, closed, 2, no_stderr, &text, &len));
}

/* Each line as criu/config.c reads it: "--name" and, after one blank, the value. */
static bool reads_back(const char *text, const char *name, const char *value)
{
	char want[512];

	snprintf(want, sizeof(want), "%s%s%s\n", name, value ? " " : "", value ? value : "");
	return !strcmp(text, want) && !strchr(value ? value : "", ' ') &&
	       !strpbrk(text, "#\"\\\t");
}

TEST(random_values_come_back_whole_or_are_refused)
{
	unsigned int seed = 16;
	int carried = 0, refused = 0;

	for (int round = 0; round < 20000; round++) {
		char value[24], *opts[2] = { "--external", value }, *text;
		size_t n = 1 + (size_t)(rand_r(&seed) % (sizeof(value) - 1));
		int r;

		for (size_t i = 0; i < n; i++)
			value[i] = (char)(1 + rand_r(&seed) % 127);
		value[n] = '\0';
		if (value[0] == '-')
			value[0] = 'x';	/* a value apart never starts with '-' */
		r = text_of(opts, 2, NULL, 0, &text);
		if (r) {
			ASSERT_EQ(-EINVAL, r);
			refused++;
			continue;
		}
		ASSERT_TRUE(reads_back(text, "external", value)) TH_LOG("%s", value);
		free(text);
		carried++;
	}
	EXPECT_GT(carried, 0);
	EXPECT_GT(refused, 0);
}

/*
 * The host's criu reads the lines from a pipe before anything else: a
 * bad value given there is the error it stops on.
 */
TEST(criu_reads_them_from_a_pipe)
{
	char *opts[] = { "--network-lock", "nosuchlock" }, *text, out[4096] = "", env[64];
	int p[2], o[2], st;
	ssize_t n;
	size_t len, got = 0;
	pid_t pid;

	if (access("/usr/sbin/criu", X_OK))
		SKIP(return, "no /usr/sbin/criu on this host");
	ASSERT_EQ(0, crs_criu_config_text(opts, 2, NULL, 0, dups, &text, &len));
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(o));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		snprintf(env, sizeof(env), "CRIU_CONFIG_FILE=/proc/self/fd/%d", p[0]);
		putenv(env);
		close(p[1]);
		dup2(o[1], 1);
		dup2(o[1], 2);
		execl("/usr/sbin/criu", "criu", "restore", "-D", "/nonexistent", "-o",
		      "/dev/null", NULL);
		_exit(127);
	}
	close(p[0]);
	close(o[1]);
	usleep(100 * 1000);	/* criu waits on the pipe meanwhile */
	ASSERT_EQ((ssize_t)len, write(p[1], text, len));
	close(p[1]);
	while ((n = read(o[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += (size_t)n;
	close(o[0]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) != 0);
	EXPECT_NE(NULL, strstr(out, "Invalid value for --network-lock: nosuchlock")) TH_LOG("%s", out);
	free(text);
}

TEST_HARNESS_MAIN
