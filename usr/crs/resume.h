/* SPDX-License-Identifier: GPL-2.0 */
/* Resuming a checkpointed tree: shared by checkpoint.c and restart.c. */
#ifndef CRDBG_CRS_RESUME_H
#define CRDBG_CRS_RESUME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <crdbg/crs.h>
#include <crdbg/freeze.h>

/*
 * crdbg.ko reports a thread's registers once it has parked, and FREEZE
 * returns once no thread can run a user instruction: one still in the
 * kernel then (a sleeper slow to wake on a loaded host, a group stop
 * ended by SIGCONT) parks a moment later. Wait for that, ~5 s at most.
 */
void crs_wait_parked(struct freeze_backend *b, pid_t pid);

/*
 * End the group stop pid is in (CRIU's --leave-stopped, a hand-over)
 * without a SIGCONT the program sees, and queue again the SIGCONTs m
 * records for pid (sigcont, sigcont-thread: the stop discarded them)
 * before any thread runs; m may be NULL. Nothing when it is not stopped.
 */
int crs_end_stop(const struct crs_meta *m, pid_t pid, char *err, size_t errlen);

/*
 * The hook's argument for m->procs[i], given the tree's: a debugger
 * takes back the processes it debugged, never what they started (an MPI
 * singleton's orted, a rank's helper). Where its debugger had parked
 * some of the tree at checkpoint (the "held" records: the ranks of a
 * session), "a debugger will attach" (CRDBG_HOOK_DEBUG_SET) becomes
 * "none will" (CLEAR) for the others, which then run on instead of
 * waiting for ever; where none was held (a checkpoint from the shell),
 * every libcrdbg process waits for the debugger.
 */
uint64_t crs_hook_arg_of(const struct crs_meta *m, size_t i, uint64_t arg);

/* Push the CRS hook on every MPIR process, thaw, end group stops (no SIGCONT seen). */
int crs_resume(const struct crs_meta *m, enum freeze_backend_kind kind, uint64_t arg,
	       const char *what, FILE *log, bool verbose, char *err, size_t errlen);

/*
 * The same release done by crdbg's CRIU plugin at the end of a gated
 * restore, while CRIU still traces the tree (criu.h): its orders, the
 * lines usr/crs/gate/criu-gate.c reads, in a malloc'd *buf of *len
 * bytes, in m's order (parents before children): for every process that
 * runs on, the hook when it uses libcrdbg (arg as for crs_resume()), the
 * SIGCONTs m records, and the end of the stop CRIU puts it in when it was
 * dumped in crdbg's hand-over; every process that stays stopped, named.
 * 0 or -ENOMEM.
 */
int crs_release_orders(const struct crs_meta *m, uint64_t arg, FILE *log, char **buf,
		       size_t *len);

/* -v: "crdbg: WHAT pid P tid T pc X checkpoint-pc Y same|...", as crs_resume() says it. */
void crs_show_pc(const struct crs_meta *m, pid_t pid, pid_t tid, uint64_t pc, const char *what,
		 FILE *log);

#endif /* CRDBG_CRS_RESUME_H */
