/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checkpoint and restart of the whole job from the console (checkpoint.c):
 * ranks running with libcrdbg, as one job checkpoint (<crdbg/job.h>) over
 * the session's servers (parts-sdm.h). The part registers with the
 * session: it takes every output line that is a rank's "MPIR debug info)"
 * announcement as its own (not shown; said once per node). An MPIR job
 * goes through its mpirun (mpir.h).
 */
#ifndef CRDBG_CONSOLE_CHECKPOINT_H
#define CRDBG_CONSOLE_CHECKPOINT_H

#include <stddef.h>

struct dbg_session;
struct dbg_mpir;
struct dbg_ckpt;

/*
 * A new checkpoint part of s, once s is started (it has s->n ranks);
 * mpir: the job's MPIR part, or NULL. Registered with s. NULL on ENOMEM
 * or ENOSPC.
 */
struct dbg_ckpt *dbg_ckpt_new(struct dbg_session *s, struct dbg_mpir *mpir);
/* After dbg_session_stop(). Accepts NULL. */
void dbg_ckpt_free(struct dbg_ckpt *ck);

/*
 * Once every rank has exited: what their restart parts still relay of
 * their output through the servers, up to the parts' end or max_s
 * seconds (the session is ending).
 */
void dbg_ckpt_drain(struct dbg_ckpt *ck, int max_s);

/* "checkpoint": every rank, left where it was; prints the handles. */
void dbg_ckpt_checkpoint(struct dbg_ckpt *ck);

/*
 * The same, for the timeline (timeline.c): DBG_CKPT_FULL asks for full
 * images (crdbg checkpoint --full: a new incremental chain), DBG_CKPT_QUIET
 * leaves the handle and parked lines out. The job checkpoint's handle
 * goes to out. 0, or -1 when no complete checkpoint was kept (said).
 */
#define DBG_CKPT_FULL	1u
#define DBG_CKPT_QUIET	2u
int dbg_ckpt_take(struct dbg_ckpt *ck, unsigned int flags, char *out, size_t outlen);
/*
 * Remove job checkpoint handle, every part on its node (crdbg-part rm), for
 * the timeline's retention. 0, or -errno with the reason in err.
 */
int dbg_ckpt_remove_job(struct dbg_ckpt *ck, const char *handle, char *err, size_t errlen);
/*
 * crdbg debug --restart JOB (adopt.c placed the ranks): restart job
 * checkpoint handle, attach every rank's gdb to its restored process and
 * take every thread back to its pc. launch (or NULL) starts a part on
 * another node; ck keeps it. The job ends with the session. 0, or -1
 * when a rank did not come back (said).
 */
int dbg_ckpt_adopt(struct dbg_ckpt *ck, const char *handle, char *launch);
/* "restart [JOB]": default, the last checkpoint's; JOB must be a job checkpoint. */
void dbg_ckpt_restart(struct dbg_ckpt *ck, const char *handles);

#endif /* CRDBG_CONSOLE_CHECKPOINT_H */
