/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The restart's meeting point with CRIU before it lets the restored tasks
 * go (its "pre-resume" action script): see pre-resume.c.
 */
#ifndef CRDBG_CRS_PRE_RESUME_H
#define CRDBG_CRS_PRE_RESUME_H

#include <limits.h>
#include <sys/types.h>
#include <time.h>

struct crs_pre_resume {
	char script[PATH_MAX];	/* give to criu restore --action-script */
	char ready[PATH_MAX];	/* FIFO: the script says CRIU holds the tree */
	char go[PATH_MAX];	/* FIFO: crdbg says CRIU may let it go */
	int ready_fd, go_fd;
};

/*
 * Write the script and its two FIFOs into workdir (crdbg's own, 0700);
 * -ENOEXEC when workdir is on a noexec file system (CRIU could not run it).
 */
int crs_pre_resume_setup(struct crs_pre_resume *pr, const char *workdir, char *err,
			 size_t errlen);

/*
 * Wait until CRIU runs the script (0), or criu exits first (-ECHILD, its
 * status in *ret_st), or the deadline passes (-ETIMEDOUT).
 */
int crs_pre_resume_wait(struct crs_pre_resume *pr, pid_t criu, time_t deadline, int *ret_st);

/* Let the script return: CRIU detaches from the tree. */
void crs_pre_resume_go(struct crs_pre_resume *pr);

void crs_pre_resume_close(struct crs_pre_resume *pr);

#endif /* CRDBG_CRS_PRE_RESUME_H */
