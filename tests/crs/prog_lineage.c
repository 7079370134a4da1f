// SPDX-License-Identifier: GPL-2.0
/*
 * Lays out processes the way slurmd and slurmstepd lay out a node's
 * tasks, for tests/crs/test_lineage.sh, with no Slurm:
 *
 *   prog_lineage N OUT CMD [ARG...]
 *
 * makes a session whose leader then exits (slurmd's setsid() child), in
 * it a "stepd" that forks N tasks, puts every task in the first task's
 * process group and waits for them; task I runs CMD with its stdout and
 * stderr on the file OUT.I. Prints "stepd PID session SID" and one
 * "task I PID" line per task, then exits (the stepd lives on).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n, fds[2];
	pid_t s, first = 0;
	char path[4096];

	if (argc < 4 || (n = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: prog_lineage N OUT CMD [ARG...]\n");
		return 2;
	}
	if (pipe(fds))
		return 1;
	s = fork();
	if (s == 0) {
		pid_t stepd;

		close(fds[0]);
		setsid();
		stepd = fork();
		if (stepd != 0)
			_exit(stepd < 0);	/* the session's leader goes */
		dprintf(fds[1], "stepd %d session %d\n", getpid(), getsid(0));
		for (int i = 0; i < n; i++) {
			pid_t t = fork();

			if (t == 0) {
				int fd;

				setpgid(0, first);
				snprintf(path, sizeof(path), "%s.%d", argv[2], i);
				fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
				dup2(fd, 1);
				dup2(fd, 2);
				close(fds[1]);
				execvp(argv[3], argv + 3);
				_exit(127);
			}
			if (i == 0)
				first = t;
			setpgid(t, first);	/* as slurmstepd does, whoever runs first */
			dprintf(fds[1], "task %d %d\n", i, t);
		}
		close(fds[1]);
		while (wait(NULL) > 0)
			;
		_exit(0);
	}
	close(fds[1]);
	waitpid(s, NULL, 0);
	/* relay the stepd's lines once it has forked every task */
	for (char c; read(fds[0], &c, 1) == 1;)
		putchar(c);
	return 0;
}
