/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A job checkpoint's parts through the session's SDM servers: the
 * transport of <crdbg/job.h> that runs part K on the server of the rank
 * it holds (the "part" command of <crdbg/dbgproto.h>, usr/server/
 * part-run.c). The console runs the job-level sequence (the cut, the
 * restart barrier: usr/crs/job-checkpoint.c, job-restart.c) over it;
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
 * Until rank id's part said that process pid waits for a debugger
 * ("MPIR debug info)"), up to timeout_ms: 0; -EPIPE when the part ended
 * without saying it, -ETIMEDOUT, or another -errno; why in err.
 */
int dbg_parts_wait_debug(struct dbg_parts *p, sdm_id id, pid_t pid, uint32_t timeout_ms, char *err,
			 size_t errlen);

/*
 * Up to timeout_ms for every restart part still running to end, once its
 * processes are gone: what the restored ranks wrote through it is then
 * all here (the session's end).
 */
void dbg_parts_drain(struct dbg_parts *p, uint32_t timeout_ms);

#endif /* CRDBG_CONSOLE_PARTS_SDM_H */
