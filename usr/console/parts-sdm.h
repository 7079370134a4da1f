/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A job checkpoint's parts through the session's SDM servers: the
 * transport of <crdbg/job.h> that runs part K on the server of the rank
 * it holds (the "part" command of <crdbg/dbgproto.h>, usr/server/
 * part-run.c). The console runs the job-level sequence (the cut, the
 * restart barrier: usr/job/checkpoint.c, restart.c) over it;
 * every step is one command to every part's rank, and identical answers
 * come back merged.
 */
#ifndef CRDBG_CONSOLE_PARTS_SDM_H
#define CRDBG_CONSOLE_PARTS_SDM_H

#include <sys/types.h>

#include <crdbg/job.h>
#include "session.h"

struct dbg_parts;

/* NULL on ENOMEM. */
struct dbg_parts *dbg_parts_new(struct dbg_session *s);
void dbg_parts_free(struct dbg_parts *p);

/* The transport, for crs_job_opts.transport; parts are started anew by each operation. */
const struct crs_job_transport *dbg_parts_transport(struct dbg_parts *p);

/*
 * The processes a restart part parked for their debuggers: the part rank
 * server's server runs (a job's part is on the server of its first
 * rank), and the pids it restored that are to say "MPIR debug info)".
 */
struct dbg_parked {
	sdm_id server;
	const pid_t *pid;
	size_t n;
	/* 0: every one is parked; -EPIPE: the part ended first; -ETIMEDOUT... */
	int rc;
	char why[256];		/* ...and why */
};

/*
 * Up to timeout_ms for every w[i]: one "part wait MS debug PID,..."
 * request per part (its set, a command's worth at a time), every
 * request under way at once, each answered by its server when the last
 * of its processes is parked. Nothing polls.
 */
void dbg_parts_wait_parked(struct dbg_parts *p, struct dbg_parked *w, size_t n,
			   uint32_t timeout_ms);

/*
 * Up to timeout_ms for every restart part still running to end, once its
 * processes are gone: what the restored ranks wrote through it is then
 * all here (the session's end).
 */
void dbg_parts_drain(struct dbg_parts *p, uint32_t timeout_ms);

#endif /* CRDBG_CONSOLE_PARTS_SDM_H */
