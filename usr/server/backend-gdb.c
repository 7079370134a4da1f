// SPDX-License-Identifier: GPL-2.0
/*
 * The GDB backend: an SDM server drives one gdb (usr/gdbmi's MI driver)
 * for each rank it owns (one server per node: the node's ranks, by their
 * node-local pids). A command for several ranks goes to each rank's gdb
 * in turn (struct gdbb is one rank). The commands it understands and the
 * replies it gives are the debugger protocol of <crdbg/dbgproto.h>,
 * parsed and formatted with libdbgproto: every rank gets exactly one
 * reply per command, so identical replies merge in the server and in
 * the tree. A rank's program output (gdb's pty, or FIFOs for a
 * checkpointable program) is forwarded upstream labelled with the rank.
 * A gdb that dies makes its rank "lost": every later command for it
 * answers with an error saying so.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <crdbg/dbgproto.h>
#include <crdbg/gdbmi.h>
#include <crdbg/symbolize.h>
#include "sdm/server.h"

#include "backends.h"
#include "hook-park.h"
#include "mpi-view.h"
#include "part-run.h"

#define GDBB_WATCH_MAX	4
#define GDBB_REPLY_MAX	(60u << 10)
#define GDBB_START_MS	120000

enum gdbb_state {
	GDBB_EMPTY,	/* no gdb yet */
	GDBB_LOADED,	/* gdb up, program not started */
	GDBB_ATTACHING,	/* -target-attach sent, its stop not reported yet */
	GDBB_STOPPED,
	GDBB_RUNNING,
	GDBB_EXITED,
	GDBB_LOST,	/* gdb died */
};

static const char *const state_name[] = {
	[GDBB_EMPTY] = "empty", [GDBB_LOADED] = "loaded", [GDBB_ATTACHING] = "attaching",
	[GDBB_STOPPED] = "stopped", [GDBB_RUNNING] = "running",
	[GDBB_EXITED] = "exited", [GDBB_LOST] = "lost",
};

/* One rank and its gdb. */
struct gdbb {
	struct sdm_backend_host host;	/* host.id: the rank */
	struct sdm_idset *me;		/* {rank}: what its replies speak for */
	struct mi_driver *d;
	enum gdbb_state state;
	char where[512];	/* description of the last stop or exit */
	char info[512];		/* its fields: "\x1eKEY=VALUE\x1f..." */
	char lost[256];		/* why gdb is gone */
	pid_t gdb_pid, pid;
	uint64_t pc;		/* of the last stop */
	int watch[GDBB_WATCH_MAX];
	int nwatch;
	/* The run-control command waiting for a stop. */
	uint32_t pend_req;
	int pend_timer;
	bool in_drain;
	/* The attach under way (GDBB_ATTACHING): its request, gdb's parts. */
	uint32_t attach_req;
	uint64_t attach_token;
	int attach_timer;
	uint32_t attach_ms;	/* how long gdb may take to attach */
	int attach_pidfd;	/* the process attached to, while attaching */
	bool attach_answered, attach_stopped;
	int exit_bp;		/* gdb's number of the exit point; 0: none */
	bool hold_exits;	/* the last run command's "hold" */
	bool exit_held;		/* stopped at the exit point: "exited" to status */
	struct mpiv mpi;	/* the rank's MPI state (libcrdbg-mpi) */
	struct part_rank *parts;	/* its job checkpoint parts, made at the first */
};

/* The backend of one server: its ranks, each made at its first command. */
struct gdbs {
	struct sdm_backend_host host;	/* host.id: the server */
	uint32_t attach_ms;		/* each rank's attach timeout */
	struct gdbb **rank;
	unsigned int nrank;
};

static void reply(struct gdbb *g, uint32_t req, int error, const char *s)
{
	g->host.reply(g->host.arg, req, g->me, error, s, strlen(s));
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

/* The attach under way is over: its request, if still waiting, and timer. */
static uint32_t attach_over(struct gdbb *g)
{
	uint32_t req = g->attach_req;

	g->attach_req = 0;
	if (g->attach_timer > 0)
		sdm_transport_cancel_timer(g->host.engine, g->attach_timer);
	g->attach_timer = 0;
	if (g->attach_pidfd >= 0)
		close(g->attach_pidfd);
	g->attach_pidfd = -1;
	return req;
}

/*
 * The rank's gdb is gone, or given up on: why (NULL: the driver's last
 * error) answers whatever waits on it. gdb is ended; if it was attaching,
 * the SIGSTOP its PTRACE_ATTACH queued outlives it (a process that cannot
 * stop yet, say in vfork(), would take it later and stop for good): a
 * SIGCONT discards it, so the process runs on as it did before.
 */
static void mark_lost_because(struct gdbb *g, const char *why)
{
	bool attaching = g->state == GDBB_ATTACHING;
	int pidfd = g->attach_pidfd;
	uint32_t attach_req;

	if (g->state == GDBB_LOST)
		return;
	snprintf(g->lost, sizeof(g->lost), DBGP_LOST "%s",
		 why ? why : g->d ? mi_driver_error(g->d) : "gdb is gone");
	g->state = GDBB_LOST;
	unwatch_all(g);
	answer_pending(g, 1, g->lost);
	g->attach_pidfd = -1;		/* ours until gdb has gone */
	attach_req = attach_over(g);
	if (attach_req)
		reply(g, attach_req, 1, g->lost);
	/* Freeing the driver kills the program gdb started. */
	mi_driver_free(g->d);
	g->d = NULL;
	if (pidfd >= 0) {
		if (attaching)
			syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0);
		close(pidfd);
	}
}

static void mark_lost(struct gdbb *g)
{
	mark_lost_because(g, NULL);
}

/*
 * A frame's function for stops, bt and stack: gdb's, or where gdb has none (a
 * stripped object: "??") the address as "symbol+0xOFF" from the object's
 * dynamic symbols, else "object+0xOFF" (its file offset), as STAT shows
 * it. The server runs on the rank's node: its /proc is the rank's.
 */
static const char *frame_func(const struct gdbb *g, const struct mi_frame *f, char *buf,
			      size_t size)
{
	const char *base;

	if (f->func && strcmp(f->func, "??"))
		return f->func;
	if (!g->pid || !f->addr || freeze_sym_describe(g->pid, f->addr, buf, size))
		return "??";
	/* the object's name without its directory */
	base = strrchr(buf, '/');
	if (base && !strchr(base, ' '))
		memmove(buf, base + 1, strlen(base));
	return buf;
}

static void describe_frame(char *buf, size_t size, const struct mi_frame *f)
{
	dbgp_frame_text(buf, size, f->func, f->file, f->line);
}

/* Where the program stopped (g->where) and the stop's fields (g->info). */
static void describe_stop(struct gdbb *g, const struct dbgp_stop *st)
{
	dbgp_stop_text(g->where, sizeof(g->where), st);
	dbgp_stop_fields(g->info, sizeof(g->info), st);
}

static void stop_at_frame(struct dbgp_stop *st, const struct mi_frame *f)
{
	st->func = f->func;
	st->file = f->file;
	st->line = f->line;
	st->pc = f->addr;
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

/*
 * MPI calls are atomic for the user: a rank stopped inside one is shown
 * at the user's frame that made the call (selected, so that print sees
 * its variables), unless MPI's frames are asked for. fr keeps the
 * strings ds then points to; call gets the MPI call's name ("" if none).
 */
static void mpi_user_stop(struct gdbb *g, struct dbgp_stop *ds,
			  struct mi_frames *fr, char *call, size_t size)
{
	struct crdbg_mpi_state st;
	int k;

	call[0] = 0;
	if (g->mpi.show_lib || mpiv_read(&g->mpi, g->d, g->pid, true, &st) ||
	    st.kind == CRDBG_MPI_OUT)
		return;
	/* MPI is called from the main thread (libcrdbg-mpi's limit). */
	if (mi_driver_cmd(g->d, NULL, "-thread-select 1") ||
	    mi_backtrace(g->d, 0, fr))
		return;
	k = mpiv_user_frame(&st, fr);
	if (k < 0)
		return;
	mi_driver_cmd(g->d, NULL, "-stack-select-frame %d", k);
	stop_at_frame(ds, &fr->frames[k]);
	snprintf(call, size, "%.*s", (int)sizeof(st.call), st.call);
}

/* " (in MPI_Recv)" after the stop's text, before its fields. */
static void add_call(struct gdbb *g, const char *call)
{
	size_t n = strlen(g->where);

	if (*call)
		snprintf(g->where + n, sizeof(g->where) - n, " (in %s)", call);
}

/*
 * What gdb adds to some stops: a watchpoint's number, expression and
 * values (wpt, or hw-rwpt / hw-awpt for read and access ones, and
 * value={old,new} or value={value}), a finish's return-value.
 */
static void stop_values(struct dbgp_stop *ds, const struct mi_value *r)
{
	static const char *const wpt[] = { "wpt", "hw-rwpt", "hw-awpt" };
	const struct mi_value *v = mi_get(r, "value");
	long long num;

	for (size_t i = 0; i < sizeof(wpt) / sizeof(wpt[0]); i++) {
		const struct mi_value *w = mi_get(r, wpt[i]);

		if (!w || mi_get_int(w, "number", &num) || num <= 0 || num > INT32_MAX)
			continue;
		ds->bkptno = num;
		ds->wpt_exp = mi_get_str(w, "exp");
	}
	if (v) {
		ds->old_value = mi_get_str(v, "old");
		ds->new_value = mi_get_str(v, "new");
		if (!ds->new_value)
			ds->new_value = mi_get_str(v, "value");
	}
	ds->return_value = mi_get_str(r, "return-value");
}

/*
 * The exit point, for the console's "hold": a breakpoint in the C
 * library's _exit, which every exit() and return from main reaches
 * before the exit_group system call, so that a rank ending with a code
 * other than 0 can be held before its parent, the launcher, learns of
 * it (Open MPI's mpirun then ends the other ranks: SIGTERM a second
 * later). The code is _exit's first argument; gdb tests it itself, so
 * an exit with 0 never stops. Pending until the C library is loaded.
 */
#if defined(__x86_64__)
#define EXIT_CODE_REG	"$rdi"
#elif defined(__aarch64__)
#define EXIT_CODE_REG	"$x0"
#elif defined(__riscv)
#define EXIT_CODE_REG	"$a0"
#elif defined(__powerpc64__)
#define EXIT_CODE_REG	"$r3"
#elif defined(__s390x__)
#define EXIT_CODE_REG	"$r2"
#endif

static void set_exit_point(struct gdbb *g)
{
#ifdef EXIT_CODE_REG
	struct mi_record *rec;
	long long n;

	if (mi_driver_cmd(g->d, &rec, "-break-insert --language c -f -c \"(int)%s != 0\" _exit",
			  EXIT_CODE_REG))
		return;		/* exits are then never held */
	if (!mi_get_int(mi_get(rec->results, "bkpt"), "number", &n) && n > 0 &&
	    n <= INT32_MAX)
		g->exit_bp = n;
	mi_record_free(rec);
#else
	(void)g;
#endif
}

/*
 * A stop at the exit point: held there (true, ds describes the exit to
 * come), or on its way out again (false) when the run command did not
 * ask to hold exits.
 */
static bool exit_point_stop(struct gdbb *g, struct dbgp_stop *ds)
{
#ifdef EXIT_CODE_REG
	char *code = NULL;

	if (!g->hold_exits && mi_continue(g->d) == 0)
		return false;
	ds->exited = true;
	ds->held = true;
	ds->reason = "exited";	/* gdb's, for an exit with a code */
	if (mi_print(g->d, "(int)" EXIT_CODE_REG, &code) == 0)
		ds->exit_code = atoi(code);
	free(code);
	return true;
#else
	(void)g;
	(void)ds;
	return false;
#endif
}

/*
 * The live rank's stop ds (at frame f, NULL when gdb gave none) in the
 * user's terms (mpi_user_stop()), with what gdb added to it (results,
 * NULL for none): g->where and g->info, " (in MPI_x)", and g->pc.
 */
static void describe_user_stop(struct gdbb *g, struct dbgp_stop *ds, const struct mi_frame *f,
			       const struct mi_value *results)
{
	struct mi_frames user = { 0 };
	char call[CRDBG_MPI_CALL_MAX + 1] = "", name[320];

	if (f) {
		stop_at_frame(ds, f);
		ds->func = frame_func(g, f, name, sizeof(name));
	}
	mpi_user_stop(g, ds, &user, call, sizeof(call));
	g->pc = ds->pc;
	if (results)
		stop_values(ds, results);
	describe_stop(g, ds);
	add_call(g, call);
	if (user.rec)
		mi_frames_release(&user);
}

/* A PLT stub's name as gdb gives it: "f@plt", in a location "<f@plt+4>". */
static bool is_plt(const char *name)
{
	const char *p = name ? strstr(name, "@plt") : NULL;

	return p && (!p[4] || p[4] == '>' || p[4] == '+');
}

/*
 * A stop at a breakpoint's @plt stub. A pending breakpoint that gdb
 * resolves in a stripped library can get a location in the library's
 * PLT beside the function's (liblammps calls its own exported functions
 * through its PLT), and every call would stop twice. Where the
 * breakpoint also has a location that is no stub, the stub's are
 * disabled and the rank goes on to the function: true, no stop.
 */
static bool skip_plt_stop(struct gdbb *g, const struct mi_stop *st)
{
	const struct mi_value *v, *l;
	struct mi_record *rec;
	bool real = false;

	if (st->bkptno <= 0 || st->bkptno == g->exit_bp || !is_plt(st->frame.func) ||
	    strcmp(st->reason, "breakpoint-hit") ||
	    mi_driver_cmd(g->d, &rec, "-break-info %d", st->bkptno))
		return false;
	v = mi_get(rec->results, "BreakpointTable.body");
	v = v && v->kind == MI_LIST ? mi_get(v->child, "locations") : NULL;
	l = v && v->kind == MI_LIST ? v->child : NULL;
	for (; l; l = l->next) {
		const char *at = mi_get_str(l, "at") ?: mi_get_str(l, "func");

		real |= at && !is_plt(at);
	}
	for (l = real ? v->child : NULL; l; l = l->next) {
		const char *at = mi_get_str(l, "at") ?: mi_get_str(l, "func");
		const char *num = mi_get_str(l, "number");

		if (is_plt(at) && num)
			mi_driver_cmd(g->d, NULL, "-break-disable %s", num);
	}
	mi_record_free(rec);
	return real && mi_continue(g->d) == 0;
}

static void on_stop(struct gdbb *g, struct mi_record *rec)
{
	struct dbgp_stop ds = { 0 };
	struct mi_stop st;

	mi_stop_from_record(rec, &st);
	if (!st.exited && skip_plt_stop(g, &st)) {
		mi_stop_release(&st);
		return;		/* the function's own location is the next stop */
	}
	if (!st.exited && g->exit_bp && st.bkptno == g->exit_bp &&
	    !strcmp(st.reason, "breakpoint-hit")) {
		if (!exit_point_stop(g, &ds)) {
			mi_stop_release(&st);
			return;		/* its exit is the next stop */
		}
		/* Stopped in gdb, "exited" for the console: exec continue ends it. */
		describe_stop(g, &ds);
		g->state = GDBB_STOPPED;
		g->exit_held = true;
		mi_stop_release(&st);
		reply_stop(g, 0, true);
		return;
	}
	if (!st.exited)
		mpiv_stopped(&g->mpi, g->d, st.bkptno);
	ds.exited = st.exited;
	ds.reason = st.reason;
	ds.bkptno = st.bkptno;
	ds.signal = st.signal;
	ds.exit_code = st.exit_code;
	if (st.exited) {
		stop_values(&ds, rec->results);
		describe_stop(g, &ds);
	} else {
		describe_user_stop(g, &ds, &st.frame, rec->results);
	}
	g->state = st.exited ? GDBB_EXITED : GDBB_STOPPED;
	mi_stop_release(&st);
	reply_stop(g, 0, true);
}

static void forward_output(struct gdbb *g)
{
	char buf[4096];
	ssize_t n;

	/*
	 * Sent up at once, labelled with the rank, so that it travels ahead
	 * of the reply that reports the stop or exit that followed it.
	 */
	while (g->d && (n = mi_driver_read_output(g->d, buf, sizeof(buf), 0)) > 0)
		g->host.output(g->host.arg, g->host.id, SDM_IOF_STDOUT, buf, n);
}

static bool attach_progress(struct gdbb *g);

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
	do {
		while ((r = mi_driver_next_event(g->d, 0, &rec)) > 0) {
			bool stop = rec->kind == MI_REC_EXEC &&
				    !strcmp(rec->klass, "stopped");

			if (stop && g->state == GDBB_ATTACHING) {
				g->attach_stopped = true;	/* the attach's */
				mi_record_free(rec);
				continue;
			}
			if (stop) {
				on_stop(g, rec);
				continue;
			}
			/* An attach reports each new thread "running" first. */
			if (rec->kind == MI_REC_EXEC && !strcmp(rec->klass, "running") &&
			    g->state != GDBB_ATTACHING)
				g->state = GDBB_RUNNING;
			mi_record_free(rec);
		}
		/* An attach completed: what came during its last commands. */
	} while (r == 0 && attach_progress(g));
	if (!g->d) {		/* lost while attaching */
		g->in_drain = false;
		return;
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
	answer_pending(g, 0, DBGP_RUNNING);
}

/* Reply to req when the program stops, or "running" after wait_ms. */
static void pend(struct gdbb *g, uint32_t req, unsigned long wait_ms)
{
	answer_pending(g, 0, DBGP_RUNNING);
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
	replyf(g, req, 1, DBGP_ERROR "%s", mi_driver_error(g->d));
	drain(g);
}

/* gdb up and watched; false (and the reply sent) if it did not start. */
static bool start_gdb(struct gdbb *g, uint32_t req, const struct mi_driver_opts *o)
{
	int err = mi_driver_start(o, &g->d);

	if (err) {
		g->d = NULL;
		replyf(g, req, 1, DBGP_ERROR "cannot start gdb: %s", strerror(-err));
		return false;
	}
	g->gdb_pid = mi_driver_gdb_pid(g->d);
	g->state = GDBB_LOADED;
	watch_driver(g);
	return true;
}

static int do_load(struct gdbb *g, uint32_t req, const struct dbgp_cmd *c)
{
	const char *args[DBGP_ARGS_MAX + 1];
	struct mi_driver_opts o = { 0 };
	char rank[16];

	if (g->d) {
		reply(g, req, 1, DBGP_ERROR "a program is already loaded");
		return 0;
	}
	dbgp_split_load((char *)c->arg, args, DBGP_ARGS_MAX);
	snprintf(rank, sizeof(rank), "%u", g->host.id);
	setenv("CRDBG_RANK", rank, 1);
	o.program = c->arg;
	o.args = args;
	o.cmd_timeout_ms = GDBB_START_MS;
	o.index_cache = true;
	/* Checkpointable (preload=): no terminal CRIU cannot dump. */
	o.fifo = c->preload != NULL;
	if (!start_gdb(g, req, &o))
		return 0;
	/* Only the program gets the library, not gdb or its shell. */
	if (c->preload)
		mi_driver_cmd(g->d, NULL, "-interpreter-exec console \"set environment LD_PRELOAD %s\"",
			      c->preload);
	reply(g, req, 0, DBGP_LOADED);
	return 0;
}

/*
 * The rank stopped under a gdb that attached to it (the server's attach,
 * or the console's around a checkpoint): where it is, as its stop.
 */
static void stopped_attached(struct gdbb *g)
{
	struct dbgp_stop ds = { .attached = true };
	struct mi_frames fr;

	g->state = GDBB_STOPPED;
	if (mi_backtrace(g->d, 1, &fr) == 0) {
		describe_user_stop(g, &ds, fr.n ? &fr.frames[0] : NULL, NULL);
		mi_frames_release(&fr);
	} else {
		describe_stop(g, &ds);
	}
}

/* The rank stopped by its attach: where, in the user's terms, as the reply. */
static void attach_done(struct gdbb *g)
{
	uint32_t req = attach_over(g);

	stopped_attached(g);
	reply_stop(g, req, false);
}

/*
 * Where the attach under way is (from drain()): true once it completed,
 * gdb's ^done and the stop after it both in; a failure is the reply.
 */
static bool attach_progress(struct gdbb *g)
{
	int r;

	if (g->state != GDBB_ATTACHING)
		return false;
	if (!g->attach_answered) {
		r = mi_attach_result(g->d, g->attach_token);
		if (r < 0) {
			g->state = GDBB_LOADED;
			fail(g, attach_over(g), r);
			return false;
		}
		g->attach_answered = r > 0;
	}
	if (!g->attach_answered || !g->attach_stopped)
		return false;
	attach_done(g);
	return true;
}

static void attach_timeout(void *arg)
{
	struct gdbb *g = arg;
	char why[64];

	g->attach_timer = 0;
	drain(g);
	if (g->state != GDBB_ATTACHING)
		return;
	/* gdb, still busy with it, is ended: the rank is lost */
	snprintf(why, sizeof(why), "gdb did not attach within %u s", g->attach_ms / 1000);
	mark_lost_because(g, why);
}

/*
 * "attach PID PROG": gdb on PROG attaches to the running PID. Only sent
 * here: the reply goes when gdb has attached and the rank stopped
 * (attach_progress()), so that the server's other ranks and the servers
 * below it in the tree do not wait for this one. A gdb attaching to a
 * rank inside MPI_Init reads the symbols of every library it loaded: a
 * node's ranks attach side by side, not one after another.
 */
static int do_attach(struct gdbb *g, uint32_t req, int pid, const char *prog)
{
	struct mi_driver_opts o = { 0 };
	int err;

	if (g->d) {
		reply(g, req, 1, DBGP_ERROR "a program is already loaded");
		return 0;
	}
	o.program = prog;
	o.cmd_timeout_ms = GDBB_START_MS;
	o.index_cache = true;
	o.no_pty = true;
	if (!start_gdb(g, req, &o))
		return 0;
	set_exit_point(g);
	err = mi_attach_send(g->d, pid, &g->attach_token);
	if (err) {
		fail(g, req, err);
		return 0;
	}
	g->pid = pid;
	g->state = GDBB_ATTACHING;
	g->exit_held = false;
	g->attach_req = req;
	g->attach_answered = g->attach_stopped = false;
	g->attach_pidfd = syscall(SYS_pidfd_open, pid, 0);
	g->attach_timer = sdm_transport_add_timer(g->host.engine, g->attach_ms,
						  attach_timeout, g);
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
		reply(g, req, 1, DBGP_ERROR "no program loaded");
		return false;
	}
	if (g->state == GDBB_ATTACHING) {
		reply(g, req, 1, DBGP_ERROR "gdb is still attaching to the program");
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
		reply(g, req, 1, DBGP_ERROR "the program is running");
	else if (g->state == GDBB_EXITED)
		reply(g, req, 1, DBGP_ERROR "the program is not being run");
	else
		reply(g, req, 1, DBGP_ERROR "the program is not started");
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
	g->exit_held = false;
	pend(g, req, wait_ms);
}

static int do_start(struct gdbb *g, uint32_t req, unsigned long wait_ms)
{
	bool first = false;
	int err;

	if (!need_program(g, req))
		return 0;
	if (g->state != GDBB_LOADED) {
		reply(g, req, 1, DBGP_ERROR "the program is already started");
		return 0;
	}
	/*
	 * main's is gdb's breakpoint 1 (dbg_bp_note_start() counts on it). A
	 * stripped program has no main gdb can find (Debian's lmp): its 1 is
	 * then a pending one, and the program stops at its first instruction,
	 * its libraries not loaded yet (their breakpoints pending).
	 */
	err = mi_driver_cmd(g->d, NULL, "-break-insert -t main");
	if (err == -EREMOTEIO)
		first = !(err = mi_driver_cmd(g->d, NULL, "-break-insert -t -f main"));
	if (!err)
		set_exit_point(g);
	if (!err)
		err = first ? mi_driver_cmd(g->d, NULL, "-interpreter-exec console starti") :
			      mi_run(g->d);
	running(g, req, wait_ms, err);
	return 0;
}

/* until [LOC], advance LOC: gdb's commands, whose stops come as any other. */
static int run_to(struct gdbb *g, enum dbgp_exec kind, const char *loc)
{
	char cmd[DBGP_CMD_MAX + 16], quoted[2 * DBGP_CMD_MAX + 32];

	snprintf(cmd, sizeof(cmd), "%s%s%s", kind == DBGP_EXEC_UNTIL ? "until" : "advance",
		 *loc ? " " : "", loc);
	mi_quote(quoted, sizeof(quoted), cmd);
	return mi_driver_cmd(g->d, NULL, "-interpreter-exec console %s", quoted);
}

static int do_exec(struct gdbb *g, uint32_t req, unsigned long wait_ms,
		   enum dbgp_exec kind, const char *loc)
{
	static int (*const run[__DBGP_EXEC_LAST])(struct mi_driver *) = {
		[DBGP_EXEC_CONTINUE] = mi_continue,
		[DBGP_EXEC_STEP] = mi_step,
		[DBGP_EXEC_NEXT] = mi_next,
		[DBGP_EXEC_FINISH] = mi_finish,
		[DBGP_EXEC_STEPI] = mi_stepi,
		[DBGP_EXEC_NEXTI] = mi_nexti,
	};

	int err;

	if (!need_stopped(g, req))
		return 0;
	if (kind == DBGP_EXEC_MPI_RETURN) {
		err = mpiv_return(&g->mpi, g->d, g->pid);
		if (err == -EINVAL || err == -ENOENT) {
			reply(g, req, 1, DBGP_ERROR "not in an MPI call");
			return 0;
		}
	} else if (kind == DBGP_EXEC_UNTIL || kind == DBGP_EXEC_ADVANCE) {
		err = run_to(g, kind, loc);
	} else {
		err = run[kind](g->d);
	}
	running(g, req, wait_ms, err);
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
		reply(g, req, 0, DBGP_NOT_STARTED);
		return 0;
	case GDBB_RUNNING:
		break;
	default:
		reply_stop(g, req, false);
		return 0;
	}
	if (interrupt) {
		err = mi_interrupt(g->d);
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

/* LOC is FILE:LINE, nothing more (no *ADDR, function or condition). */
static bool is_file_line(const char *loc)
{
	const char *colon = strrchr(loc, ':');

	if (!colon || colon == loc || !colon[1] || strpbrk(loc, " \t*"))
		return false;
	return strspn(colon + 1, "0123456789") == strlen(colon + 1);
}

/*
 * A FILE:LINE breakpoint of a live, stopped program (its addresses
 * relocated) found at exactly one address is pinned there: bp becomes a
 * breakpoint on *ADDR and the linespec one is deleted. gdb re-resolves a
 * linespec at every shared object the program loads afterwards, matching
 * FILE against every compilation unit of every library with debug info
 * (libc6-dbg's): through MPI_Init's 68 objects that is a third of each
 * gdb's CPU time (Documentation/performance.md). The price: a library
 * loaded later with a source file of the same name and line does not get
 * the breakpoint too. Any failure keeps the linespec breakpoint.
 */
static void pin_file_line(struct gdbb *g, const char *loc, struct mi_breakpoint *bp)
{
	struct mi_breakpoint pinned;
	char at[32];

	if (g->state != GDBB_STOPPED || !g->pid || !is_file_line(loc) ||
	    bp->nlocations != 1 || !bp->addr || !bp->file || !bp->line)
		return;
	snprintf(at, sizeof(at), "*0x%" PRIx64, bp->addr);
	if (mi_break(g->d, at, &pinned))
		return;
	if (pinned.addr != bp->addr ||
	    mi_driver_cmd(g->d, NULL, "-break-delete %d", bp->number)) {
		mi_driver_cmd(g->d, NULL, "-break-delete %d", pinned.number);
		mi_breakpoint_release(&pinned);
		return;
	}
	bp->number = pinned.number;
	mi_breakpoint_release(&pinned);
}

static int do_break(struct gdbb *g, uint32_t req, const char *loc)
{
	struct mi_breakpoint bp;
	int err;

	if (!need_program(g, req))
		return 0;
	if (g->state == GDBB_RUNNING) {
		reply(g, req, 1, DBGP_ERROR "the program is running");
		return 0;
	}
	/* Pending, not an error, where no library loaded so far has LOC. */
	err = mi_break_pending(g->d, loc, &bp);
	if (err) {
		fail(g, req, err);
		return 0;
	}
	pin_file_line(g, loc, &bp);
	if (bp.pending)
		replyf(g, req, 0, "breakpoint %d (%s) " DBGP_BREAK_PENDING, bp.number, loc);
	else if (bp.file && bp.line && bp.nlocations > 1)
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

/* How many innermost frames are MPI's own, to leave out (0: none). */
static size_t mpi_hidden_frames(struct gdbb *g, const struct mi_frames *fr)
{
	struct crdbg_mpi_state st;
	int k;

	if (g->mpi.show_lib || mpiv_read(&g->mpi, g->d, g->pid, true, &st))
		return 0;
	k = mpiv_user_frame(&st, fr);
	return k > 0 ? (size_t)k : 0;
}

/*
 * bt (names_only false: "#N  func at file:line" lines, innermost first;
 * count as gdb's backtrace N: N > 0 the N innermost, N < 0 the -N
 * outermost, 0 all) or stack (names_only: function names, outermost
 * first).
 */
static int do_frames(struct gdbb *g, uint32_t req, bool names_only, long count)
{
	struct mi_frames fr;
	size_t len = 0, top, first = 0, last;
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
	top = mpi_hidden_frames(g, &fr);
	last = fr.n > top ? fr.n - top : 0;	/* the user's frames: [0, last) */
	if (count > 0 && (size_t)count < last)
		last = count;
	else if (count < 0 && (size_t)-count < last)
		first = last - (size_t)-count;
	for (size_t i = first; i < last; i++) {
		struct mi_frame f;
		char d[400], name[320];

		if (names_only) {
			f = fr.frames[fr.n - 1 - i];
			cat(buf, GDBB_REPLY_MAX, &len, "%s%s", i ? "\n" : "",
			    frame_func(g, &f, name, sizeof(name)));
		} else {
			f = fr.frames[i + top];
			f.func = frame_func(g, &f, name, sizeof(name));
			describe_frame(d, sizeof(d), &f);
			cat(buf, GDBB_REPLY_MAX, &len, "%s#%-2d %s", i > first ? "\n" : "",
			    f.level, d);
		}
	}
	if (!names_only && count > 0 && (size_t)count + top < fr.n)
		cat(buf, GDBB_REPLY_MAX, &len, "\n(More stack frames follow...)");
	mi_frames_release(&fr);
	reply(g, req, 0, buf);
	free(buf);
	return 0;
}

static int do_status(struct gdbb *g, uint32_t req)
{
	char buf[sizeof(g->where) + 128];

	drain(g);
	if (g->state == GDBB_LOST)
		dbgp_status_text(buf, sizeof(buf), "lost", g->gdb_pid, g->pid,
				 g->lost + strlen(DBGP_LOST), 0);
	else if (g->state == GDBB_STOPPED && !g->exit_held)
		dbgp_status_text(buf, sizeof(buf), state_name[g->state], g->gdb_pid,
				 g->pid, g->where, g->pc);
	else if (g->state == GDBB_STOPPED || g->state == GDBB_EXITED)
		dbgp_status_text(buf, sizeof(buf), state_name[GDBB_EXITED], g->gdb_pid,
				 g->pid, g->where, 0);
	else
		dbgp_status_text(buf, sizeof(buf), state_name[g->state], g->gdb_pid,
				 g->pid, "", 0);
	reply(g, req, 0, buf);
	return 0;
}

/* Whether a CLI command's first word is word. */
static bool cli_verb_is(const char *cmd, const char *word)
{
	size_t n = strcspn(cmd, " \t");

	return n == strlen(word) && !strncmp(cmd, word, n);
}

/*
 * gdb's kill and detach end the program's run under this gdb (no
 * *stopped record says so): status shows "killed" or "detached".
 */
static void ended_by(struct gdbb *g, const char *cmd)
{
	bool kill = cli_verb_is(cmd, "kill") || cli_verb_is(cmd, "k");
	bool detach = cli_verb_is(cmd, "detach");

	if ((!kill && !detach) || (g->state != GDBB_STOPPED && g->state != GDBB_RUNNING))
		return;
	g->state = GDBB_EXITED;
	g->exit_held = false;
	snprintf(g->where, sizeof(g->where), DBGP_EXITED "%s", kill ? "killed" : "detached");
	g->info[0] = 0;
	g->pc = 0;
}

/*
 * gdb's return pops the selected frame: the rank now stands in the
 * caller, moved by no event gdb reports. Its stop becomes "returned"
 * there, so that status no longer shows the stop it has left (the
 * MPIR acquisition's return from Open MPI's debugger wait showed a
 * breakpoint the user never set).
 */
static void returned_by(struct gdbb *g, const char *cmd)
{
	struct dbgp_stop ds = { .reason = "returned" };
	struct mi_frames fr;

	if (!cli_verb_is(cmd, "return") || g->state != GDBB_STOPPED ||
	    mi_backtrace(g->d, 1, &fr))
		return;
	if (fr.n)
		stop_at_frame(&ds, &fr.frames[0]);
	g->pc = ds.pc;
	describe_stop(g, &ds);
	mi_frames_release(&fr);
}

static int do_cli(struct gdbb *g, uint32_t req, const char *cmd)
{
	char quoted[DBGP_CMD_MAX * 2 + 8];
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
	ended_by(g, cmd);
	text = mi_driver_take_console(g->d);
	returned_by(g, cmd);	/* after the text: its -stack-list-frames prints none */
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
	char buf[DBGP_CMD_MAX + 2];
	int n, err;

	if (!need_program(g, req))
		return 0;
	n = snprintf(buf, sizeof(buf), "%s\n", text);
	err = mi_driver_write_input(g->d, buf, n);
	if (err == -ENOTTY) {
		reply(g, req, 1, DBGP_ERROR "this program's stdin is not ours (attached)");
		return 0;
	}
	if (err) {
		fail(g, req, err);
		return 0;
	}
	reply(g, req, 0, "");
	return 0;
}

/* The value of field key of the last stop (g->info), or "". */
static void stop_field(const struct gdbb *g, const char *key, char *buf,
		       size_t size)
{
	const char *cur = dbgp_reply_fields(g->info);
	struct dbgp_field f;

	buf[0] = 0;
	while (cur && dbgp_next_field(&cur, &f)) {
		if (f.klen == strlen(key) && !memcmp(f.key, key, f.klen)) {
			snprintf(buf, size, "%.*s", (int)f.vlen, f.value);
			return;
		}
	}
}

/* Where a stopped rank is for the user: its MPI call's line if in one. */
static void mpi_position(struct gdbb *g, const struct crdbg_mpi_state *st,
			 bool have, char *buf, size_t size)
{
	char func[128], file[256], line[16];
	struct mi_frames fr;
	int k;

	/* MPI is called from the main thread (libcrdbg-mpi's limit). */
	if (have && st->kind != CRDBG_MPI_OUT &&
	    mi_driver_cmd(g->d, NULL, "-thread-select 1") == 0 &&
	    mi_backtrace(g->d, 0, &fr) == 0) {
		k = mpiv_user_frame(st, &fr);
		if (k >= 0 && !g->mpi.show_lib)	/* the user's frame, as at the stop */
			mi_driver_cmd(g->d, NULL, "-stack-select-frame %d", k);
		if (k >= 0) {
			const struct mi_frame *f = &fr.frames[k];

			snprintf(buf, size, "%cfunc=%s%cfile=%s%cline=%d",
				 DBGP_FIELD_SEP, f->func, DBGP_FIELD_SEP,
				 f->file ? f->file : "", DBGP_FIELD_SEP, f->line);
			mi_frames_release(&fr);
			return;
		}
		mi_frames_release(&fr);
	}
	stop_field(g, "func", func, sizeof(func));
	stop_field(g, "file", file, sizeof(file));
	stop_field(g, "line", line, sizeof(line));
	snprintf(buf, size, "%cfunc=%s%cfile=%s%cline=%s", DBGP_FIELD_SEP, func,
		 DBGP_FIELD_SEP, file, DBGP_FIELD_SEP, line);
}

/*
 * Describe the current stop again (MPI's frames now hidden or shown): its
 * reason from the last stop's fields, its frame from gdb.
 */
static void restate_stop(struct gdbb *g)
{
	char reason[64], sig[64], bkpt[16], call[CRDBG_MPI_CALL_MAX + 1];
	struct dbgp_stop ds = { 0 };
	struct mi_frames fr, user = { 0 };

	if (g->state != GDBB_STOPPED || mi_backtrace(g->d, 1, &fr))
		return;
	stop_field(g, "reason", reason, sizeof(reason));
	stop_field(g, "signal", sig, sizeof(sig));
	stop_field(g, "bkptno", bkpt, sizeof(bkpt));
	ds.attached = !*reason;
	ds.reason = reason;
	ds.signal = *sig ? sig : NULL;
	ds.bkptno = atoi(bkpt);
	if (fr.n)
		stop_at_frame(&ds, &fr.frames[0]);
	mpi_user_stop(g, &ds, &user, call, sizeof(call));
	g->pc = ds.pc;
	describe_stop(g, &ds);
	add_call(g, call);
	if (user.rec)
		mi_frames_release(&user);
	mi_frames_release(&fr);
}

/* "mpi frames on|off" (crdbg/dbgproto.h). */
static int do_mpi_frames(struct gdbb *g, uint32_t req, const char *arg)
{
	if (!strcmp(arg, "frames on") || !strcmp(arg, "frames off")) {
		g->mpi.show_lib = !strcmp(arg, "frames on");
		if (g->d && g->state == GDBB_STOPPED)
			restate_stop(g);
		replyf(g, req, 0, "mpi frames: %s", g->mpi.show_lib ? "on" : "off");
	} else {
		replyf(g, req, 1, DBGP_ERROR "mpi wants nothing or frames on|off, not '%.64s'",
		       arg);
	}
	return 0;
}

/* "mpi": the rank's run state, MPI state and position (crdbg/dbgproto.h). */
static int do_mpi(struct gdbb *g, uint32_t req, const char *arg)
{
	char hex[2 * sizeof(struct crdbg_mpi_state) + 1] = "";
	char pos[512] = "", *out;
	struct crdbg_mpi_state st;
	bool stopped, have;

	if (arg && *arg)
		return do_mpi_frames(g, req, arg);
	if (!need_program(g, req))
		return 0;
	if (g->state == GDBB_LOADED) {
		reply(g, req, 0, DBGP_NOT_STARTED);
		return 0;
	}
	stopped = g->state == GDBB_STOPPED;
	have = g->state != GDBB_EXITED &&
	       mpiv_read(&g->mpi, g->d, g->pid, stopped, &st) == 0;
	if (have)
		mpiv_hex(hex, &st);
	if (stopped)
		mpi_position(g, &st, have, pos, sizeof(pos));
	if (asprintf(&out, "%s%cstate=%s%s", state_name[g->state], DBGP_FIELDS,
		     hex, pos) < 0)
		return -ENOMEM;
	reply(g, req, 0, out);
	free(out);
	drain(g);
	return 0;
}

/* Park, unpark or list the parked threads (hook-park.c). */
static int do_hook(struct gdbb *g, uint32_t req, const char *arg)
{
	bool release = !strcmp(arg, "release");
	char err[256], *text;
	int rc;

	/* Not need_stopped(): after a console "cli attach" our state lags. */
	if (!need_program(g, req))
		return 0;
	/*
	 * release runs threads and takes their stops itself: first let gdb
	 * finish the attach the console asked for (its stop comes before
	 * this command's answer) and take what it reported, so that the
	 * stops release waits for are its own.
	 */
	if (release) {
		mi_driver_cmd(g->d, NULL, "-thread-info");
		if (!need_program(g, req))
			return 0;
	}
	rc = hook_park_command(g->d, arg, &text, err, sizeof(err));
	/* back where it was: that is its stop now, not the attach's */
	if (release && g->d)
		stopped_attached(g);
	if (rc)
		replyf(g, req, 1, DBGP_ERROR "%s", err);
	else
		reply(g, req, 0, text);
	free(text);
	drain(g);
	return 0;
}

/*
 * A job checkpoint part of the rank (part-run.c): it needs no gdb, so a
 * rank whose gdb is lost or that exited can still be restarted.
 */
static int do_part(struct gdbb *g, uint32_t req, const char *arg)
{
	if (!g->parts)
		g->parts = part_rank_new(&g->host, g->me);
	if (!g->parts)
		return -ENOMEM;
	part_rank_command(g->parts, req, arg);
	return 0;
}

/* A known verb whose arguments dbgp_parse() refused. */
static void bad_arguments(struct gdbb *g, uint32_t req, const struct dbgp_cmd *c)
{
	switch (c->verb) {
	case DBGP_EXEC:
		replyf(g, req, 1, DBGP_ERROR "unknown run command '%.64s'", c->arg);
		break;
	case DBGP_ATTACH:
		reply(g, req, 1, DBGP_ERROR "attach wants PID PROGRAM");
		break;
	case DBGP_LOAD:
		reply(g, req, 1, DBGP_ERROR "load wants [preload=LIB\\x1e]PROGRAM[\\x1fARG...]");
		break;
	default:
		replyf(g, req, 1, DBGP_ERROR "%s wants a wait in milliseconds, up to %lu",
		       dbgp_verb_name(c->verb), DBGP_WAIT_MAX_MS);
		break;
	}
}

/* One rank's part of a command. */
static int rank_command(struct gdbb *g, uint32_t req, const void *cmd,
			size_t len)
{
	char buf[DBGP_CMD_MAX + 1];
	struct dbgp_cmd c;
	int rc;

	if (len > DBGP_CMD_MAX) {
		reply(g, req, 1, DBGP_ERROR "malformed command");
		return 0;
	}
	memcpy(buf, cmd, len);
	rc = dbgp_parse(buf, len, &c);
	if (rc == -EMSGSIZE || rc == -EBADMSG) {
		reply(g, req, 1, DBGP_ERROR "malformed command");
		return 0;
	}
	if (rc == -ENOENT) {
		replyf(g, req, 1, DBGP_ERROR "unknown command '%.64s'", buf);
		return 0;
	}
	if (rc < 0) {
		bad_arguments(g, req, &c);
		return 0;
	}
	if (c.verb == DBGP_START || c.verb == DBGP_EXEC || c.verb == DBGP_WAIT ||
	    c.verb == DBGP_INTERRUPT)
		g->hold_exits = c.hold_exits;
	switch (c.verb) {
	case DBGP_LOAD:
		return do_load(g, req, &c);
	case DBGP_ATTACH:
		return do_attach(g, req, c.pid, c.arg);
	case DBGP_START:
		return do_start(g, req, c.wait_ms);
	case DBGP_EXEC:
		return do_exec(g, req, c.wait_ms, c.exec, c.arg);
	case DBGP_WAIT:
		return do_wait(g, req, c.wait_ms, false);
	case DBGP_INTERRUPT:
		return do_wait(g, req, c.wait_ms, true);
	case DBGP_PRINT:
		return do_print(g, req, c.arg);
	case DBGP_BREAK:
		return do_break(g, req, c.arg);
	case DBGP_BT:
		return do_frames(g, req, false, strtol(c.arg, NULL, 10));
	case DBGP_STACK:
		return do_frames(g, req, true, 0);
	case DBGP_STATUS:
		return do_status(g, req);
	case DBGP_CLI:
		return do_cli(g, req, c.arg);
	case DBGP_INPUT:
		return do_input(g, req, c.arg);
	case DBGP_MPI:
		return do_mpi(g, req, c.arg);
	case DBGP_HOOK:
		return do_hook(g, req, c.arg);
	case DBGP_PART:
		return do_part(g, req, c.arg);
	default:
		break;
	}
	replyf(g, req, 1, DBGP_ERROR "unknown command '%.64s'", buf);
	return 0;
}

static void rank_free(struct gdbb *g)
{
	part_rank_free(g->parts);
	attach_over(g);
	unwatch_all(g);
	if (g->pend_timer > 0)
		sdm_transport_cancel_timer(g->host.engine, g->pend_timer);
	mi_driver_free(g->d);
	sdm_set_free(g->me);
	free(g);
}

/* Rank r's state, made at its first command; NULL on ENOMEM. */
static struct gdbb *rank_get(struct gdbs *sv, sdm_id r)
{
	struct gdbb *g, **v;

	for (unsigned int i = 0; i < sv->nrank; i++)
		if (sv->rank[i]->host.id == r)
			return sv->rank[i];
	v = realloc(sv->rank, (sv->nrank + 1) * sizeof(*v));
	if (!v)
		return NULL;
	sv->rank = v;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->host = sv->host;
	g->host.id = r;
	g->attach_ms = sv->attach_ms;
	g->attach_pidfd = -1;
	g->me = sdm_set_new();
	if (!g->me || sdm_set_add_element(g->me, r) < 0) {
		sdm_set_free(g->me);
		free(g);
		return NULL;
	}
	g->mpi.show_lib = true;	/* until the console makes MPI calls atomic */
	sv->rank[sv->nrank++] = g;
	return g;
}

/* Each rank of the command in turn; each answers for itself. */
static int gdbb_command(void *priv, uint32_t req, const struct sdm_idset *ranks,
			const void *cmd, size_t len)
{
	struct gdbs *sv = priv;
	sdm_id r;
	int rc;

	sdm_set_for_each(r, ranks) {
		struct gdbb *g = rank_get(sv, r);

		rc = g ? rank_command(g, req, cmd, len) : -ENOMEM;
		if (rc < 0) {
			char why[96];

			snprintf(why, sizeof(why), DBGP_ERROR "backend: %s",
				 strerror(-rc));
			if (g)
				reply(g, req, 1, why);
			else
				sv->host.reply(sv->host.arg, req, NULL, 1, why,
					       strlen(why));
		}
	}
	return 0;
}

/* args: "" or "attach-timeout=MS" (crdbg debug --attach-timeout). */
static int gdbb_start(const struct sdm_backend_host *host, const char *args,
		      void **ret_priv)
{
	struct gdbs *sv = calloc(1, sizeof(*sv));
	unsigned long ms = DBGP_ATTACH_TIMEOUT_S * 1000ul;

	if (!sv)
		return -ENOMEM;
	if (*args) {
		char *end;

		if (strncmp(args, DBGP_SERVER_ATTACH_ARG, strlen(DBGP_SERVER_ATTACH_ARG))) {
			free(sv);
			return -EINVAL;
		}
		errno = 0;
		ms = strtoul(args + strlen(DBGP_SERVER_ATTACH_ARG), &end, 10);
		if (errno || *end || !ms || ms > UINT32_MAX) {
			free(sv);
			return -EINVAL;
		}
	}
	sv->host = *host;
	sv->attach_ms = ms;
	/* The MI driver reaps gdb itself: children must not be auto-reaped. */
	signal(SIGCHLD, SIG_DFL);
	*ret_priv = sv;
	return 0;
}

static void gdbb_stop(void *priv)
{
	struct gdbs *sv = priv;

	for (unsigned int i = 0; i < sv->nrank; i++)
		rank_free(sv->rank[i]);
	free(sv->rank);
	free(sv);
}

const struct sdm_backend_ops crdbg_backend_gdb = {
	.name = "gdb",
	.help = "load PROG | attach PID PROG | start MS | exec MS continue|step|next|finish | "
		"wait MS | interrupt MS | print EXPR | break LOC | bt | stack | "
		"status | cli CMD | input TEXT | mpi [frames on|off] | hook park|unpark|plan|release | "
		"part start|order|wait|finish",
	.start = gdbb_start,
	.command = gdbb_command,
	.stop = gdbb_stop,
};
