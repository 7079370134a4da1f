// SPDX-License-Identifier: GPL-2.0
/*
 * A terminal for the tests of terminals at restart: like script(1), but
 * with nothing left to a shell. It makes a pty, runs CMD as the leader of
 * a new session whose controlling terminal (and fds 0, 1, 2) is the pty's
 * slave, and copies everything the master gives to LOG until no process
 * holds the slave any more. Its own stdin is not read; what is written
 * to the FIFO $PTY_INPUT, if set, is typed on the terminal.
 *
 *   prog_pty LOG CMD [ARGS...]
 *
 * $PTY_PIDFILE, if set, receives CMD's pid; $PTY_NAMEFILE the slave's
 * path. The exit status is CMD's. With $PTY_SLAVE_FD=N, CMD gets the
 * slave as fd N only: no new session, no controlling terminal, fds 0-2
 * prog_pty's own (a terminal handed to a program, as a service would).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void put(const char *file, const char *what)
{
	FILE *f = file ? fopen(file, "w") : NULL;

	if (f) {
		fprintf(f, "%s\n", what);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	char buf[4096], pidstr[16];
	int master, log, input, st = 0;
	const char *name;
	ssize_t n;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: prog_pty LOG CMD [ARGS...]\n");
		return 2;
	}
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) || unlockpt(master) || !(name = ptsname(master))) {
		perror("prog_pty: pty");
		return 1;
	}
	log = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log < 0) {
		perror(argv[1]);
		return 1;
	}
	pid = fork();
	if (pid == 0 && getenv("PTY_SLAVE_FD")) {
		int slave = open(name, O_RDWR | O_NOCTTY), want = atoi(getenv("PTY_SLAVE_FD"));

		if (slave < 0 || want < 3 || dup2(slave, want) != want)
			_exit(126);
		if (slave != want)
			close(slave);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	if (pid == 0) {
		int slave;

		setsid();
		slave = open(name, O_RDWR);	/* the session's controlling terminal */
		if (slave < 0 || ioctl(slave, TIOCSCTTY, 0))
			_exit(126);
		dup2(slave, 0);
		dup2(slave, 1);
		dup2(slave, 2);
		if (slave > 2)
			close(slave);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	if (pid < 0) {
		perror("prog_pty: fork");
		return 1;
	}
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	put(getenv("PTY_PIDFILE"), pidstr);
	put(getenv("PTY_NAMEFILE"), name);
	/* read-write: opening never waits for a writer, reading never ends */
	input = getenv("PTY_INPUT") ? open(getenv("PTY_INPUT"), O_RDWR | O_CLOEXEC) : -1;
	for (;;) {
		struct pollfd p[2] = { { .fd = master, .events = POLLIN },
				       { .fd = input, .events = POLLIN } };

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents && (n = read(input, buf, sizeof(buf))) > 0 &&
		    write(master, buf, (size_t)n) != n)
			break;
		if (!p[0].revents)
			continue;
		/* EIO once the last holder of the slave closed it. */
		n = read(master, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || write(log, buf, (size_t)n) != n)
			break;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
