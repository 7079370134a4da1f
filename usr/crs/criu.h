/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Driving the criu binary (libcriu 3.17 has no leave-stopped setter).
 * $CRDBG_CRIU overrides the path (default /usr/sbin/criu, then $PATH).
 */
#ifndef CRDBG_CRS_CRIU_H
#define CRDBG_CRS_CRIU_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lineage.h"
#include "meta.h"

#define CRS_CRIU_DUMP_LOG	"dump.log"
#define CRS_CRIU_RESTORE_LOG	"restore.log"
#define CRS_CRIU_LAZY_LOG	"lazy-pages.log"

/*
 * crdbg's CRIU plugin (usr/crs/gate/criu-gate.c), seen from crdbg: a
 * private directory holding the plugin (criu runs with --libdir there)
 * and two FIFOs, "gate" (crdbg -> plugin: "go") and "status" (plugin ->
 * crdbg: "ready", "dumped", "failed", "held"), both held open read-write
 * here so that the plugin's opens never block and crdbg's death is an
 * end of file at the gate.
 */
struct crs_criu_gate {
	pid_t child;		/* criu */
	struct crs_lineage *keeper;	/* criu is its child, not ours (lineage.h) */
	int gate_fd;
	int status_fd;
	bool exited;		/* criu reaped, its wait status in status */
	int status;
	char said[32];		/* the plugin's words not yet taken */
	char dir[PATH_MAX - 64];
};

const char *crs_criu_path(void);

/* "3.17.1" from `criu --version`. */
int crs_criu_version(char *buf, size_t len);

/*
 * Does the tree rooted at pid hold TCP connections, or live in its own
 * network namespace? criu then needs --tcp-established and a network lock.
 */
bool crs_criu_needs_network(pid_t root);

/*
 * Restoring dir connects the tree to something outside it that a kill of
 * the restored tree could not leave as it found it: a TCP connection (or
 * a network namespace), an external unix socket, an external resource.
 */
bool crs_criu_restore_reaches_out(const char *dir, const struct crs_meta *m);

/*
 * `criu restore` of dir (not detached: criu stays the parent of the root
 * and waits for it; with rs->g.keeper set after crs_criu_restore_gate(),
 * the keeper runs it detached and the root becomes the keeper's child,
 * lineage.h). With gated, criu starts up at once but waits at
 * crdbg's plugin (its init, before CRIU reads an image or creates a
 * task) until crs_criu_restore_go(), so that its start-up overlaps the
 * verify; crs_criu_restore_cancel() instead makes it give up having
 * restored nothing. With hold (crdbg.ko's restart), the plugin also
 * holds CRIU once every restored thread is stopped under its ptrace at
 * the end of its restore, just before it detaches (the hook
 * RESUME_DEVICES_LATE, where CRIU 3.17 runs pre-resume scripts next):
 * crs_criu_restore_held() waits for that and crs_criu_restore_release()
 * lets CRIU detach. Without hold every task is left stopped
 * (--leave-stopped). With lazy (no gate, no hold), memory comes on
 * demand from a `criu lazy-pages` server started first in the same
 * workdir (crs_criu_lazy_pages_start()).
 *
 * terminal_fd (-1: none) is the pty slave that stands in for the tree's
 * terminals dumped as external (tree-stdio.h); criu inherits it.
 */
struct crs_criu_restore {
	struct crs_criu_gate g;
	bool gated, hold;	/* as asked, or off when the plugin cannot load */
	char dir[PATH_MAX];
};

/*
 * Write the plugin into a directory of workdir for a gated restore
 * (gated, hold as above; rs zeroed here). On a noexec file system (no
 * plugin can load from it), or when it cannot be written, both are off:
 * a negative errno, why saying so.
 */
int crs_criu_restore_gate(struct crs_criu_restore *rs, const char *workdir, bool gated,
			  bool hold, char *why, size_t whylen);

/*
 * Start criu (after crs_criu_restore_gate(), or with rs zeroed and its
 * gate fds -1); its pid in rs->g.child. 0 or a negative errno.
 */
int crs_criu_restore_start(struct crs_criu_restore *rs, const char *dir, const char *workdir,
			   const struct crs_meta *m, bool lazy, int terminal_fd, char *err,
			   size_t errlen);

/* The checkpoint verified: put its tmpfs files back, let CRIU restore. */
int crs_criu_restore_go(struct crs_criu_restore *rs, char *err, size_t errlen);

/* Make a gated criu give up before restoring anything, and reap it. */
void crs_criu_restore_cancel(struct crs_criu_restore *rs);

/*
 * gated: wait until CRIU has restored every task and is about to let
 * them go (0; with hold, the plugin holds them until
 * crs_criu_restore_release()), or criu exits (-ECHILD, its wait status
 * in *ret_st), or ms pass (-ETIMEDOUT).
 */
int crs_criu_restore_held(struct crs_criu_restore *rs, int ms, int *ret_st);
void crs_criu_restore_release(struct crs_criu_restore *rs);

/*
 * Has criu exited (its wait status in *st)? Without waiting. A detached
 * criu (a keeper's) exits 0 once the tree is restored and let go.
 */
bool crs_criu_restore_exited(struct crs_criu_restore *rs, int *st);

/* The plugin's FIFOs and directory go (criu no longer needs them). */
void crs_criu_restore_close(struct crs_criu_restore *rs);

/*
 * `criu pre-dump --track-mem` of the tree rooted at pid into dir (which
 * exists), its log there as log; waits for it. On failure err holds
 * CRIU's first error line.
 */
int crs_criu_pre_dump(pid_t pid, const char *dir, const struct crs_meta *m, const char *log,
		      char *err, size_t errlen);

/*
 * Start `criu lazy-pages` for dir (a child; it serves page faults of the
 * restored tree through userfaultfd, then copies the remaining pages, and
 * exits once every page is in); returns its pid once it listens. With
 * ps_fd >= 0 it reads the pages from the page server on that socket
 * (--page-server --ps-socket; page-server.c) instead of the images.
 */
pid_t crs_criu_lazy_pages_start(const char *dir, const char *workdir, int ps_fd, char *err,
				size_t errlen);

/*
 * The same in two steps, so that CRIU starts up while the tree still runs:
 * start runs `criu dump` and returns once it waits at crdbg's dump gate
 * (its first seize of the root, or the plugin's init: before CRIU
 * touches any task), finish lets it go
 * on and waits for it; cancel makes it give up. pre (relative to dir):
 * a pre-dump the dump takes unchanged pages from (pre-dump.h), or NULL.
 */
struct crs_criu_dump {
	struct crs_criu_gate g;
	pid_t pid;
	bool went;		/* "go" written: CRIU seizes the tree */
	bool tmpfs_saved;	/* crs_criu_dump_save_tmpfs() ran */
	char dir[PATH_MAX];
};

int crs_criu_dump_start(pid_t pid, const char *dir, const struct crs_meta *m, bool leave_running,
			const char *pre, struct crs_criu_dump *d, char *err, size_t errlen);
int crs_criu_dump_finish(struct crs_criu_dump *d, char *err, size_t errlen);

/*
 * The parts of crs_criu_dump_finish(), for a checkpoint that releases
 * the tree before criu exits (checkpoint.c, run_dump()): let CRIU seize
 * the frozen tree; wait until the gate plugin says the images are
 * written and closed (1; CRIU still holds the tree and lets it go next)
 * or criu exited first (0: crs_criu_dump_finish() gives its error); copy
 * the tmpfs files the tree maps while it is still held. finish() then
 * waits for criu and checks its status.
 */
int crs_criu_dump_go(struct crs_criu_dump *d, char *err, size_t errlen);
int crs_criu_dump_wait_written(struct crs_criu_dump *d);
int crs_criu_dump_save_tmpfs(struct crs_criu_dump *d, char *err, size_t errlen);
void crs_criu_dump_cancel(struct crs_criu_dump *d);

/*
 * The "Error" line of a CRIU log that says why it failed (not a helper's
 * exit report, when there is another), with what to do about it when
 * crdbg knows, for a one-line message.
 */
void crs_criu_log_error(const char *log, char *out, size_t len);

#endif /* CRDBG_CRS_CRIU_H */
