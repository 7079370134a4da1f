/* SPDX-License-Identifier: GPL-2.0 */
/* Job checkpoints on the command line (cmd-job.c), for cmd-checkpoint.c. */
#ifndef CRDBG_CLI_JOB_H
#define CRDBG_CLI_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include <crdbg/crs.h>
#include <crdbg/job.h>

/* checkpoint --part: crs_checkpoint_opts.frozen, then after the store. */
int cli_part_frozen(void *arg);
int cli_part_dumped(void *arg);
int cli_part_stored(const char *root, const char *handle, bool *kill_job);

/*
 * Before a part's first step: its beat to its coordinator starts
 * (CRS_PART_BEAT_S), and SIGTERM, SIGHUP and SIGINT call it off as an
 * "abort" would. The beat stops at its last order (cli_part_stored(), and
 * cli_part_hold() once restored or called off).
 */
void cli_part_begin(void);
void cli_part_beat_stop(void);

/* restart --part: crs_restart_opts.hold. */
int cli_part_hold(void *arg, const struct crs_meta *m, enum crs_hold_phase phase);

/*
 * A restart part's fd 0 is its coordinator's order channel, and a
 * restart hands its own stdio down (criu inherits it; an outside stdin
 * pipe of the tree is stood in for by fd 0, tree-stdio.h): the orders
 * move to a close-on-exec fd above 9 and fd 0 becomes /dev/null, so a
 * restored rank reads end of file, never the orders. 0 or -errno.
 */
int cli_part_orders_off_stdin(void);

/* checkpoint --job SPEC: "PID", "NODE:PID[:RANKS]", separated by ',' or ' '. */
int cli_job_targets(const char *spec, struct crs_job_target **ret, size_t *ret_n);

/* The job rows of crdbg list (after the checkpoints' rows). */
int cli_list_jobs(const char *root, bool json, bool any_before);

#endif /* CRDBG_CLI_JOB_H */
