/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The session's checkpoint timeline (timeline.c), on top of checkpoint.h:
 * "set auto-checkpoint on" checkpoints the whole job at every stop a run
 * command reports, "checkpoints" lists what the session took, "restart N"
 * and "back" return the job to one of them, and "set checkpoint-keep K"
 * bounds the store (Documentation/checkpoint.md, *The console's timeline*).
 */
#ifndef CRDBG_CONSOLE_TIMELINE_H
#define CRDBG_CONSOLE_TIMELINE_H

#include <stdbool.h>

struct dbg_session;
struct dbg_ckpt;
struct dbg_timeline;
struct sdm_fe_result;

/* Over ck (not NULL); NULL on ENOMEM. */
struct dbg_timeline *dbg_tl_new(struct dbg_session *s, struct dbg_ckpt *ck);
void dbg_tl_free(struct dbg_timeline *tl);	/* accepts NULL */

/*
 * "set auto-checkpoint on|off", "set checkpoint-keep K": true when arg
 * (what follows "set") is one of the timeline's settings (done, or
 * refused with one line), false when it is gdb's.
 */
bool dbg_tl_set(struct dbg_timeline *tl, const char *arg);

/*
 * After a run command's report: stops (the merged report, or NULL) is
 * where the job now is; with auto-checkpoint on and every rank stopped,
 * the job is checkpointed here.
 */
void dbg_tl_after_stop(struct dbg_timeline *tl, const struct sdm_fe_result *stops);

/* "checkpoint": one now, printing the handles as before. */
void dbg_tl_checkpoint(struct dbg_timeline *tl);
/* "checkpoints": the list. */
void dbg_tl_list(struct dbg_timeline *tl);
/* "restart ARG": a number is the timeline's, else handles (checkpoint.h). */
void dbg_tl_restart(struct dbg_timeline *tl, const char *arg);
/* "back": the checkpoint before the job's position. */
void dbg_tl_back(struct dbg_timeline *tl);

#endif /* CRDBG_CONSOLE_TIMELINE_H */
