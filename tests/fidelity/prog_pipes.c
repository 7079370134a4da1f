// SPDX-License-Identifier: GPL-2.0
/*
 * Pipes and FIFOs: a pipe with 40 KiB queued in a 128 KiB buffer
 * (F_SETPIPE_SZ), a non-blocking empty pipe, a pipe to a child that the
 * child reads after the word, and a FIFO in DIR with data queued, open
 * at both ends. After the word every byte is there in order, sizes and
 * flags as set.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "fidelity.h"

#define BIG (40 * 1024)

static char pattern(int i)
{
	return (char)(i * 7 + i / 251);
}

static bool read_all(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, buf + got, len - got);
		if (n <= 0)
			return false;
		got += n;
	}
	return true;
}

int main(int argc, char **argv)
{
	static char big[BIG], back[BIG];
	int p[2], e[2], c[2], fr, fw, i, st;
	char small[32] = "";
	pid_t kid;

	fid_init(argc, argv);
	if (pipe(p) || pipe2(e, O_NONBLOCK) || pipe(c))
		fid_die("pipe: %s", strerror(errno));
	if (fcntl(p[0], F_SETPIPE_SZ, 128 * 1024) < 0)
		fid_die("F_SETPIPE_SZ: %s", strerror(errno));
	for (i = 0; i < BIG; i++)
		big[i] = pattern(i);
	if (write(p[1], big, BIG) != BIG)
		fid_die("write: %s", strerror(errno));
	kid = fork();
	if (kid == 0) {
		close(c[1]);
		while (access(fid_path("go"), F_OK))
			fid_nap_ms(20);
		_exit(read(c[0], small, sizeof(small)) == 12 && !memcmp(small, "to the child", 12) ? 0 : 1);
	}
	close(c[0]);
	if (write(c[1], "to the child", 12) != 12)
		fid_die("write");
	if (mkfifo(fid_path("fifo"), 0600))
		fid_die("mkfifo: %s", strerror(errno));
	fr = open(fid_path("fifo"), O_RDONLY | O_NONBLOCK);
	fw = open(fid_path("fifo"), O_WRONLY);
	if (fr < 0 || fw < 0 || write(fw, "through the fifo", 16) != 16)
		fid_die("fifo: %s", strerror(errno));
	fid_ready_wait();

	FID_CHECK(fcntl(p[0], F_GETPIPE_SZ) == 128 * 1024, "pipe size %d", fcntl(p[0], F_GETPIPE_SZ));
	FID_CHECK(read_all(p[0], back, BIG) && !memcmp(big, back, BIG), "queued 40 KiB differ");
	FID_CHECK(read(e[0], small, 1) < 0 && errno == EAGAIN, "empty pipe: not empty or blocking");
	FID_CHECK(fcntl(e[1], F_GETFL) & O_NONBLOCK, "O_NONBLOCK lost");
	memset(small, 0, sizeof(small));
	FID_CHECK(read(fr, small, sizeof(small)) == 16 && !strcmp(small, "through the fifo"),
		  "fifo data: '%s'", small);
	FID_CHECK(write(fw, "more", 4) == 4 && read(fr, small, 4) == 4 && !memcmp(small, "more", 4),
		  "fifo no longer connects its ends");
	FID_CHECK(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && !WEXITSTATUS(st),
		  "the child did not read its 12 bytes");
	fid_finish();
}
