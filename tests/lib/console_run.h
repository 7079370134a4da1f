/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Driving `crdbg debug` from a test: start it with its stdin on a pipe
 * (or /dev/null), read its output until a line appears, collect its exit
 * status; and the checks the end-to-end console tests share.
 */
#ifndef CRDBG_TEST_CONSOLE_RUN_H
#define CRDBG_TEST_CONSOLE_RUN_H

#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CRDBG
#define CRDBG "build/crdbg"
#endif
#ifndef DEBUG_PROG
#define DEBUG_PROG "build/tests/debug/prog_debug"
#endif
#ifndef CRDBG_RUNTIME
#define CRDBG_RUNTIME "build/usr/libcrdbg.so"
#endif
#ifndef MPI_PROG
#define MPI_PROG "build/tests/debug/mpi_debug"
#endif

#define OUT_MAX		(256 << 10)
#define WAIT_MS		90000	/* a bound, not an assertion: the host is busy */

struct run {
	pid_t pid;
	int in, out;		/* our ends: its stdin, its stdout+stderr */
	char *buf;
	size_t len;
};

static inline int run_start(struct run *r, const char *const *argv, bool with_stdin)
{
	int pin[2], pout[2];

	memset(r, 0, sizeof(*r));
	r->buf = calloc(1, OUT_MAX + 1);
	if (!r->buf || pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC))
		return -1;
	r->pid = fork();
	if (r->pid < 0)
		return -1;
	if (r->pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		setpgid(0, 0);	/* its own group, as a shell job would be */
		dup2(with_stdin ? pin[0] : null, 0);
		dup2(pout[1], 1);
		dup2(pout[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	r->in = pin[1];
	r->out = pout[0];
	if (!with_stdin) {
		close(r->in);
		r->in = -1;
	}
	return 0;
}

/* Read until needle appears (or EOF, or the bound); true if it did. */
static inline bool run_read_until(struct run *r, const char *needle)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!needle || !strstr(r->buf, needle)) {
		struct pollfd p = { .fd = r->out, .events = POLLIN };
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 > WAIT_MS)
			return false;
		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = read(r->out, r->buf + r->len, OUT_MAX - r->len);
		if (n <= 0)
			return needle ? strstr(r->buf, needle) != NULL : true;
		r->len += n;
		r->buf[r->len] = 0;
	}
	return true;
}

static inline int run_finish(struct run *r)
{
	int ws = 0;

	if (r->in >= 0)
		close(r->in);
	run_read_until(r, NULL);
	if (waitpid(r->pid, &ws, WNOHANG) == 0) {
		kill(r->pid, SIGTERM);
		waitpid(r->pid, &ws, 0);
	}
	close(r->out);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static inline void run_free(struct run *r)
{
	free(r->buf);
	r->buf = NULL;
}

/* Run crdbg with argv (after "crdbg debug"), stdin /dev/null. */
static inline int debug(struct run *r, const char *const *args)
{
	const char *argv[64] = { CRDBG, "debug" };
	int n = 2;

	for (int i = 0; args[i] && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (run_start(r, argv, false))
		return -1;
	return run_finish(r);
}

static inline int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Does a line of hay match the extended regular expression re? */
static inline bool has_line(const char *hay, const char *re)
{
	regex_t rx;
	bool ret;

	if (regcomp(&rx, re, REG_EXTENDED | REG_NEWLINE | REG_NOSUB))
		return false;
	ret = regexec(&rx, hay, 0, NULL, 0) == 0;
	regfree(&rx);
	return ret;
}

/* Write script to a temporary file; path gets its name. */
static inline int write_script(char *path, const char *script)
{
	int fd = mkstemp(path);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, script, strlen(script));
	close(fd);
	return n == (ssize_t)strlen(script) ? 0 : -1;
}

/* A process that exists and is not a zombie. */
static inline bool alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	bool ret = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		ret = p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	fclose(f);
	return ret;
}

static inline bool have_gdb(void)
{
	return system("gdb --version >/dev/null 2>&1") == 0;
}

static inline void mpi_env(void)
{
	setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
	setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
	setenv("OMPI_MPIR_DO_NOT_WARN", "1", 1);
}

static inline bool have_mpi(void)
{
	return !access(MPI_PROG, X_OK) &&
	       system("mpirun --version >/dev/null 2>&1") == 0;
}

#endif /* CRDBG_TEST_CONSOLE_RUN_H */
