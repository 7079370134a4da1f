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

#include "meta.h"

#define CRS_CRIU_DUMP_LOG	"dump.log"
#define CRS_CRIU_RESTORE_LOG	"restore.log"
#define CRS_CRIU_LAZY_LOG	"lazy-pages.log"

const char *crs_criu_path(void);

/* "3.17.1" from `criu --version`. */
int crs_criu_version(char *buf, size_t len);

/*
 * Does the tree rooted at pid hold TCP connections, or live in its own
 * network namespace? criu then needs --tcp-established and a network lock.
 */
bool crs_criu_needs_network(pid_t root);

/*
 * Dump the tree rooted at pid into dir with m's shell-job flag and CRIU
 * options. leave_running: leave it as it was (stopped or frozen); else
 * CRIU kills it while the network is still locked, so that peers of its
 * TCP connections see nothing. On failure err holds CRIU's first error line.
 */
int crs_criu_dump(pid_t pid, const char *dir, const struct crs_meta *m, bool leave_running,
		  char *err, size_t errlen);

/*
 * Start `criu restore` (not detached: criu stays the parent of the root
 * and waits for it); returns criu's pid. Without pre_resume every task is
 * left stopped (--leave-stopped); with it, criu runs that action script
 * while it still holds the restored tasks, and lets them run after it.
 * With lazy, memory comes on demand from a `criu lazy-pages` server
 * started first in the same workdir (crs_criu_lazy_pages_start).
 */
/*
 * Restoring dir connects the tree to something outside it that a kill of
 * the restored tree could not leave as it found it: a TCP connection (or
 * a network namespace), an external unix socket, an external resource.
 */
bool crs_criu_restore_reaches_out(const char *dir, const struct crs_meta *m);

/*
 * terminal_fd (-1: none) is the pty slave that stands in for the tree's
 * terminals dumped as external (tree-stdio.h); criu inherits it.
 */
pid_t crs_criu_restore_start(const char *dir, const char *workdir, const struct crs_meta *m,
			     bool lazy, const char *pre_resume, int terminal_fd, char *err,
			     size_t errlen);

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
 * (a CRIU plugin, usr/crs/gate/criu-gate.c: before CRIU looks at any
 * task), finish lets it go on and waits for it; cancel makes it give up.
 */
struct crs_criu_dump {
	pid_t child, pid;
	int gate_fd;		/* crdbg -> plugin: "go" */
	int status_fd;		/* plugin -> crdbg: "ready", "dumped" or "failed" */
	bool went;		/* "go" written: CRIU seizes the tree */
	bool exited;		/* criu reaped, its wait status in status */
	bool tmpfs_saved;	/* crs_criu_dump_save_tmpfs() ran */
	int status;
	char said[32];		/* the plugin's words not yet taken */
	char dir[PATH_MAX];
	char gatedir[PATH_MAX - 64];
};

int crs_criu_dump_start(pid_t pid, const char *dir, const struct crs_meta *m, bool leave_running,
			struct crs_criu_dump *d, char *err, size_t errlen);
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

/* First "Error" line of a CRIU log, for a one-line message. */
void crs_criu_log_error(const char *log, char *out, size_t len);

#endif /* CRDBG_CRS_CRIU_H */
