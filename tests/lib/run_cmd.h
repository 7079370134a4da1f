/* SPDX-License-Identifier: GPL-2.0 */
/*
 * run_cmd(): run a command line through /bin/sh, capture stdout and stderr
 * separately, return the exit status. For tests that drive the crdbg CLI.
 */
#ifndef CRDBG_TEST_RUN_CMD_H
#define CRDBG_TEST_RUN_CMD_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct cmd_output {
	int status;		/* exit code, or 128 + signal */
	char out[16384];
	char err[16384];
};

static inline void slurp_fd(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += r;
	buf[n] = '\0';
}

static inline int run_cmd(struct cmd_output *o, const char *cmdline)
{
	char out_tmpl[] = "/tmp/crdbg-test-out.XXXXXX";
	char err_tmpl[] = "/tmp/crdbg-test-err.XXXXXX";
	int out = mkstemp(out_tmpl), err = mkstemp(err_tmpl);
	pid_t pid;
	int ws;

	if (out < 0 || err < 0)
		return -1;
	unlink(out_tmpl);
	unlink(err_tmpl);
	pid = fork();
	if (pid == 0) {
		dup2(out, 1);
		dup2(err, 2);
		execl("/bin/sh", "sh", "-c", cmdline, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &ws, 0);
	o->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	lseek(out, 0, SEEK_SET);
	lseek(err, 0, SEEK_SET);
	slurp_fd(out, o->out, sizeof(o->out));
	slurp_fd(err, o->err, sizeof(o->err));
	close(out);
	close(err);
	return o->status;
}

static inline int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#endif /* CRDBG_TEST_RUN_CMD_H */
