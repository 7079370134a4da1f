// SPDX-License-Identifier: GPL-2.0
/*
 * The GDB backend: each SDM server drives one gdb (usr/gdbmi's MI driver)
 * for its process. Commands are text, one per SDM command; every command
 * gets exactly one reply (text; an error event for errors), so identical
 * replies from many servers aggregate in the tree.
 *
 *   load PROG[\x1fARG...]   start gdb on PROG (CRDBG_RANK=id in its env)
 *   attach PID PROG        start gdb on PROG and attach it to PID
 *   start WAIT             temporary breakpoint at main, run, wait for it
 *   exec WAIT KIND         KIND: continue, step, next, finish; the reply
 *                          is the stop, or "running" after WAIT ms
 *   wait WAIT              the current stop, or wait for one
 *   interrupt WAIT         stop a running program (reply: the stop)
 *   print EXPR             "EXPR = VALUE"
 *   break LOC              "breakpoint N at FILE:LINE"
 *   bt                     "#0  func at file:line" lines
 *   stack                  function names, outermost first, one a line
 *   status                 "STATE gdb=PID pid=PID WHERE[, pc 0xADDR]"
 *   cli CMD                any gdb console command; its console output
 *   input TEXT             TEXT and a newline to the program's stdin
 *
 * Stops are described as
 *   "stopped: breakpoint 1, main at prog.c:12"
 *   "stopped: end-stepping-range, main at prog.c:13"
 *   "stopped: signal SIGINT, pause"
 *   "exited: code 0"  /  "exited: signal SIGSEGV"
 * and, in the replies of start, exec, wait, interrupt and attach (not in
 * status), followed by the stop's fields for machines: \x1e, then
 * KEY=VALUE pairs separated by \x1f, from gdb's *stopped record (keys
 * reason, bkptno, signal, code, func, file, line, pc), e.g.
 *   "...main at prog.c:12\x1ereason=breakpoint-hit\x1fbkptno=1\x1ffunc=main
 *    \x1ffile=prog.c\x1fline=12\x1fpc=0x401136"
 * The console strips them from what it prints (and --json prints them).
 * The program's output (gdb's pty) is forwarded upstream through iof.h.
 * A gdb that dies makes the rank "lost": every later command answers
 * with an error saying so.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <crdbg/gdbmi.h>
#include "sdm/server.h"

#include "backends.h"

#define GDBB_CMD_MAX	4096
#define GDBB_ARGS_MAX	62
#define GDBB_WATCH_MAX	4
#define GDBB_REPLY_MAX	(60u << 10)
#define GDBB_START_MS	120000

enum gdbb_state {
	GDBB_EMPTY,	/* no gdb yet */
	GDBB_LOADED,	/* gdb up, program not started */
	GDBB_STOPPED,
	GDBB_RUNNING,
	GDBB_EXITED,
	GDBB_LOST,	/* gdb died */
};

static const char *const state_name[] = {
	[GDBB_EMPTY] = "empty", [GDBB_LOADED] = "loaded",
	[GDBB_STOPPED] = "stopped", [GDBB_RUNNING] = "running",
	[GDBB_EXITED] = "exited", [GDBB_LOST] = "lost",
};

struct gdbb {
	struct sdm_backend_host host;
	struct mi_driver *d;
	enum gdbb_state state;
	char where[512];	/* description of the last stop or exit */
	char info[512];		/* its fields: "\x1eKEY=VALUE\x1f..." */
	char lost[256];		/* why gdb is gone */
	pid_t gdb_pid, pid;
	uint64_t pc;		/* of the last stop */
	int watch[GDBB_WATCH_MAX];
	int nwatch;
	int out_pipe[2];	/* program output -> iof stdout handler */
	/* The run-control command waiting for a stop. */
	uint32_t pend_req;
	int pend_timer;
	bool in_drain;
};

static void reply(struct gdbb *g, uint32_t req, int error, const char *s)
{
	g->host.reply(g->host.arg, req, error, s, strlen(s));
}

static void replyf(struct gdbb *g, uint32_t req, int error, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void replyf(struct gdbb *g, uint32_t req, int error, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	reply(g, req, error, buf);
}

static void unwatch_all(struct gdbb *g)
{
	for (int i = 0; i < g->nwatch; i++)
		sdm_transport_unwatch_fd(g->host.engine, g->watch[i]);
	g->nwatch = 0;
}

/* Answer the waiting run-control command, if any. */
static void answer_pending(struct gdbb *g, int error, const char *s)
{
	uint32_t req = g->pend_req;

	if (!req)
		return;
	g->pend_req = 0;
	if (g->pend_timer > 0)
		sdm_transport_cancel_timer(g->host.engine, g->pend_timer);
	g->pend_timer = 0;
	reply(g, req, error, s);
}

static void mark_lost(struct gdbb *g)
{
	if (g->state == GDBB_LOST)
		return;
	snprintf(g->lost, sizeof(g->lost), "lost: %s",
		 g->d ? mi_driver_error(g->d) : "gdb is gone");
	g->state = GDBB_LOST;
	unwatch_all(g);
	answer_pending(g, 1, g->lost);
	/* Freeing the driver kills the program gdb started. */
	mi_driver_free(g->d);
	g->d = NULL;
}

static void describe_frame(char *buf, size_t size, const struct mi_frame *f)
{
	if (f->file && f->line)
		snprintf(buf, size, "%s at %s:%d", f->func, f->file, f->line);
	else
		snprintf(buf, size, "%s", f->func);
}

/* One KEY=VALUE field of g->info; control bytes of VALUE become '?'. */
static void info_add(struct gdbb *g, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void info_add(struct gdbb *g, const char *key, const char *fmt, ...)
{
	size_t len = strlen(g->info);
	char *p;
	va_list ap;

	if (len + strlen(key) + 3 >= sizeof(g->info))
		return;
	len += snprintf(g->info + len, sizeof(g->info) - len, "%c%s=",
			len ? '\x1f' : '\x1e', key);
	p = g->info + len;
	va_start(ap, fmt);
	vsnprintf(p, sizeof(g->info) - len, fmt, ap);
	va_end(ap);
	for (; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = '?';
}

static void info_frame(struct gdbb *g, const struct mi_frame *f)
{
	if (f->func && strcmp(f->func, "??"))
		info_add(g, "func", "%s", f->func);
	if (f->file)
		info_add(g, "file", "%s", f->file);
	if (f->line)
		info_add(g, "line", "%d", f->line);
	if (f->addr)
		info_add(g, "pc", "0x%llx", (unsigned long long)f->addr);
}

static void info_stop(struct gdbb *g, const struct mi_stop *st)
{
	g->info[0] = 0;
	if (st->reason[0])
		info_add(g, "reason", "%s", st->reason);
	if (st->bkptno && !strcmp(st->reason, "breakpoint-hit"))
		info_add(g, "bkptno", "%d", st->bkptno);
	if (st->signal)
		info_add(g, "signal", "%s", st->signal);
	if (st->exited && !st->signal)
		info_add(g, "code", "%d", st->exit_code);
	if (!st->exited)
		info_frame(g, &st->frame);
}

/* The last stop as a run command's reply: where, then its fields. */
static void reply_stop(struct gdbb *g, uint32_t req, bool pending)
{
	char buf[sizeof(g->where) + sizeof(g->info)];

	snprintf(buf, sizeof(buf), "%s%s", g->where, g->info);
	if (pending)
		answer_pending(g, 0, buf);
	else
		reply(g, req, 0, buf);
}

static void on_stop(struct gdbb *g, struct mi_record *rec)
{
	struct mi_stop st;
	char fr[400];

	mi_stop_from_record(rec, &st);
	info_stop(g, &st);
	if (st.exited) {
		g->state = GDBB_EXITED;
		if (st.signal)
			snprintf(g->where, sizeof(g->where), "exited: signal %s",
				 st.signal);
		else
			snprintf(g->where, sizeof(g->where), "exited: code %d",
				 st.exit_code);
	} else {
		g->state = GDBB_STOPPED;
		g->pc = st.frame.addr;
		describe_frame(fr, sizeof(fr), &st.frame);
		if (!strcmp(st.reason, "breakpoint-hit"))
			snprintf(g->where, sizeof(g->where),
				 "stopped: breakpoint %d, %s", st.bkptno, fr);
		else if (!strcmp(st.reason, "signal-received") && st.signal)
			snprintf(g->where, sizeof(g->where),
				 "stopped: signal %s, %s", st.signal, fr);
		else if (st.reason[0])
			snprintf(g->where, sizeof(g->where), "stopped: %s, %s",
				 st.reason, fr);
		else
			snprintf(g->where, sizeof(g->where), "stopped: %s", fr);
	}
	mi_stop_release(&st);
	reply_stop(g, 0, true);
}

static void forward_output(struct gdbb *g)
{
	char buf[4096];
	ssize_t n;

	while (g->d && (n = mi_driver_read_output(g->d, buf, sizeof(buf), 0)) > 0) {
		if (g->out_pipe[1] < 0)
			continue;
		/* Best effort: a full pipe drops output rather than block. */
		if (write(g->out_pipe[1], buf, n) < 0 && errno != EAGAIN)
			break;
		/*
		 * Send it up now, so it travels ahead of the reply that
		 * reports the stop or exit that followed it.
		 */
		while (sdm_iof_copy_stdout(g->out_pipe[0], SDM_IOF_UPSTREAM) > 0)
			;
	}
}

/* Process what gdb said: output, stops, exits, its death. */
static void drain(struct gdbb *g)
{
	struct mi_record *rec;
	int r;

	if (!g->d || g->in_drain)
		return;
	g->in_drain = true;
	mi_driver_pump(g->d, 0);
	forward_output(g);
	while ((r = mi_driver_next_event(g->d, 0, &rec)) > 0) {
		if (rec->kind == MI_REC_EXEC && !strcmp(rec->klass, "stopped")) {
			on_stop(g, rec);
			continue;
		}
		if (rec->kind == MI_REC_EXEC && !strcmp(rec->klass, "running"))
			g->state = GDBB_RUNNING;
		mi_record_free(rec);
	}
	if (mi_driver_inferior_pid(g->d))
		g->pid = mi_driver_inferior_pid(g->d);
	g->in_drain = false;
	if (r < 0 || !mi_driver_alive(g->d)) {
		forward_output(g);
		mark_lost(g);
	}
}

static void gdb_ready(void *arg, int fd, uint32_t events)
{
	(void)fd;
	(void)events;
	drain(arg);
}

static int watch_driver(struct gdbb *g)
{
	struct pollfd fds[GDBB_WATCH_MAX];
	int n = mi_driver_pollfds(g->d, fds, GDBB_WATCH_MAX);

	for (int i = 0; i < n; i++) {
		if (!(fds[i].events & POLLIN))
			continue;
		if (sdm_transport_watch_fd(g->host.engine, fds[i].fd, EPOLLIN,
					   gdb_ready, g) == 0)
			g->watch[g->nwatch++] = fds[i].fd;
	}
	return 0;
}

static void pend_timeout(void *arg)
{
	struct gdbb *g = arg;

	g->pend_timer = 0;
	drain(g);
	answer_pending(g, 0, "running");
}

/* Reply to req when the program stops, or "running" after wait_ms. */
static void pend(struct gdbb *g, uint32_t req, unsigned long wait_ms)
{
	answer_pending(g, 0, "running");
	g->pend_req = req;
	g->pend_timer = sdm_transport_add_timer(g->host.engine, (int)wait_ms,
						pend_timeout, g);
	drain(g);	/* the stop may already be queued */
}

/* After a failed driver call: an error reply, or "lost". */
static void fail(struct gdbb *g, uint32_t req, int err)
{
	if (err == -EPIPE || !mi_driver_alive(g->d)) {
		mark_lost(g);
		reply(g, req, 1, g->lost);
		return;
	}
	replyf(g, req, 1, "error: %s", mi_driver_error(g->d));
	drain(g);
}

static int do_load(struct gdbb *g, uint32_t req, char *spec)
{
	const char *args[GDBB_ARGS_MAX + 1];
	struct mi_driver_opts o = { 0 };
	char rank[16];
	char *prog = spec, *p;
	int n = 0, err;

	if (g->d) {
		reply(g, req, 1, "error: a program is already loaded");
		return 0;
	}
	for (p = strchr(spec, '\x1f'); p && n < GDBB_ARGS_MAX;
	     p = strchr(p, '\x1f')) {
		*p++ = 0;
		args[n++] = p;
	}
	args[n] = NULL;
	if (!*prog) {
		reply(g, req, 1, "error: no program");
		return 0;
	}
	snprintf(rank, sizeof(rank), "%u", g->host.id);
	setenv("CRDBG_RANK", rank, 1);
	o.program = prog;
	o.args = args;
	o.cmd_timeout_ms = GDBB_START_MS;
	/* Checkpointable (crdbg debug --preload): no terminal CRIU cannot dump. */
	o.fifo = getenv("CRDBG_DEBUG_PRELOAD") && *getenv("CRDBG_DEBUG_PRELOAD");
	err = mi_driver_start(&o, &g->d);
	if (err) {
		g->d = NULL;
		replyf(g, req, 1, "error: cannot start gdb: %s", strerror(-err));
		return 0;
	}
	g->gdb_pid = mi_driver_gdb_pid(g->d);
	g->state = GDBB_LOADED;
	watch_driver(g);
	/* crdbg debug --preload: only the program gets the library. */
	if (getenv("CRDBG_DEBUG_PRELOAD") && *getenv("CRDBG_DEBUG_PRELOAD"))
		mi_driver_cmd(g->d, NULL, "-interpreter-exec console \"set environment LD_PRELOAD %s\"",
			      getenv("CRDBG_DEBUG_PRELOAD"));
	reply(g, req, 0, "loaded");
	return 0;
}

/* "attach PID PROG": gdb on PROG attaches to the running PID. */
static int do_attach(struct gdbb *g, uint32_t req, const char *arg)
{
	struct mi_driver_opts o = { 0 };
	struct mi_frames fr;
	char fdesc[400];
	int pid = 0, used = 0, err;

	if (g->d) {
		reply(g, req, 1, "error: a program is already loaded");
		return 0;
	}
	if (sscanf(arg, "%d %n", &pid, &used) < 1 || pid <= 0 || !arg[used]) {
		reply(g, req, 1, "error: attach wants PID PROGRAM");
		return 0;
	}
	o.program = arg + used;
	o.cmd_timeout_ms = GDBB_START_MS;
	o.no_pty = true;
	err = mi_driver_start(&o, &g->d);
	if (err) {
		g->d = NULL;
		replyf(g, req, 1, "error: cannot start gdb: %s", strerror(-err));
		return 0;
	}
	g->gdb_pid = mi_driver_gdb_pid(g->d);
	g->state = GDBB_LOADED;
	watch_driver(g);
	err = mi_attach(g->d, pid);
	if (err) {
		fail(g, req, err);
		return 0;
	}
	g->pid = pid;
	g->state = GDBB_STOPPED;
	snprintf(g->where, sizeof(g->where), "stopped: attached");
	g->info[0] = 0;
	if (mi_backtrace(g->d, 1, &fr) == 0) {
		if (fr.n) {
			g->pc = fr.frames[0].addr;
			info_frame(g, &fr.frames[0]);
			describe_frame(fdesc, sizeof(fdesc), &fr.frames[0]);
			snprintf(g->where, sizeof(g->where),
				 "stopped: attached, %s", fdesc);
		}
		mi_frames_release(&fr);
	}
	reply_stop(g, req, false);
	drain(g);
	return 0;
}

static bool need_program(struct gdbb *g, uint32_t req)
{
	drain(g);
	if (g->state == GDBB_LOST) {
		reply(g, req, 1, g->lost);
		return false;
	}
	if (!g->d) {
		reply(g, req, 1, "error: no program loaded");
		return false;
	}
	return true;
}

static bool need_stopped(struct gdbb *g, uint32_t req)
{
	if (!need_program(g, req))
		return false;
	if (g->state == GDBB_STOPPED)
		return true;
	if (g->state == GDBB_RUNNING)
		reply(g, req, 1, "error: the program is running");
	else if (g->state == GDBB_EXITED)
		reply(g, req, 1, "error: the program is not being run");
	else
		reply(g, req, 1, "error: the program is not started");
	return false;
}

/* A run command was sent (err: how that went): the reply waits for the stop. */
static void running(struct gdbb *g, uint32_t req, unsigned long wait_ms, int err)
{
	if (err) {
		fail(g, req, err);
		return;
	}
	g->state = GDBB_RUNNING;
	pend(g, req, wait_ms);
}

static int do_start(struct gdbb *g, uint32_t req, unsigned long wait_ms)
{
	int err;

	if (!need_program(g, req))
		return 0;
	if (g->state != GDBB_LOADED) {
		reply(g, req, 1, "error: the program is already started");
		return 0;
	}
	err = mi_driver_cmd(g->d, NULL, "-break-insert -t main");
	if (!err)
		err = mi_driver_cmd(g->d, NULL, "-exec-run");
	running(g, req, wait_ms, err);
	return 0;
}

static int do_exec(struct gdbb *g, uint32_t req, unsigned long wait_ms,
		   const char *kind)
{
	static const char *const map[][2] = {
		{ "continue", "-exec-continue" }, { "step", "-exec-step" },
		{ "next", "-exec-next" }, { "finish", "-exec-finish" },
		{ "stepi", "-exec-step-instruction" },
		{ "nexti", "-exec-next-instruction" },
	};
	const char *mi = NULL;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(kind, map[i][0]))
			mi = map[i][1];
	if (!mi) {
		replyf(g, req, 1, "error: unknown run command '%.64s'", kind);
		return 0;
	}
	if (!need_stopped(g, req))
		return 0;
	running(g, req, wait_ms, mi_driver_cmd(g->d, NULL, "%s", mi));
	return 0;
}

static int do_wait(struct gdbb *g, uint32_t req, unsigned long wait_ms,
		   bool interrupt)
{
	int err;

	if (!need_program(g, req))
		return 0;
	switch (g->state) {
	case GDBB_LOST:
		reply(g, req, 1, g->lost);
		return 0;
	case GDBB_LOADED:
		reply(g, req, 0, "not started");
		return 0;
	case GDBB_RUNNING:
		break;
	default:
		reply_stop(g, req, false);
		return 0;
	}
	if (interrupt) {
		err = mi_driver_cmd(g->d, NULL, "-exec-interrupt");
		if (err) {
			fail(g, req, err);
			return 0;
		}
	}
	pend(g, req, wait_ms);
	return 0;
}

static int do_print(struct gdbb *g, uint32_t req, const char *expr)
{
	char *val = NULL;
	char *out;
	int err;

	if (!need_stopped(g, req))
		return 0;
	err = mi_print(g->d, expr, &val);
	if (err) {
		fail(g, req, err);
		return 0;
	}
	if (asprintf(&out, "%s = %s", expr, val) < 0) {
		free(val);
		return -ENOMEM;
	}
	reply(g, req, 0, out);
	free(out);
	free(val);
	drain(g);
	return 0;
}

static int do_break(struct gdbb *g, uint32_t req, const char *loc)
{
	struct mi_breakpoint bp;
	int err;

	if (!need_program(g, req))
		return 0;
	if (g->state == GDBB_RUNNING) {
		reply(g, req, 1, "error: the program is running");
		return 0;
	}
	err = mi_break(g->d, loc, &bp);
	if (err) {
		fail(g, req, err);
		return 0;
	}
	if (bp.file && bp.line && bp.nlocations > 1)
		replyf(g, req, 0, "breakpoint %d at %s:%d and %d more locations", bp.number,
		       bp.file, bp.line, bp.nlocations - 1);
	else if (bp.file && bp.line)
		replyf(g, req, 0, "breakpoint %d at %s:%d", bp.number, bp.file,
		       bp.line);
	else
		replyf(g, req, 0, "breakpoint %d (%s)", bp.number,
		       bp.func ? bp.func : loc);
	mi_breakpoint_release(&bp);
	return 0;
}

/* Append to a bounded reply buffer. */
static void cat(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void cat(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= size - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + n < size - 1 ? *len + n : size - 1;
}

static int do_frames(struct gdbb *g, uint32_t req, bool names_only)
{
	struct mi_frames fr;
	size_t len = 0;
	char *buf;
	int err;

	if (!need_stopped(g, req))
		return 0;
	err = mi_backtrace(g->d, 0, &fr);
	if (err) {
		fail(g, req, err);
		return 0;
	}
	buf = malloc(GDBB_REPLY_MAX);
	if (!buf) {
		mi_frames_release(&fr);
		return -ENOMEM;
	}
	buf[0] = 0;
	for (size_t i = 0; i < fr.n; i++) {
		const struct mi_frame *f;
		char d[400];

		if (names_only) {
			f = &fr.frames[fr.n - 1 - i];
			cat(buf, GDBB_REPLY_MAX, &len, "%s%s", i ? "\n" : "",
			    f->func);
		} else {
			f = &fr.frames[i];
			describe_frame(d, sizeof(d), f);
			cat(buf, GDBB_REPLY_MAX, &len, "%s#%-2d %s", i ? "\n" : "",
			    f->level, d);
		}
	}
	mi_frames_release(&fr);
	reply(g, req, 0, buf);
	free(buf);
	return 0;
}

static int do_status(struct gdbb *g, uint32_t req)
{
	drain(g);
	if (g->state == GDBB_LOST) {
		replyf(g, req, 0, "lost gdb=%d pid=%d %s", (int)g->gdb_pid,
		       (int)g->pid, g->lost + 6);
		return 0;
	}
	if (g->state == GDBB_STOPPED && g->pc)
		replyf(g, req, 0, "%s gdb=%d pid=%d %s, pc 0x%llx",
		       state_name[g->state], (int)g->gdb_pid, (int)g->pid,
		       g->where, (unsigned long long)g->pc);
	else
		replyf(g, req, 0, "%s gdb=%d pid=%d %s", state_name[g->state],
		       (int)g->gdb_pid, (int)g->pid,
		       g->state == GDBB_EXITED ? g->where : "");
	return 0;
}

static int do_cli(struct gdbb *g, uint32_t req, const char *cmd)
{
	char quoted[GDBB_CMD_MAX * 2 + 8];
	char *text;
	size_t n;
	int err;

	if (!need_program(g, req))
		return 0;
	mi_quote(quoted, sizeof(quoted), cmd);
	free(mi_driver_take_console(g->d));
	err = mi_driver_cmd(g->d, NULL, "-interpreter-exec console %s", quoted);
	if (err) {
		fail(g, req, err);
		return 0;
	}
	text = mi_driver_take_console(g->d);
	if (!text)
		return -ENOMEM;
	n = strlen(text);
	if (n > GDBB_REPLY_MAX)
		text[GDBB_REPLY_MAX] = 0;
	while (n && text[n - 1] == '\n')
		text[--n] = 0;
	reply(g, req, 0, text);
	free(text);
	drain(g);
	return 0;
}

/* "input TEXT": TEXT and a newline to the program's stdin (its pty). */
static int do_input(struct gdbb *g, uint32_t req, const char *text)
{
	char buf[GDBB_CMD_MAX + 2];
	int n, err;

	if (!need_program(g, req))
		return 0;
	n = snprintf(buf, sizeof(buf), "%s\n", text);
	err = mi_driver_write_input(g->d, buf, n);
	if (err == -ENOTTY) {
		reply(g, req, 1, "error: this program's stdin is not ours (attached)");
		return 0;
	}
	if (err) {
		fail(g, req, err);
		return 0;
	}
	reply(g, req, 0, "");
	return 0;
}

static int gdbb_command(void *priv, uint32_t req, const void *cmd, size_t len)
{
	struct gdbb *g = priv;
	char c[GDBB_CMD_MAX + 1], kind[32];
	unsigned long ms;
	int used = 0;

	if (len > GDBB_CMD_MAX || memchr(cmd, 0, len) || memchr(cmd, '\n', len)) {
		reply(g, req, 1, "error: malformed command");
		return 0;
	}
	memcpy(c, cmd, len);
	c[len] = 0;
	if (!strncmp(c, "load ", 5))
		return do_load(g, req, c + 5);
	if (!strncmp(c, "attach ", 7))
		return do_attach(g, req, c + 7);
	if (sscanf(c, "start %lu", &ms) == 1)
		return do_start(g, req, ms);
	if (sscanf(c, "exec %lu %31s", &ms, kind) == 2)
		return do_exec(g, req, ms, kind);
	if (sscanf(c, "wait %lu", &ms) == 1)
		return do_wait(g, req, ms, false);
	if (sscanf(c, "interrupt %lu", &ms) == 1)
		return do_wait(g, req, ms, true);
	if (sscanf(c, "print %n", &used) == 0 && used)
		return do_print(g, req, c + used);
	if (sscanf(c, "break %n", &used) == 0 && used)
		return do_break(g, req, c + used);
	if (!strcmp(c, "bt"))
		return do_frames(g, req, false);
	if (!strcmp(c, "stack"))
		return do_frames(g, req, true);
	if (!strcmp(c, "status"))
		return do_status(g, req);
	if (!strncmp(c, "cli ", 4))
		return do_cli(g, req, c + 4);
	if (!strncmp(c, "input ", 6))
		return do_input(g, req, c + 6);
	replyf(g, req, 1, "error: unknown command '%.64s'", c);
	return 0;
}

static int gdbb_start(const struct sdm_backend_host *host, const char *args,
		      void **ret_priv)
{
	struct gdbb *g = calloc(1, sizeof(*g));
	int rc;

	(void)args;
	if (!g)
		return -ENOMEM;
	g->host = *host;
	g->out_pipe[0] = g->out_pipe[1] = -1;
	/* The MI driver reaps gdb itself: children must not be auto-reaped. */
	signal(SIGCHLD, SIG_DFL);
	if (pipe2(g->out_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		free(g);
		return -errno;
	}
	rc = sdm_iof_set_stdout_handler(g->out_pipe[0], SDM_IOF_UPSTREAM, NULL);
	if (rc < 0) {
		close(g->out_pipe[0]);
		close(g->out_pipe[1]);
		free(g);
		return rc;
	}
	*ret_priv = g;
	return 0;
}

static void gdbb_stop(void *priv)
{
	struct gdbb *g = priv;

	unwatch_all(g);
	if (g->pend_timer > 0)
		sdm_transport_cancel_timer(g->host.engine, g->pend_timer);
	mi_driver_free(g->d);
	if (g->out_pipe[1] >= 0)
		close(g->out_pipe[1]);
	/* The read end belongs to iof now (sdm_iof_finalize closes it). */
	free(g);
}

const struct sdm_backend_ops crdbg_backend_gdb = {
	.name = "gdb",
	.help = "load PROG | attach PID PROG | start MS | exec MS continue|step|next|finish | "
		"wait MS | interrupt MS | print EXPR | break LOC | bt | stack | "
		"status | cli CMD | input TEXT",
	.start = gdbb_start,
	.command = gdbb_command,
	.stop = gdbb_stop,
};
