/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The job checkpoint parts of one rank (the "part" command of
 * <crdbg/dbgproto.h>): the console runs the job-level sequence of a job
 * checkpoint or restart (<crdbg/job.h>) and each server does its node's
 * work by running a `crdbg ... --part` process here, passing it the
 * console's orders and answering with its steps. The steps come back as
 * replies, so identical ones ("frozen" from every rank) merge in the tree.
 */
#ifndef CRDBG_SERVER_PART_RUN_H
#define CRDBG_SERVER_PART_RUN_H

#include <stdint.h>

#include "sdm/server.h"

struct part_rank;

/*
 * The parts of rank host->id; replies speak for me (the set {rank}),
 * which must outlive the parts. NULL on ENOMEM.
 */
struct part_rank *part_rank_new(const struct sdm_backend_host *host,
				const struct sdm_idset *me);

/* A "part ..." command (the text after "part "): replies through host. */
void part_rank_command(struct part_rank *pr, uint32_t req, const char *arg);

/*
 * Stop watching and close our side of every part: one in the middle of
 * a checkpoint sees its orders end and calls itself off; one whose
 * restart was released runs on with its processes.
 */
void part_rank_free(struct part_rank *pr);

#endif /* CRDBG_SERVER_PART_RUN_H */
