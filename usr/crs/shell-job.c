// SPDX-License-Identifier: GPL-2.0
/* Shell jobs: what CRIU cannot dump, and a restart's terminal (shell-job.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "error.h"
#include "shell-job.h"
#include "tree-stdio.h"

/*
 * The last number of a "NSsid:"/"NSpgid:" line of /proc/PID/status: the
 * id in the process's own PID namespace (0: its leader is not there).
 * -1 when the line is missing (a kernel before 4.1) or pid is gone.
 */
static long own_ns_id(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p, *last = NULL;

		if (strncmp(line, key, klen))
			continue;
		for (p = strtok(line + klen, " \t\n"); p; p = strtok(NULL, " \t\n"))
			last = p;
		if (last)
			sscanf(last, "%ld", &v);
		break;
	}
	fclose(f);
	return v;
}

int crs_shell_job_dumpable(const pid_t *pids, size_t nr, char *err, size_t errlen)
{
	for (size_t i = 0; i < nr; i++) {
		const char *what = NULL;

		if (own_ns_id(pids[i], "NSsid:") == 0)
			what = "session";
		else if (own_ns_id(pids[i], "NSpgid:") == 0)
			what = "process group";
		if (what)
			return crs_fail(err, errlen, -ESRCH,
					"pid %d is in a %s with no leader in its PID namespace (%s 0: started by the system's init without setsid, or entered into its PID namespace from outside): CRIU cannot dump it; start the job under setsid(1) or from a login shell",
					(int)pids[i], what, strcmp(what, "session") ? "group" : "session");
	}
	return 0;
}

/* fd becomes the controlling terminal of a session we lead, and our fd 0. */
static int take_terminal(int fd, char *err, size_t errlen)
{
	if (!isatty(fd))
		return crs_fail(err, errlen, -ENOTTY, "--terminal-fd %d is not a terminal", fd);
	if (getsid(0) != getpid() && setsid() < 0)
		return crs_fail(err, errlen, -errno,
				"--terminal-fd %d: crdbg restart leads a process group, so it cannot start the session the terminal needs: run it under setsid(1)",
				fd);
	if (tcgetsid(fd) != getpid() && ioctl(fd, TIOCSCTTY, 0) < 0)
		return crs_fail(err, errlen, -errno,
				"--terminal-fd %d cannot become crdbg restart's controlling terminal (%s): give a terminal that no other session has",
				fd, strerror(errno));
	if (fd != 0 && dup2(fd, 0) < 0)
		return crs_fail(err, errlen, -errno, "--terminal-fd %d: %s", fd, strerror(errno));
	return 0;
}

/*
 * The terminal a shell job is restored on becomes its controlling
 * terminal, where it can type into whoever reads it next (TIOCSTI): it
 * must be its owner's (metadata without an owner is root's).
 */
static int terminal_owners(int fd, const struct crs_restart_opts *o, const struct crs_meta *m,
			   char *err, size_t errlen)
{
	uid_t owner = m->has_owner ? m->owner_uid : 0;
	struct stat st;

	if (!isatty(fd) || fstat(fd, &st))
		return 0;	/* no terminal: said below */
	if (st.st_uid == owner)
		return 0;
	return crs_fail(err, errlen, -EPERM,
			"checkpoint %s is a shell job of uid %u: the terminal it would be restored on is uid %u's, where it could type commands (TIOCSTI): restart it as uid %u, or hand in a terminal of theirs with --terminal-fd N",
			o->handle, (unsigned int)owner, (unsigned int)st.st_uid,
			(unsigned int)owner);
}

int crs_shell_job_terminal(const struct crs_restart_opts *o, const struct crs_meta *m,
			   bool *ret_replaced, char *err, size_t errlen)
{
	const struct crs_stdio *t = crs_stdio_terminal(m);
	int r;

	*ret_replaced = false;
	if (!m->shell_job || !t)
		return 0;
	r = terminal_owners(o->has_terminal ? o->terminal_fd : 0, o, m, err, errlen);
	if (r)
		return r;
	if (o->has_terminal) {
		int r = take_terminal(o->terminal_fd, err, errlen);

		*ret_replaced = !r;
		return r;
	}
	if (isatty(0) && tcgetsid(0) == getsid(0))
		return 0;
	return crs_fail(err, errlen, -ENOTTY,
			"checkpoint %s is a job a shell started on its terminal (%s of pid %d): CRIU gives it the terminal of the restart, which has none: restart from a terminal, or hand one in with --terminal-fd N",
			o->handle, t->link, (int)t->pid);
}
