/* SPDX-License-Identifier: GPL-2.0 */
/* Job checkpoints on the command line (cmd-job.c), for cmd-checkpoint.c. */
#ifndef CRDBG_CLI_JOB_H
#define CRDBG_CLI_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include <crdbg/crs.h>
#include <crdbg/job.h>

/* checkpoint --job SPEC: "PID", "NODE:PID[:RANKS]", separated by ',' or ' '. */
int cli_job_targets(const char *spec, struct crs_job_target **ret, size_t *ret_n);

/* The job rows of crdbg list (after the checkpoints' rows). */
int cli_list_jobs(const char *root, bool json, bool any_before);

#endif /* CRDBG_CLI_JOB_H */
