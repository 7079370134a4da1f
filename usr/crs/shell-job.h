/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shell jobs: trees whose session (or group) a process outside them
 * leads, a shell typically, often on that shell's terminal. CRIU dumps
 * them with --shell-job (checkpoint.c records it, "shell-job 1"); what
 * CRIU cannot dump is refused here before anything is frozen, and a
 * restart gets the terminal CRIU hands the tree before anything is
 * restored. Documentation/checkpoint.md, "Shell jobs".
 */
#ifndef CRDBG_CRS_SHELL_JOB_H
#define CRDBG_CRS_SHELL_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <crdbg/crs.h>

/*
 * 0 when CRIU can dump pids[0..nr): -ESRCH with a one-line reason in err
 * when a process's session or group has no leader in its own PID
 * namespace (session 0: a program the system's init started without
 * setsid, or one entered into a PID namespace from outside), which CRIU
 * 3.17 refuses whatever its options.
 */
int crs_shell_job_dumpable(const pid_t *pids, size_t nr, char *err, size_t errlen);

/*
 * Before a restart of m restores anything: a shell job on a terminal is
 * restored onto criu's stdin, which must then be our controlling
 * terminal. With o->has_terminal, o->terminal_fd becomes it (a session
 * of ours is made if needed) and our fd 0; otherwise fd 0 must be our
 * controlling terminal already. Either must be the checkpoint's owner's
 * (root's for metadata without an owner): a terminal of someone else's
 * is refused, as the restored tree could type into it (TIOCSTI).
 * *ret_replaced says whether our fd 0
 * (criu's stdin) was replaced. 0, or a negative errno with a one-line
 * reason that says what to do.
 */
int crs_shell_job_terminal(const struct crs_restart_opts *o, const struct crs_meta *m,
			   bool *ret_replaced, char *err, size_t errlen);

#endif /* CRDBG_CRS_SHELL_JOB_H */
