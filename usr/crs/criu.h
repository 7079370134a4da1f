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
#include <stdint.h>
#include <sys/types.h>

#include "lineage.h"
#include "meta.h"

#define CRS_CRIU_DUMP_LOG	"dump.log"
#define CRS_CRIU_RESTORE_LOG	"restore.log"
/* The store's directory of failed restores' logs, HANDLE.restore.log. */
#define CRS_CRIU_LOG_DIR	".logs"
#define CRS_CRIU_LAZY_LOG	"lazy-pages.log"

/*
 * crdbg's CRIU plugin (usr/crs/gate/criu-gate.c), seen from crdbg: a
 * private directory holding the plugin (criu runs with --libdir there)
 * and two FIFOs, "gate" (crdbg -> plugin: "go") and "status" (plugin ->
 * crdbg: "ready", "dumped", "failed", "held", "released"; the contract is
 * <crdbg/criu-gate.h>), both held open read-write here so that the
 * plugin's opens never block and crdbg's death is an end of file at the
 * gate.
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
 * lineage.h). Gated (crs_criu_restore_gate()), criu starts up at once but
 * waits at crdbg's plugin (its init, before CRIU reads an image or
 * creates a task) until crs_criu_restore_go(), so that its start-up
 * overlaps the verify; crs_criu_restore_cancel() instead makes it give up
 * having restored nothing. The plugin holds CRIU again once every
 * restored thread is stopped under its ptrace at the end of the restore,
 * just before it detaches (crs_criu_restore_held()), carries out
 * crdbg's orders there (crs_criu_restore_release(): the CRS hook pushed,
 * SIGCONTs queued, CRIU's stop of a process crdbg's freeze handed over
 * ended) and lets CRIU detach: the tree runs as after a raw restore, each
 * hooked thread entering the hook first. Refused (the gate closed), the
 * plugin kills every restored process before it runs. Not gated (a lazy
 * restore, or no plugin can load), every task is left stopped
 * (--leave-stopped) for crdbg to release (resume.h). With lazy, memory
 * comes on demand from a `criu lazy-pages` server started first in the
 * same workdir (crs_criu_lazy_pages_start()).
 *
 * terminal_fd (-1: none) is the pty slave that stands in for the tree's
 * terminals dumped as external (tree-stdio.h); criu inherits it.
 */
struct crs_criu_restore {
	struct crs_criu_gate g;
	bool gated;		/* off when the plugin cannot load */
	pid_t early;		/* criu started ahead, waiting for its options */
	bool ahead;		/* the criu running was started ahead */
	int config_fd;		/* its $CRIU_CONFIG_FILE pipe's write end */
	int stdio_dup[3];	/* its copies of our fds 0-2 (-1: closed) */
	char dir[PATH_MAX];
};

/* No criu, no gate, no fd yet. */
#define CRS_CRIU_RESTORE_INIT                                                              \
	{                                                                                  \
		.g = { .gate_fd = -1, .status_fd = -1 }, .config_fd = -1,                  \
		.stdio_dup = { -1, -1, -1 },                                               \
	}

/*
 * Write the plugin into a directory of workdir for a gated restore (rs
 * zeroed here). On a noexec file system (no plugin can load from it),
 * or when it cannot be written, it is off: a negative errno, why saying
 * so.
 */
int crs_criu_restore_gate(struct crs_criu_restore *rs, const char *workdir, char *why,
			  size_t whylen);

/*
 * Start a gated criu restore of dir before the checkpoint's metadata is
 * read, so that criu's exec and its libraries overlap crdbg's own
 * set-up. CRIU parses $CRIU_CONFIG_FILE before anything else: this criu
 * waits there, on a pipe, for the options only the metadata gives, which
 * crs_criu_restore_start() writes; it has the images, the work directory,
 * the log and the plugin on its command line, and copies of our fds 0-2;
 * the rest of the gate (its FIFOs) is made while it execs. 0, or a
 * negative errno (nothing started: start() forks criu itself, and
 * rs->gated is off if the gate could not be made).
 */
int crs_criu_restore_prestart(struct crs_criu_restore *rs, const char *dir, const char *workdir);

/*
 * Start criu (after crs_criu_restore_gate(), or with rs zeroed and its
 * gate fds -1); its pid in rs->g.child. 0 or a negative errno. A criu
 * started ahead takes its options here, unless it cannot: it lacks an fd
 * they name (a terminal, an fd above 2), it must be the keeper's child,
 * or a value does not fit CRIU's configuration file syntax; it is then
 * killed (it restored nothing) and criu is forked as without it.
 */
int crs_criu_restore_start(struct crs_criu_restore *rs, const char *dir, const char *workdir,
			   const struct crs_meta *m, bool lazy, int terminal_fd, char *err,
			   size_t errlen);

/* The checkpoint verified: put its tmpfs files back, let CRIU restore. */
int crs_criu_restore_go(struct crs_criu_restore *rs, char *err, size_t errlen);

/* Make a gated criu give up (before restoring anything, or kill the held tree), and reap it. */
void crs_criu_restore_cancel(struct crs_criu_restore *rs);

/*
 * gated: wait until CRIU has restored every task and holds them at the
 * plugin (0), or criu exits (-ECHILD, its wait status in *ret_st), or ms
 * pass (-ETIMEDOUT).
 */
int crs_criu_restore_held(struct crs_criu_restore *rs, int ms, int *ret_st);

/*
 * Hand the plugin orders (len bytes, the lines crs_release_orders()
 * writes, resume.h) and let it carry them out once it holds the tree:
 * at once if it holds it, else as soon as it does, with no round trip
 * through crdbg. 0, or a negative errno and err.
 */
int crs_criu_restore_release(struct crs_criu_restore *rs, const char *orders, size_t len,
			      char *err, size_t errlen);

/*
 * After the release: wait until CRIU has let the tree go (0), or criu
 * exits first (-ECHILD, its wait status in *ret_st), or ms pass
 * (-ETIMEDOUT).
 */
int crs_criu_restore_released(struct crs_criu_restore *rs, int ms, int *ret_st);

/*
 * What the plugin did, a call each: the pc of a thread it hooked (err 0),
 * or an order it could not carry out on pid's thread tid (err an errno).
 */
typedef void crs_criu_report_fn(void *arg, pid_t pid, pid_t tid, uint64_t pc, int err);
void crs_criu_restore_report(struct crs_criu_restore *rs, crs_criu_report_fn *fn, void *arg);

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

/*
 * A restore of handle failed after CRIU ran in work: its log is copied
 * into the store (root) as CRS_CRIU_LOG_DIR/HANDLE.restore.log, and err,
 * which named the work directory's, names that one instead and says what
 * to do. Nothing changes when the copy cannot be made.
 */
void crs_criu_keep_restore_log(const char *root, const char *handle, const char *work,
			       char *err, size_t errlen);

#endif /* CRDBG_CRS_CRIU_H */
