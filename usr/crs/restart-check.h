/* SPDX-License-Identifier: GPL-2.0 */
/* The pids a restart needs, before and at the restart (restart-check.c). */
#ifndef CRDBG_CRS_RESTART_CHECK_H
#define CRDBG_CRS_RESTART_CHECK_H

#include <stdbool.h>
#include <time.h>
#include <sys/types.h>

#include <crdbg/restart-check.h>

/* A process on its way out: a zombie, or one SIGKILL is pending on. */
bool crs_pid_dying(pid_t pid);

/*
 * At the restart: pid free, or waited for while a process on its way out
 * holds it, until deadline; a live holder refuses at once (-EBUSY, err).
 */
int crs_pid_wait_free(pid_t pid, time_t deadline, char *err, size_t errlen);

#endif /* CRDBG_CRS_RESTART_CHECK_H */
