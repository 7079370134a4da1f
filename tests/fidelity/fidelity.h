/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The protocol every program of the fidelity group follows
 * (tests/fidelity/test_fidelity.sh drives it):
 *
 *   prog_X DIR
 *
 * The program sets up its one kind of kernel state, creates DIR/ready and
 * waits (polling, in nanosleep) until DIR/go exists. It may have been
 * checkpointed and restored meanwhile. It then checks its state and
 * writes DIR/result: "pass" or "fail: <what differs>", and exits 0 or 1.
 * Its stdio is /dev/null: it writes no regular file the checkpoint holds
 * open, so the image of a checkpoint that continued can still be restored
 * after the original went on (CRIU refuses files whose size changed).
 */
#ifndef FIDELITY_H
#define FIDELITY_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *fid_dir;
static char fid_why[2048];

/* fid_fail(fmt, ...): note one difference; the result lists every one. */
static inline void __attribute__((format(printf, 1, 2))) fid_fail(const char *fmt, ...)
{
	size_t len = strlen(fid_why);
	va_list ap;

	if (len + 3 >= sizeof(fid_why))
		return;
	if (len)
		strcat(fid_why, "; ");
	va_start(ap, fmt);
	vsnprintf(fid_why + strlen(fid_why), sizeof(fid_why) - strlen(fid_why), fmt, ap);
	va_end(ap);
}

#define FID_CHECK(cond, ...) do { if (!(cond)) fid_fail(__VA_ARGS__); } while (0)

/* fid_die(fmt, ...): set-up failed; report it as the result and exit 2. */
#define fid_die(...) do { fid_fail(__VA_ARGS__); fid_finish(); } while (0)

static inline void fid_nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static inline char *fid_path(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/%s", fid_dir, name);
	return path;
}

static inline void fid_touch(const char *name)
{
	int fd = open(fid_path(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
}

/* pid's one-letter state ('R', 'S', 'T', 'Z', ...), '?' if unreadable. */
static inline char fid_proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return '?';
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* the state follows the command name, which may hold ')' itself */
	p = p ? strrchr(buf, ')') : NULL;
	return p && p[1] ? p[2] : '?';
}

/* Argument check and the directory every file of the protocol lives in. */
static inline void fid_init(int argc, char **argv)
{
	if (argc < 2 || argv[1][0] != '/') {
		fprintf(stderr, "usage: %s /ABSOLUTE/DIR\n", argv[0]);
		exit(2);
	}
	fid_dir = argv[1];
}

/* Set-up done: say so, then wait for the word to check. */
static inline void fid_ready_wait(void)
{
	fid_touch("ready");
	while (access(fid_path("go"), F_OK))
		fid_nap_ms(20);
}

/* Write DIR/result and exit with 0 (pass) or 1 (fail). */
static inline __attribute__((noreturn)) void fid_finish(void)
{
	FILE *f = fopen(fid_path("result.tmp"), "we");
	char tmp[4096];

	if (f) {
		if (fid_why[0])
			fprintf(f, "fail: %s\n", fid_why);
		else
			fprintf(f, "pass\n");
		fclose(f);
		snprintf(tmp, sizeof(tmp), "%s", fid_path("result.tmp"));
		rename(tmp, fid_path("result"));
	}
	exit(fid_why[0] ? 1 : 0);
}

#endif
