/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The checkpoint/restart service: seed 000's protocol over CRIU and a
 * freeze backend. Library code: returns 0 or -errno with a one-line reason
 * in err; informational notes go to opts->log when it is non-NULL.
 */
#ifndef CRDBG_CRS_H
#define CRDBG_CRS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include <crdbg/freeze.h>

#include "meta.h"

enum crs_after {
	CRS_AFTER_CONTINUE,	/* every thread runs the CRS hook and goes on */
	CRS_AFTER_STOP,		/* left in a SIGSTOP group stop, no hook pushed */
	CRS_AFTER_KILL,		/* killed once the checkpoint is safely stored */
};

enum crs_debug {
	CRS_DEBUG_KEEP,		/* MPIR_debug_with_checkpoint as the debugger left it */
	CRS_DEBUG_CLEAR,	/* no debugger will attach: open the gate */
	CRS_DEBUG_SET,		/* a debugger will attach: park every thread */
};

struct crs_checkpoint_opts {
	pid_t pid;
	bool descendants;
	enum crs_after after;
	enum crs_debug debug;
	enum freeze_backend_kind backend;
	const char *store;
	FILE *log;
	bool verbose;		/* per-thread PCs at checkpoint and at resume */
	const char *const *criu_opts;	/* extra "--name[=value]" for criu, checked */
	size_t nr_criu_opts;
};

int crs_checkpoint(const struct crs_checkpoint_opts *o, char *ret_handle, size_t handle_len,
		   char *err, size_t errlen);

struct crs_restart_opts {
	const char *handle;
	const char *store;
	bool debug;
	enum freeze_backend_kind backend;
	FILE *log;
	bool verbose;
};

/* Restore, release, then wait: *ret_status is the root's exit status. */
int crs_restart(const struct crs_restart_opts *o, int *ret_status, char *err, size_t errlen);

/*
 * Internal: crdbg.ko reports a thread's registers once it has parked, and
 * FREEZE returns once no thread can run a user instruction: one still in
 * the kernel then (a sleeper slow to wake on a loaded host, a group stop
 * ended by SIGCONT) parks a moment later. Wait for that, ~5 s at most.
 */
void crs_wait_parked(struct freeze_backend *b, pid_t pid);

/* Internal: push the CRS hook on every MPIR process, thaw, SIGCONT. */
int crs_resume(const struct crs_meta *m, enum freeze_backend_kind kind, uint64_t arg,
	       const char *what, FILE *log, bool verbose, char *err, size_t errlen);

#endif /* CRDBG_CRS_H */
