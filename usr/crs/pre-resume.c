// SPDX-License-Identifier: GPL-2.0
/*
 * With crdbg.ko, a restart freezes the restored tree while CRIU still
 * holds it, so that no group stop (and no SIGCONT to end it) is needed:
 * CRIU runs its "pre-resume" action scripts when every restored thread is
 * stopped under its ptrace at the end of the restorer's rt_sigreturn, with
 * its final registers, just before it detaches
 * (criu/cr-restore.c: run_scripts(ACT_PRE_RESUME), then
 * finalize_restore_detach()). crdbg's script says so through one FIFO and
 * waits on another; crdbg freezes every process meanwhile (the module
 * takes a thread held by a tracer: it parks on its way back to user mode
 * once the tracer lets go) and then lets the script return.
 *
 * crdbg holds the read end of "ready" and both ends of "go" from the
 * start (close-on-exec: criu does not inherit them), so the script never
 * blocks opening them; if crdbg dies, "go" reads end-of-file and the
 * script returns at once (criu, with PR_SET_PDEATHSIG, dies too). CRIU
 * 3.17 only logs a failing pre-resume script and goes on.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "pre-resume.h"

static int write_script(const char *path, const struct crs_pre_resume *pr)
{
	FILE *f;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	fprintf(f, "#!/bin/sh\n"
		   "# crdbg restart: CRIU holds the restored tree; crdbg freezes it now.\n"
		   "[ \"$CRTOOLS_SCRIPT_ACTION\" = pre-resume ] || exit 0\n"
		   "echo ready >'%s' && read x <'%s' && [ \"$x\" = go ]\n",
		pr->ready, pr->go);
	return fclose(f) ? -EIO : 0;
}

int crs_pre_resume_setup(struct crs_pre_resume *pr, const char *workdir, char *err,
			 size_t errlen)
{
	int r;
	struct statvfs vfs;

	pr->ready_fd = pr->go_fd = -1;
	if (statvfs(workdir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC))
		return crs_fail(err, errlen, -ENOEXEC, "%s is on a noexec file system", workdir);
	snprintf(pr->script, sizeof(pr->script), "%s/pre-resume.sh", workdir);
	snprintf(pr->ready, sizeof(pr->ready), "%s/ready", workdir);
	snprintf(pr->go, sizeof(pr->go), "%s/go", workdir);
	if (strchr(workdir, '\'') || mkfifo(pr->ready, 0600) || mkfifo(pr->go, 0600))
		return crs_fail(err, errlen, -EINVAL, "cannot create FIFOs in %s: %s", workdir,
				strchr(workdir, '\'') ? "a quote in the path" : strerror(errno));
	pr->ready_fd = open(pr->ready, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	pr->go_fd = open(pr->go, O_RDWR | O_CLOEXEC);
	if (pr->ready_fd < 0 || pr->go_fd < 0) {
		r = -errno;
		crs_pre_resume_close(pr);
		return crs_fail(err, errlen, r, "cannot open the FIFOs in %s: %s", workdir,
				strerror(-r));
	}
	r = write_script(pr->script, pr);
	if (r) {
		crs_pre_resume_close(pr);
		return crs_fail(err, errlen, r, "cannot write %s: %s", pr->script, strerror(-r));
	}
	return 0;
}

int crs_pre_resume_wait(struct crs_pre_resume *pr, pid_t criu, time_t deadline, int *ret_st)
{
	struct pollfd p = { .fd = pr->ready_fd, .events = POLLIN };
	char buf[16];

	for (;;) {
		if (poll(&p, 1, 20) > 0 && (p.revents & POLLIN) && read(pr->ready_fd, buf, sizeof(buf)) > 0)
			return 0;
		if (waitpid(criu, ret_st, WNOHANG) == criu)
			return -ECHILD;
		if (time(NULL) > deadline)
			return -ETIMEDOUT;
	}
}

void crs_pre_resume_go(struct crs_pre_resume *pr)
{
	if (pr->go_fd >= 0 && write(pr->go_fd, "go\n", 3) != 3)
		perror("crdbg: pre-resume");
}

void crs_pre_resume_close(struct crs_pre_resume *pr)
{
	if (pr->ready_fd >= 0)
		close(pr->ready_fd);
	if (pr->go_fd >= 0)
		close(pr->go_fd);
	pr->ready_fd = pr->go_fd = -1;
}
