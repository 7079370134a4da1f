// SPDX-License-Identifier: GPL-2.0
/* Running criu dump / restore as a child (see criu.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "criu.h"

const char *crs_criu_path(void)
{
	const char *env = getenv("CRDBG_CRIU");

	if (env && *env)
		return env;
	if (access("/usr/sbin/criu", X_OK) == 0)
		return "/usr/sbin/criu";
	return "criu";
}

/* fork + exec argv with stdin from /dev/null and stdout to outfd (or null). */
static pid_t spawn(char *const argv[], int outfd)
{
	pid_t pid = fork();
	int null;

	if (pid != 0)
		return pid;
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(outfd >= 0 ? outfd : null, 1);
		if (outfd >= 0)
			dup2(null, 2);
	}
	execvp(argv[0], argv);
	_exit(127);
}

int crs_criu_version(char *buf, size_t len)
{
	char *argv[] = { (char *)crs_criu_path(), "--version", NULL };
	char out[256] = "", *p;
	int fds[2], st;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = spawn(argv, fds[1]);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -errno;
	}
	n = read(fds[0], out, sizeof(out) - 1);
	close(fds[0]);
	waitpid(pid, &st, 0);
	if (n <= 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -ENOENT;
	out[n] = '\0';
	p = strstr(out, "Version:");
	if (!p)
		return -EBADMSG;
	p += 8;
	while (*p == ' ')
		p++;
	snprintf(buf, len, "%.*s", (int)strcspn(p, " \n"), p);
	return 0;
}

void crs_criu_log_error(const char *log, char *out, size_t len)
{
	char line[1024];
	FILE *f = fopen(log, "re");

	snprintf(out, len, "see %s", log);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *e = strstr(line, "Error");

		if (!e)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(out, len, "%s (see %s)", e, log);
		break;
	}
	fclose(f);
}

int crs_criu_dump(pid_t pid, const char *dir, bool shell_job, char *err, size_t errlen)
{
	char spid[16], log[4200];
	char *argv[16];
	int st, i = 0;
	pid_t child;

	snprintf(spid, sizeof(spid), "%d", (int)pid);
	argv[i++] = (char *)crs_criu_path();
	argv[i++] = "dump";
	argv[i++] = "-t";
	argv[i++] = spid;
	argv[i++] = "-D";
	argv[i++] = (char *)dir;
	argv[i++] = "-o";
	argv[i++] = CRS_CRIU_DUMP_LOG;
	argv[i++] = "-v4";
	argv[i++] = "--leave-running";
	if (shell_job)
		argv[i++] = "--shell-job";
	argv[i] = NULL;
	child = spawn(argv, -1);
	if (child < 0) {
		snprintf(err, errlen, "cannot run criu: %s", strerror(errno));
		return -errno;
	}
	if (waitpid(child, &st, 0) < 0)
		return -errno;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	snprintf(log, sizeof(log), "%s/%s", dir, CRS_CRIU_DUMP_LOG);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		snprintf(err, errlen, "cannot run %s", argv[0]);
		return -ENOENT;
	}
	/* The log goes away with the failed checkpoint: keep only its error. */
	crs_criu_log_error(log, err, errlen);
	if (strstr(err, " (see "))
		*strstr(err, " (see ") = '\0';
	return -EIO;
}

pid_t crs_criu_restore_start(const char *dir, const char *workdir, bool shell_job, char *err,
			     size_t errlen)
{
	char *argv[16];
	pid_t child;
	int i = 0;

	argv[i++] = (char *)crs_criu_path();
	argv[i++] = "restore";
	argv[i++] = "-D";
	argv[i++] = (char *)dir;
	argv[i++] = "-W";
	argv[i++] = (char *)workdir;
	argv[i++] = "-o";
	argv[i++] = CRS_CRIU_RESTORE_LOG;
	argv[i++] = "-v4";
	argv[i++] = "--leave-stopped";
	if (shell_job)
		argv[i++] = "--shell-job";
	argv[i] = NULL;
	child = fork();
	if (child < 0) {
		snprintf(err, errlen, "cannot fork criu: %s", strerror(errno));
		return -errno;
	}
	if (child == 0) {
		/* criu keeps our stdio (a shell job's terminal). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execvp(argv[0], argv);
		_exit(127);
	}
	return child;
}
