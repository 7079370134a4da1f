/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GDB/MI: a parser for GDB's machine interface output and a driver that
 * runs one `gdb --interpreter=mi3` with the inferior on a pty.
 *
 * Parser. MI output is line based (see "GDB/MI Output Syntax" in the GDB
 * manual):
 *
 *   [token] ^result-class {,name=value}         result record
 *   [token] *async-class {,name=value}          exec async  (*stopped, ...)
 *   [token] +async-class {,name=value}          status async
 *   [token] =async-class {,name=value}          notify async (=thread-created)
 *   ~"c-string"  @"c-string"  &"c-string"       console / target / log stream
 *   (gdb)                                       prompt
 *
 * A value is a c-string, a tuple {name=value,...} or a list [value,...] or
 * [name=value,...]. Values form a tree of struct mi_value: each node has a
 * name (NULL for the elements of a plain list), a kind and either a string
 * or a chain of children. A record owns all its values (one free call).
 *
 * Bounds: a line is at most MI_MAX_LINE bytes (longer ones are reported as
 * -E2BIG and skipped up to their newline), a record has at most
 * MI_MAX_VALUES values (-E2BIG), values nest at most MI_MAX_DEPTH deep;
 * anything else that does not match the grammar is -EBADMSG for that line
 * and the parser goes on with the next one. A record's memory is at most
 * about 3 x its line plus 64 bytes per value.
 *
 * Driver. mi_driver_start() spawns gdb on pipes with the inferior's
 * terminal on a new pty; every command gets a token and waits for the
 * result record with that token; async records are queued as events; the
 * program's output is read from the pty master. A GDB that dies makes
 * every pending and later call fail with -EPIPE; nothing waits forever
 * unless the caller passes timeout -1, and even then gdb's death ends the
 * wait. When the driver is freed, a program gdb started is killed (also
 * if gdb itself already died); one it attached to is detached. A driver
 * is used from one thread at a time.
 */
#ifndef CRDBG_GDBMI_H
#define CRDBG_GDBMI_H

#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MI_MAX_LINE	(4u << 20)	/* bytes in one MI line, newline excluded */
#define MI_MAX_DEPTH	64		/* nesting of tuples and lists */
#define MI_MAX_VALUES	(1u << 18)	/* values in one record (~16 MiB) */

enum mi_value_kind {
	MI_CONST,	/* c-string: str, len */
	MI_TUPLE,	/* {...}: children, each named */
	MI_LIST,	/* [...]: children, named or not */
};

struct mi_value {
	enum mi_value_kind kind;
	const char *name;	/* result name, or NULL in a plain list */
	const char *str;	/* MI_CONST: decoded, NUL terminated */
	size_t len;		/* MI_CONST: bytes in str (may hold NULs) */
	struct mi_value *child;	/* MI_TUPLE, MI_LIST: first child */
	struct mi_value *next;	/* next sibling */
	size_t count;		/* MI_TUPLE, MI_LIST: number of children */
};

enum mi_record_kind {
	MI_REC_RESULT,	/* ^ */
	MI_REC_EXEC,	/* * */
	MI_REC_STATUS,	/* + */
	MI_REC_NOTIFY,	/* = */
	MI_REC_CONSOLE,	/* ~ */
	MI_REC_TARGET,	/* @ */
	MI_REC_LOG,	/* & */
	MI_REC_PROMPT,	/* (gdb) */
};

enum mi_result_class {
	MI_RC_NONE,	/* not a result record */
	MI_RC_DONE,
	MI_RC_RUNNING,
	MI_RC_CONNECTED,
	MI_RC_ERROR,
	MI_RC_EXIT,
};

struct mi_arena;

struct mi_record {
	enum mi_record_kind kind;
	bool has_token;
	uint64_t token;
	enum mi_result_class rclass;	/* MI_REC_RESULT */
	const char *klass;		/* "done", "stopped", "thread-created" */
	struct mi_value *results;	/* tuple of the results (never NULL) */
	const char *text;		/* stream records: decoded text */
	size_t text_len;
	struct mi_arena *arena;		/* owns everything above */
};

/* Parse one complete line (without its newline; a trailing \r is ignored). */
int mi_parse_line(const char *line, size_t len, struct mi_record **ret_rec);
void mi_record_free(struct mi_record *rec);	/* accepts NULL */

/* Incremental parser: feed any byte chunks, take complete records out. */
struct mi_parser;

struct mi_parser *mi_parser_new(void);		/* NULL on ENOMEM */
void mi_parser_free(struct mi_parser *p);	/* accepts NULL */
/* Copies the bytes in; -ENOMEM only. */
int mi_parser_feed(struct mi_parser *p, const void *buf, size_t len);
/*
 * Next complete line: 1 and *ret_rec set, 0 when more input is needed,
 * or a negative errno for a bad line (-EBADMSG, -E2BIG, -ENOMEM) which is
 * consumed, so the next call continues after it.
 */
int mi_parser_next(struct mi_parser *p, struct mi_record **ret_rec);
/* Bytes of an unfinished line held (useful to tell a truncated stream). */
size_t mi_parser_pending(const struct mi_parser *p);

/*
 * Lookup. A path is names and indexes separated by dots:
 * "frame.line", "stack.0.frame.func", "threads.2.id". A numeric component
 * indexes the children of a tuple or list; a name finds the first child
 * with that name. NULL when there is no such value.
 */
const struct mi_value *mi_get(const struct mi_value *v, const char *path);
/* The string at path, or NULL if absent or not a c-string. */
const char *mi_get_str(const struct mi_value *v, const char *path);
/* Integer at path (decimal, or 0x hex): 0, -ENOENT, or -EINVAL. */
int mi_get_int(const struct mi_value *v, const char *path, long long *ret_val);
int mi_get_u64(const struct mi_value *v, const char *path, uint64_t *ret_val);

/*
 * Format a string as an MI c-string (with quotes) into buf, snprintf
 * style: returns the full length. For arguments of MI commands.
 */
size_t mi_quote(char *buf, size_t size, const char *s);

/* ------------------------------------------------------------------ */
/* Driver */

struct mi_driver;

struct mi_driver_opts {
	const char *gdb;		/* default "gdb" (or $CRDBG_GDB) */
	const char *program;		/* may be NULL (attach later) */
	const char *const *args;	/* program arguments, NULL terminated */
	int cmd_timeout_ms;		/* per command; 0: 30000; -1: none */
	bool no_pty;			/* inferior shares gdb's terminal */
	/*
	 * Inferior stdio on a FIFO instead of a pty (no terminal): CRIU can
	 * checkpoint and restore such a program, its output still comes here.
	 */
	bool fifo;
	/*
	 * gdb and its inferior in a new network namespace with only a
	 * loopback (root): a restored copy of the program can bind the
	 * ports the original had while the original's sockets linger.
	 */
	bool own_netns;
	/*
	 * gdb keeps the DWARF index of each library it reads in a directory
	 * private to this process, so that attaching to the program again
	 * (after a checkpoint or a restart) does not build it again.
	 */
	bool index_cache;
};

int mi_driver_start(const struct mi_driver_opts *opts, struct mi_driver **ret_d);
/* Ends gdb (and an inferior it started), reaps it. Accepts NULL. */
void mi_driver_free(struct mi_driver *d);

/* True while the gdb process is alive and its pipes open. */
bool mi_driver_alive(const struct mi_driver *d);
pid_t mi_driver_gdb_pid(const struct mi_driver *d);
/* Pid of the inferior from =thread-group-started, or 0. */
pid_t mi_driver_inferior_pid(const struct mi_driver *d);
/* The msg of the last ^error or a short description of the last failure. */
const char *mi_driver_error(const struct mi_driver *d);
/* Path of the pty slave the inferior gets ("" with no_pty). */
const char *mi_driver_tty(const struct mi_driver *d);

/*
 * Do I/O for at most timeout_ms (-1: until something happens, 0: no wait):
 * read gdb's output into records, the pty into the output buffer. Returns
 * 0, or -EPIPE once gdb is gone. For event loops: see mi_driver_pollfds().
 */
int mi_driver_pump(struct mi_driver *d, int timeout_ms);
/* Fill up to n pollfds the driver wants polled; returns how many. */
int mi_driver_pollfds(const struct mi_driver *d, struct pollfd *fds, int n);

/*
 * Send an MI command (printf format, without token or newline) and wait
 * for its result record. 0 with *ret_rec (may be NULL if not wanted) for
 * ^done, ^running, ^connected, ^exit; -EREMOTEIO for ^error (message in
 * mi_driver_error()); -ETIMEDOUT; -EPIPE when gdb died.
 */
int mi_driver_cmd(struct mi_driver *d, struct mi_record **ret_rec, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int mi_driver_vcmd(struct mi_driver *d, struct mi_record **ret_rec, const char *fmt, va_list ap);

/*
 * Asynchronous commands, for an event loop that cannot wait (the SDM
 * server): mi_driver_send() queues the command and gives its token; poll
 * mi_driver_pollfds(), call mi_driver_pump(d, 0) when one is ready, then
 * mi_driver_take_result(): 1 and *ret_rec (any result class, ^error
 * included: check rec->rclass), 0 while it has not come, -EPIPE if gdb
 * died first, -ENOENT for a token not sent (or already taken).
 * mi_driver_send() fails with -ENOBUFS while gdb is not reading.
 */
int mi_driver_send(struct mi_driver *d, uint64_t *ret_token, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int mi_driver_take_result(struct mi_driver *d, uint64_t token, struct mi_record **ret_rec);

/*
 * Next queued async record (exec, status, notify), waiting at most
 * timeout_ms (-1 forever). 1 with *ret_rec, 0 on timeout, -EPIPE.
 */
int mi_driver_next_event(struct mi_driver *d, int timeout_ms, struct mi_record **ret_rec);

/* Console stream text (~) gathered since the last call; caller frees. */
char *mi_driver_take_console(struct mi_driver *d);

/* Program I/O through the pty. */
/* Bytes of program output, waiting at most timeout_ms for the first: >0, 0 on timeout, -EPIPE. */
ssize_t mi_driver_read_output(struct mi_driver *d, void *buf, size_t size, int timeout_ms);
/* Write to the program's stdin (all of it, or an error). */
int mi_driver_write_input(struct mi_driver *d, const void *buf, size_t len);

/* ------------------------------------------------------------------ */
/* Typed API. Pointers into rec stay valid until its release. */

struct mi_frame {
	int level;
	uint64_t addr;
	const char *func;	/* "??" if unknown */
	const char *file;	/* may be NULL */
	const char *fullname;	/* may be NULL */
	int line;		/* 0 if unknown */
};

struct mi_stop {
	const char *reason;	/* "breakpoint-hit", "end-stepping-range", ... or "" */
	struct mi_frame frame;
	int thread_id;		/* 0 if not given */
	int bkptno;		/* breakpoint-hit: its number */
	bool exited;		/* exited, exited-normally, exited-signalled */
	int exit_code;		/* exited: code; exited-signalled: -1 */
	const char *signal;	/* signal-received, exited-signalled */
	struct mi_record *rec;	/* owns the strings */
};
void mi_stop_release(struct mi_stop *stop);

struct mi_breakpoint {
	int number;
	const char *func, *file;	/* several locations: the first with a line */
	int line;
	int nlocations;
	uint64_t addr;
	bool pending;			/* no location yet: waits for its library */
	struct mi_record *rec;
};
void mi_breakpoint_release(struct mi_breakpoint *bp);

struct mi_frames {
	size_t n;
	struct mi_frame *frames;	/* innermost first (level 0) */
	struct mi_record *rec;
};
void mi_frames_release(struct mi_frames *f);

struct mi_thread {
	int id;
	const char *target_id;	/* "Thread 0x... (LWP n)" */
	const char *name;	/* the thread's name (comm), NULL if gdb gave none */
	const char *state;	/* "stopped" or "running" */
	struct mi_frame frame;	/* when stopped */
};

struct mi_threads {
	size_t n;
	struct mi_thread *threads;
	int current;		/* current thread id, 0 if none */
	struct mi_record *rec;
};
void mi_threads_release(struct mi_threads *t);

/* ret_bp may be NULL. location as for gdb's break: "file.c:12", "func". */
int mi_break(struct mi_driver *d, const char *location, struct mi_breakpoint *ret_bp);
/*
 * mi_break(), but a location found nowhere yet (a function of a shared
 * library not loaded so far) is a pending breakpoint (ret_bp->pending),
 * which gdb resolves when a library that has it loads: -break-insert -f.
 */
int mi_break_pending(struct mi_driver *d, const char *location,
		     struct mi_breakpoint *ret_bp);
int mi_run(struct mi_driver *d);		/* -exec-run */
int mi_attach(struct mi_driver *d, pid_t pid);	/* -target-attach, waits for the stop */
/*
 * The same for an event loop that cannot wait (the SDM server, whose
 * gdbs attach side by side): mi_attach_send() sends -target-attach;
 * after pumping, mi_attach_result() is 1 once gdb answered ^done (the
 * *stopped that follows, or came first, is queued as an event), 0 while
 * it has not, -EREMOTEIO for ^error (mi_driver_error() says why),
 * -EPIPE if gdb died.
 */
int mi_attach_send(struct mi_driver *d, pid_t pid, uint64_t *ret_token);
int mi_attach_result(struct mi_driver *d, uint64_t token);
int mi_continue(struct mi_driver *d);
int mi_interrupt(struct mi_driver *d);
int mi_step(struct mi_driver *d);
int mi_next(struct mi_driver *d);
int mi_finish(struct mi_driver *d);
int mi_stepi(struct mi_driver *d);
int mi_nexti(struct mi_driver *d);
/* Value of expr as gdb prints it; *ret_value is malloc'd. */
int mi_print(struct mi_driver *d, const char *expr, char **ret_value);
/* max_depth 0: all frames. */
int mi_backtrace(struct mi_driver *d, int max_depth, struct mi_frames *ret);
int mi_thread_info(struct mi_driver *d, struct mi_threads *ret);
int mi_detach(struct mi_driver *d);

/*
 * Wait for the next *stopped (other async records are dropped, but
 * tracked: inferior pid, exits). 1 with *ret_stop, 0 on timeout, -EPIPE.
 */
int mi_wait_stop(struct mi_driver *d, int timeout_ms, struct mi_stop *ret_stop);
/* Fill a struct mi_stop from a *stopped record; takes ownership of rec. */
int mi_stop_from_record(struct mi_record *rec, struct mi_stop *ret_stop);

#endif /* CRDBG_GDBMI_H */
