/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the GDB/MI driver, shared by its files:
 *   mi-driver.c    the command channel: tokens, results, events, program I/O
 *   mi-pump.c      the I/O pump: gdb's pipes and the program's terminal
 *                  around one poll(), records parsed and sorted
 *   mi-spawn.c     starting gdb (pipes, pty or FIFOs, a network namespace),
 *                  ending and reaping it
 *   mi-commands.c  typed wrappers over the command channel
 * The public interface is <crdbg/gdbmi.h>.
 */
#ifndef CRDBG_MI_DRIVER_H
#define CRDBG_MI_DRIVER_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "crdbg/gdbmi.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define MI_MAX_EVENTS		4096		/* queued async records */
#define MI_MAX_CONSOLE		(1u << 20)	/* console text kept */
#define MI_MAX_OUTPUT		(1u << 20)	/* program output buffered */
#define MI_MAX_CMD		(64u << 10)	/* one command line */
#define MI_MAX_WBUF		(4 * MI_MAX_CMD) /* commands not yet written */
#define MI_MAX_PENDING		256		/* async commands awaiting a result */
#define MI_EXIT_WAIT_MS		3000		/* -gdb-exit, then SIGKILL */
#define MI_DEFAULT_TIMEOUT_MS	30000

struct mi_event {
	struct mi_record *rec;
	struct mi_event *next;
};

struct mi_driver {
	pid_t gdb_pid;
	int gdb_pidfd;
	int in_fd, out_fd, err_fd;	/* gdb's stdin, stdout, stderr */
	int pty_master, pty_slave;
	/*
	 * FIFO mode: d->tty is the program's stdout and stderr, read through
	 * pty_master; its stdin is a second FIFO, written through fifo_in
	 * (one FIFO for both would feed a program that reads stdin its own
	 * output, as mpirun does). We unlink both at the end.
	 */
	bool fifo;
	int fifo_in;
	char tty[88], tty_in[96];

	struct mi_parser *parser;
	uint64_t next_token, wait_token;
	struct mi_record *result;	/* result record for wait_token */

	struct mi_event *ev_head, **ev_tail;
	size_t ev_count, ev_dropped;

	char *console;
	size_t console_len;

	char *out;			/* program output, [out_start, out_len) */
	size_t out_start, out_len;

	char *wbuf;			/* command bytes not yet written */
	size_t wlen, woff;		/* [woff, wlen) still to write */

	struct {			/* mi_driver_send() commands */
		uint64_t token;
		struct mi_record *rec;	/* its result, once here */
	} pend[MI_MAX_PENDING];
	size_t npend;

	char errtail[512];		/* last bytes of gdb's stderr */
	char errmsg[512];
	size_t bad_lines;

	bool dead;
	int status;			/* gdb's wait status once reaped */
	bool reaped;
	int cmd_timeout_ms;

	pid_t inferior_pid;
	int inferior_pidfd;
	bool owns_inferior;		/* started by gdb, not attached to */
	bool attaching;			/* a -target-attach is under way */
	bool index_cache;		/* holds a reference to the index cache */
};

/* Time: deadline (-1: none) from a timeout, and what is left of it. */
int64_t mi_drv_deadline(int timeout_ms);
int mi_drv_remaining(int64_t deadline);
void mi_drv_set_error(struct mi_driver *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void mi_drv_close_fd(int *fd);

/* mi-spawn.c: the gdb process and the inferior it reports. */
int mi_drv_pidfd_open(pid_t pid);
void mi_drv_kill_gdb(struct mi_driver *d);
/* Wait at most timeout_ms (-1: for ever) for gdb to exit, then reap it. */
bool mi_drv_reap_gdb(struct mi_driver *d, int timeout_ms);
void mi_drv_forget_inferior(struct mi_driver *d);

/* This process's directory for gdb's index cache (mi-index-cache.c): made
 * at the first get (NULL if it cannot be), removed at the last put. */
const char *mi_drv_index_cache_get(void);
void mi_drv_index_cache_put(void);

/* mi-pump.c: one round of I/O (extra: one more fd to poll, or NULL). */
int mi_drv_pump(struct mi_driver *d, int timeout_ms, struct pollfd *extra);
void mi_drv_read_pty(struct mi_driver *d);
void mi_drv_write_gdb(struct mi_driver *d);
struct mi_record *mi_drv_pop_event(struct mi_driver *d);

#endif /* CRDBG_MI_DRIVER_H */
