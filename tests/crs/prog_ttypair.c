// SPDX-License-Identifier: GPL-2.0
/*
 * One half of a pair of programs that talk through two FIFOs (no socket),
 * each meant to run on a terminal of its own (tests/crs/test_terminal.sh):
 *
 *   prog_ttypair ping OUT IN STEPS NAP_MS     writes "ping I" to OUT, reads "pong I"
 *   prog_ttypair pong OUT IN STEPS NAP_MS     reads "ping I" from IN, writes "pong I"
 *
 * Each becomes the leader of a process group of its own and forks the
 * worker that talks (so a restart has a ppid to keep) and waits for it.
 * The worker prints "<role> got <word> I" for every word it reads and
 * "<role> done" at the end, on its stdout (the terminal). With $CKPT_GO
 * set, the ping side waits after step 5, before it writes again, until
 * that file exists: both FIFOs are empty then, the pong side waits in
 * read(), and the tests checkpoint the pair there.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

/* One "word I\n" line from fd, byte by byte (nothing read ahead). */
static int read_word(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		if (read(fd, buf + n, 1) != 1)
			return -1;
		if (buf[n] == '\n') {
			buf[n] = 0;
			return 0;
		}
		n++;
	}
	return -1;
}

static int talk(int ping, const char *out_path, const char *in_path, int steps, int nap_ms)
{
	const char *go = getenv("CKPT_GO"), *role = ping ? "ping" : "pong";
	char line[64];
	int in, out, i;

	/* ping opens its writer first, pong its reader first: no deadlock */
	if (ping) {
		out = open(out_path, O_WRONLY);
		in = open(in_path, O_RDONLY);
	} else {
		in = open(in_path, O_RDONLY);
		out = open(out_path, O_WRONLY);
	}
	if (in < 0 || out < 0)
		return 1;
	for (i = 0; i < steps; i++) {
		if (ping) {
			if (i == 6 && go)
				while (access(go, F_OK))
					nap(nap_ms);
			dprintf(out, "ping %d\n", i);
			if (read_word(in, line, sizeof(line)))
				return 1;
		} else {
			if (read_word(in, line, sizeof(line)))
				return 1;
			dprintf(out, "pong %d\n", i);
		}
		printf("%s got %s\n", role, line);
		nap(nap_ms);
	}
	printf("%s done\n", role);
	return 0;
}

int main(int argc, char **argv)
{
	int st = 0, ping;
	pid_t worker;

	if (argc != 6 || (strcmp(argv[1], "ping") && strcmp(argv[1], "pong"))) {
		fprintf(stderr, "usage: prog_ttypair ping|pong OUT_FIFO IN_FIFO STEPS NAP_MS\n");
		return 2;
	}
	ping = !strcmp(argv[1], "ping");
	setvbuf(stdout, NULL, _IONBF, 0);
	setpgid(0, 0);	/* a no-op for a session leader, which leads its group */
	worker = fork();
	if (worker == 0)
		return talk(ping, argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	printf("%s worker %d\n", argv[1], (int)worker);
	while (waitpid(worker, &st, 0) < 0)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
