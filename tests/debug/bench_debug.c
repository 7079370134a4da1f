// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark of `crdbg debug` (a Markdown section for performance.md):
 *  - time from starting `crdbg debug -n N prog` until the console reports
 *    every rank stopped at main, next to starting N separate
 *    `gdb -batch -ex "break main" -ex run prog` the plain way (all at once,
 *    until the last one has stopped at main and exited);
 *  - the round trip of `print` (command written to the console until its
 *    merged reply line is read), median of a few, against N.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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

#define BUF_MAX		(1 << 20)
#define BOUND_MS	600000
#define PRINTS		7

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct con {
	pid_t pid;
	int in, out;
	char *buf;
	size_t len, seen;
};

static int con_start(struct con *c, unsigned int n)
{
	char nb[16];
	int pin[2], pout[2];

	snprintf(nb, sizeof(nb), "%u", n);
	memset(c, 0, sizeof(*c));
	c->buf = malloc(BUF_MAX + 1);
	if (!c->buf || pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC))
		return -1;
	c->pid = fork();
	if (c->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		execl(CRDBG, "crdbg", "debug", "-n", nb, DEBUG_PROG, (char *)NULL);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	c->in = pin[1];
	c->out = pout[0];
	c->buf[0] = 0;
	return c->pid > 0 ? 0 : -1;
}

/* Wait for needle in the output after what was already seen. */
static int con_wait(struct con *c, const char *needle)
{
	double t0 = now();
	char *hit;

	while (!(hit = strstr(c->buf + c->seen, needle))) {
		struct pollfd p = { .fd = c->out, .events = POLLIN };
		ssize_t r;

		if ((now() - t0) * 1000 > BOUND_MS)
			return -ETIMEDOUT;
		if (poll(&p, 1, 1000) <= 0)
			continue;
		if (c->len == BUF_MAX)
			return -ENOSPC;
		r = read(c->out, c->buf + c->len, BUF_MAX - c->len);
		if (r <= 0)
			return -EPIPE;
		c->len += r;
		c->buf[c->len] = 0;
	}
	c->seen = hit - c->buf + strlen(needle);
	return 0;
}

static void con_end(struct con *c)
{
	if (write(c->in, "quit\n", 5) < 0)
		kill(c->pid, SIGTERM);
	close(c->in);
	waitpid(c->pid, NULL, 0);
	close(c->out);
	free(c->buf);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* N plain gdbs, each to main and out; seconds until the last is done. */
static double plain_gdbs(unsigned int n)
{
	double t0 = now();
	pid_t *pids = calloc(n, sizeof(*pids));

	for (unsigned int i = 0; pids && i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			int null = open("/dev/null", O_RDWR);

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			execlp("gdb", "gdb", "-nx", "-q", "-batch", "-ex",
			       "set debuginfod enabled off", "-ex", "break main",
			       "-ex", "run", DEBUG_PROG, (char *)NULL);
			_exit(127);
		}
	}
	for (unsigned int i = 0; pids && i < n; i++)
		if (pids[i] > 0)
			waitpid(pids[i], NULL, 0);
	free(pids);
	return now() - t0;
}

int main(void)
{
	static const unsigned int sizes[] = { 1, 8, 32, 64 };
	char needle[64];

	if (access(CRDBG, X_OK) || access(DEBUG_PROG, X_OK)) {
		printf("_bench_debug: %s or %s not built_\n", CRDBG, DEBUG_PROG);
		return 0;
	}
	printf("## crdbg debug: start-up and print round trip\n\n");
	printf("Start-up: from `crdbg debug -n N` to the console line that every "
	       "rank is stopped at main (SDM tree up, N gdbs loaded, run to main), "
	       "next to N plain `gdb -batch -ex 'break main' -ex run` started at "
	       "once (until the last has stopped at main and exited). Print: one "
	       "`print` to all N ranks until its merged reply, median of %d.\n\n",
	       PRINTS);
	printf("| N | crdbg debug to main (s) | N plain gdb -batch (s) | print round trip (ms) |\n");
	printf("|---|---|---|---|\n");
	fflush(stdout);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		unsigned int n = sizes[k];
		double rtt[PRINTS], t0, start, plain;
		struct con c;
		int rc;

		t0 = now();
		if (con_start(&c, n) < 0) {
			printf("| %u | failed to start | | |\n", n);
			continue;
		}
		snprintf(needle, sizeof(needle), "[0%s%.0u]: stopped: breakpoint 1, main",
			 n > 1 ? "-" : "", n > 1 ? n - 1 : 0);
		rc = con_wait(&c, needle);
		start = now() - t0;
		for (int i = 0; rc == 0 && i < PRINTS; i++) {
			t0 = now();
			if (write(c.in, "print 6 * 7\n", 12) != 12) {
				rc = -EIO;
				break;
			}
			rc = con_wait(&c, "]: 6 * 7 = 42\n");
			rtt[i] = (now() - t0) * 1000;
		}
		con_end(&c);
		plain = plain_gdbs(n);
		if (rc) {
			printf("| %u | failed (%s) | %.2f | |\n", n, strerror(-rc), plain);
			continue;
		}
		qsort(rtt, PRINTS, sizeof(rtt[0]), cmp_double);
		printf("| %u | %.2f | %.2f | %.1f |\n", n, start, plain, rtt[PRINTS / 2]);
		fflush(stdout);
	}
	printf("\nGoal: none set; the N plain gdbs started at once are the reference.\n\n");
	printf("Measured on the host (%ld CPUs).\n", sysconf(_SC_NPROCESSORS_ONLN));
	return 0;
}
