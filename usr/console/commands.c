// SPDX-License-Identifier: GPL-2.0
/*
 * Console commands: a line is "[RANKS] COMMAND ARGS", RANKS in the id-set
 * form (0-3,7); without it the command goes to the focus set. Commands
 * the console does not know go to every gdb as console commands. The
 * table at the end is the one list of commands: dispatch, help and
 * completion read it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crdbg/dbgproto.h"
#include "crdbg/merge.h"
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "breakpoints.h"
#include "checkpoint.h"
#include "commands.h"
#include "mpir.h"
#include "pstep.h"
#include "session.h"

#define DBG_CMD_MAX	3900	/* fits DBGP_CMD_MAX with the verb */
#define DBG_HELP_MAX	4096

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * A run-control command: send first (which names its wait slice), then
 * "wait" rounds to the ranks still running, printing their output in
 * between, until every rank stopped, the console's timeout passed or
 * ^C (then the running ranks are interrupted). One merged report.
 */
static void run_control(struct dbg_console *c, const struct sdm_idset *set,
			const char *display, const struct dbgp_cmd *first)
{
	struct dbg_session *s = c->s;
	struct sdm_fe_result acc = { 0 }, r;
	struct sdm_idset *pending = dbg_live(s, set);
	uint64_t deadline = s->wait_s ? now_ms() + s->wait_s * 1000ull : 0;
	struct dbgp_cmd cmd = *first;
	bool interrupting = false;
	int rc;

	if (!pending)
		return;
	if (sdm_set_is_empty(pending))
		dbg_error(s, "no live rank in the set");
	while (!sdm_set_is_empty(pending)) {
		if (*s->interrupted && !interrupting) {
			*s->interrupted = 0;
			interrupting = true;
			cmd = (struct dbgp_cmd){ .verb = DBGP_INTERRUPT, .wait_ms = DBG_SLICE_MS };
		}
		rc = dbg_send(s, pending, &cmd, DBG_SLICE_MS + DBG_CMD_TIMEOUT, &r);
		if (rc < 0) {
			dbg_error(s, "%.60s: %s", display, strerror(-rc));
			break;
		}
		for (unsigned int i = 0; i < r.nev; i++) {
			const struct sdm_fe_event *ev = &r.ev[i];
			const char *text;
			bool error;

			text = dbg_event_text(s, ev->type, ev->src,
					      (const char *)ev->payload, &error);
			if (!error && dbgp_reply_kind(text) == DBGP_REPLY_RUNNING)
				continue;
			/* Stops at breakpoints get the console's numbers. */
			dbg_bp_renumber(c->bp, &acc, error ? SDM_MSG_ERROR : SDM_MSG_REPLY,
					ev->src, text);
			sdm_set_diff(pending, ev->src);
		}
		sdm_fe_result_free(&r);
		dbg_pump_output(s, 0);
		if ((deadline && now_ms() >= deadline) ||
		    (s->terminate && *s->terminate))
			break;
		cmd = (struct dbgp_cmd){ .verb = DBGP_WAIT, .wait_ms = DBG_SLICE_MS };
	}
	if (!sdm_set_is_empty(pending))
		dbg_result_add(&acc, SDM_MSG_REPLY, pending, DBGP_RUNNING);
	dbg_pump_output(s, 0);
	dbg_flush_lines(s);
	dbg_print_result(s, display, &acc);
	dbg_bp_settle(c->bp);
	sdm_fe_result_free(&acc);
	sdm_set_free(pending);
}

/* Send cmd to the live ranks of set, print the merged replies. */
static void simple(struct dbg_session *s, const struct sdm_idset *set,
		   const char *display, const struct dbgp_cmd *cmd)
{
	struct sdm_idset *live = dbg_live(s, set);
	struct sdm_fe_result r;
	int rc;

	if (!live)
		return;
	if (sdm_set_is_empty(live)) {
		dbg_error(s, "no live rank in the set");
		goto out;
	}
	rc = dbg_send(s, live, cmd, DBG_CMD_TIMEOUT, &r);
	if (rc < 0) {
		dbg_error(s, "%.60s: %s", display, strerror(-rc));
		goto out;
	}
	dbg_pump_output(s, 0);
	dbg_print_result(s, display, &r);
	sdm_fe_result_free(&r);
out:
	sdm_set_free(live);
}

static const char *state_word(enum dbg_rank_state st)
{
	switch (st) {
	case DBG_STOPPED: return "stopped";
	case DBG_RUNNING: return "running";
	case DBG_EXITED: return "exited";
	case DBG_LOST: return "lost";
	default: return "-";
	}
}

static void status_row(struct dbg_session *s, sdm_id id, const char *state,
		       int gdb, int pid, const char *where)
{
	if (s->json) {
		fprintf(s->out, "{\"type\":\"status\",\"rank\":%u,\"state\":", id);
		dbg_json_str(s->out, state);
		fprintf(s->out, ",\"gdb\":%d,\"pid\":%d,\"where\":", gdb, pid);
		dbg_json_str(s->out, where);
		fputs("}\n", s->out);
	} else {
		fprintf(s->out, "%-6u %-8s %-8d %-8d %s\n", id, state, gdb, pid,
			where);
	}
}

/* A status reply of a lost rank, or a reply saying it is lost. */
static bool is_lost(const char *text)
{
	struct dbgp_status st;

	return dbgp_reply_kind(text) == DBGP_REPLY_LOST ||
	       (!dbgp_parse_status(text, &st) && !strcmp(st.state, "lost"));
}

/* One row per rank: state, gdb pid, program pid, where it is. */
static void status(struct dbg_session *s, const struct sdm_idset *set)
{
	/* Lost ranks too: a live server says why its gdb is gone. */
	struct sdm_idset *live = sdm_set_copy(set);
	struct dbgp_cmd cmd = { .verb = DBGP_STATUS };
	struct sdm_fe_result r = { 0 };
	char **row = calloc(s->n, sizeof(*row));
	bool failed = false;
	sdm_id id;

	if (!live || !row)
		goto out;
	if (dbg_send(s, live, &cmd, DBG_CMD_TIMEOUT, &r) < 0) {
		dbg_error(s, "status: no reply");
		goto out;
	}
	for (unsigned int i = 0; i < r.nev; i++) {
		const struct sdm_fe_event *ev = &r.ev[i];
		bool error;
		const char *text = dbg_event_text(s, ev->type, ev->src,
						  (char *)ev->payload, &error);

		sdm_set_for_each(id, ev->src) {
			if (id >= s->n)
				break;
			free(row[id]);
			row[id] = strdup(text);
			if (error || is_lost(text))
				s->state[id] = DBG_LOST;
		}
		failed |= error;
	}
	if (failed)
		s->errors++;
	if (!s->json)
		fprintf(s->out, "%-6s %-8s %-8s %-8s %s\n", "rank", "state",
			"gdb", "pid", "where");
	sdm_set_for_each(id, set) {
		struct dbgp_status st = { .where = "" };

		if (id >= s->n)
			break;
		if (!row[id] || dbgp_parse_status(row[id], &st)) {
			snprintf(st.state, sizeof(st.state), "%s",
				 state_word(s->state[id]));
			st.where = row[id] ? row[id] : "";
		}
		status_row(s, id, st.state, st.gdb_pid, st.pid, st.where);
	}
	fflush(s->out);
out:
	for (uint32_t i = 0; row && i < s->n; i++)
		free(row[i]);
	free(row);
	sdm_fe_result_free(&r);
	sdm_set_free(live);
}

/* Merged backtraces of set as a prefix tree. */
static void stacks(struct dbg_session *s, const struct sdm_idset *set)
{
	struct sdm_idset *live = dbg_live(s, set);
	struct dbgp_cmd cmd = { .verb = DBGP_STACK };
	struct con_stacks *t = con_stacks_new();
	struct sdm_fe_result r = { 0 }, errs = { 0 };
	sdm_id id;

	if (!live || !t)
		goto out;
	if (dbg_send(s, live, &cmd, DBG_CMD_TIMEOUT, &r) < 0) {
		dbg_error(s, "stacks: no reply");
		goto out;
	}
	for (unsigned int i = 0; i < r.nev; i++) {
		const struct sdm_fe_event *ev = &r.ev[i];
		const char *frames[CON_MAX_FRAMES];
		size_t n = 0;
		bool error;
		char *copy, *p;
		const char *text = dbg_event_text(s, ev->type, ev->src,
						  (char *)ev->payload, &error);

		if (error) {
			dbg_result_add(&errs, SDM_MSG_ERROR, ev->src, text);
			continue;
		}
		copy = strdup(text);
		if (!copy)
			continue;
		for (p = strtok(copy, "\n"); p && n < CON_MAX_FRAMES;
		     p = strtok(NULL, "\n"))
			frames[n++] = p;
		sdm_set_for_each(id, ev->src)
			con_stacks_add(t, id, frames, n);
		free(copy);
	}
	if (s->json) {
		con_stacks_print_json(t, s->out);
	} else {
		con_stacks_print(t, s->out);
	}
	if (errs.nev)
		dbg_print_result(s, "stacks", &errs);
	fflush(s->out);
out:
	sdm_fe_result_free(&r);
	sdm_fe_result_free(&errs);
	con_stacks_free(t);
	sdm_set_free(live);
}

/* Parse "[SET]" at *p; ret gets the ranks. 0, or -errno after a message. */
static int parse_prefix(struct dbg_session *s, const char **p,
			struct sdm_idset *ret)
{
	const char *end;
	sdm_id max;

	if (sdm_set_parse(ret, *p + 1, &end) < 0 || *end != ']' ||
	    sdm_set_is_empty(ret)) {
		dbg_error(s, "bad rank set in '%.60s' (want e.g. [0-3,7])", *p);
		return -EINVAL;
	}
	if (sdm_set_count_range(ret, 0, s->n - 1) != sdm_set_size(ret)) {
		max = s->n - 1;
		dbg_error(s, "rank out of range: this session has ranks 0-%u", max);
		return -ERANGE;
	}
	*p = end + 1;
	return 0;
}

static void focus(struct dbg_session *s, const char *arg)
{
	struct sdm_idset *set;
	char *str;

	if (*arg && strcmp(arg, "all")) {
		char buf[256];
		const char *p = buf;

		snprintf(buf, sizeof(buf), "[%s]", arg);
		if (arg[0] == '[')
			snprintf(buf, sizeof(buf), "%s", arg);
		set = sdm_set_new();
		if (!set)
			return;
		if (parse_prefix(s, &p, set) < 0) {
			sdm_set_free(set);
			return;
		}
		sdm_set_assign(s->focus, set);
		sdm_set_free(set);
	} else if (*arg) {
		sdm_set_clear(s->focus);
		sdm_set_add_range(s->focus, 0, s->n - 1);
	}
	str = sdm_set_to_string(s->focus);
	dbg_info(s, "focus: [%s]", str ? str : "?");
	free(str);
}


/* ---- the commands ---- */

struct dbg_command;

/* One command as typed. */
struct dbg_call {
	const struct dbg_command *cmd;	/* NULL: not the console's, for gdb */
	struct sdm_idset *set;		/* the [RANKS] prefix, or the focus */
	bool prefixed;
	const char *arg;		/* after the command word */
	const char *display;		/* the line without the prefix */
};

#define DBG_MAX_ALIASES	2

struct dbg_command {
	const char *name;
	const char *alias[DBG_MAX_ALIASES + 1];	/* NULL terminated */
	const char *args;			/* for help; NULL: none */
	const char *help;			/* NULL: hidden */
	/* Returns 1 to end the session. */
	int (*run)(struct dbg_console *c, const struct dbg_call *call);
};

static int cmd_help(struct dbg_console *c, const struct dbg_call *call);

/* Send cmd (verb with call's argument as its text) to call's ranks. */
static int send_text(struct dbg_console *c, const struct dbg_call *call,
		     enum dbgp_verb verb)
{
	struct dbgp_cmd cmd = { .verb = verb, .arg = call->arg };

	simple(c->s, call->set, call->display, &cmd);
	return 0;
}

static int run_wait(struct dbg_console *c, const struct dbg_call *call,
		    enum dbgp_verb verb)
{
	struct dbgp_cmd cmd = { .verb = verb, .wait_ms = DBG_SLICE_MS };

	run_control(c, call->set, call->display, &cmd);
	return 0;
}

static int cmd_quit(struct dbg_console *c, const struct dbg_call *call)
{
	(void)c;
	(void)call;
	return 1;
}

static int cmd_echo(struct dbg_console *c, const struct dbg_call *call)
{
	dbg_info(c->s, "%s", call->arg);
	return 0;
}

static int cmd_focus(struct dbg_console *c, const struct dbg_call *call)
{
	focus(c->s, call->arg);
	return 0;
}

static int cmd_timeout(struct dbg_console *c, const struct dbg_call *call)
{
	struct dbg_session *s = c->s;

	if (*call->arg)
		s->wait_s = atoi(call->arg) > 0 ? atoi(call->arg) : 0;
	dbg_info(s, "timeout: %d s%s", s->wait_s, s->wait_s ? "" : " (none)");
	return 0;
}

static int cmd_status(struct dbg_console *c, const struct dbg_call *call)
{
	status(c->s, call->set);
	if (c->pstep && c->pstep->mpi)
		dbg_pstep_show(c->pstep);
	return 0;
}

static int cmd_stacks(struct dbg_console *c, const struct dbg_call *call)
{
	stacks(c->s, call->set);
	return 0;
}

static int cmd_print(struct dbg_console *c, const struct dbg_call *call)
{
	if (!*call->arg) {
		dbg_error(c->s, "print: an expression is needed");
		return 0;
	}
	return send_text(c, call, DBGP_PRINT);
}

/* break, tbreak, watch...: the command's name is the kind. */
static int cmd_break(struct dbg_console *c, const struct dbg_call *call)
{
	static const struct {
		const char *name;
		enum dbg_bp_kind kind;
	} kinds[] = {
		{ "break", DBG_BP_BREAK }, { "tbreak", DBG_BP_TBREAK },
		{ "watch", DBG_BP_WATCH }, { "rwatch", DBG_BP_RWATCH },
		{ "awatch", DBG_BP_AWATCH },
	};
	enum dbg_bp_kind kind = DBG_BP_BREAK;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(call->cmd->name, kinds[i].name))
			kind = kinds[i].kind;
	if (!*call->arg) {
		dbg_error(c->s, "%s: %s is needed", call->cmd->name,
			  kind >= DBG_BP_WATCH ? "an expression" : "a location");
		return 0;
	}
	if (!c->bp) {
		dbg_error(c->s, "%s: no breakpoint table (out of memory)", call->cmd->name);
		return 0;
	}
	dbg_bp_create(c->bp, call->set, kind, call->arg);
	return 0;
}

/* The rank set a breakpoint command is narrowed to: only a typed prefix. */
static const struct sdm_idset *bp_set(const struct dbg_call *call)
{
	return call->prefixed ? call->set : NULL;
}

static int cmd_delete(struct dbg_console *c, const struct dbg_call *call)
{
	if (!c->bp)
		return 0;
	if (!*call->arg && !dbg_bp_any(c->bp))
		return 0;
	if (!*call->arg && c->confirm && !c->confirm("Delete all breakpoints? (y or n) "))
		return 0;
	dbg_bp_delete(c->bp, bp_set(call), call->arg);
	return 0;
}

static int cmd_enable(struct dbg_console *c, const struct dbg_call *call)
{
	if (c->bp)
		dbg_bp_enable(c->bp, bp_set(call), call->arg,
			      !strcmp(call->cmd->name, "enable"));
	return 0;
}

static int cmd_condition(struct dbg_console *c, const struct dbg_call *call)
{
	if (c->bp)
		dbg_bp_condition(c->bp, bp_set(call), call->arg);
	return 0;
}

/* info breakpoints (b, break, watchpoints): the table; other info: gdb. */
static int cmd_info(struct dbg_console *c, const struct dbg_call *call)
{
	static const char *const ours[] = { "b", "br", "bre", "brea", "break",
		"breakpoint", "breakpoints", "watchpoints", NULL };
	char word[32];

	snprintf(word, sizeof(word), "%.*s", (int)strcspn(call->arg, " \t"), call->arg);
	for (int i = 0; ours[i]; i++) {
		if (strcmp(word, ours[i]))
			continue;
		if (c->bp)
			dbg_bp_info(c->bp);
		return 0;
	}
	return send_text(c, &(struct dbg_call){ .cmd = call->cmd, .set = call->set,
		.prefixed = call->prefixed, .arg = call->display,
		.display = call->display }, DBGP_CLI);
}

static int cmd_bt(struct dbg_console *c, const struct dbg_call *call)
{
	struct dbgp_cmd cmd = { .verb = DBGP_BT };

	simple(c->s, call->set, call->display, &cmd);
	return 0;
}

/* continue, step, ...: the command's name is the protocol's run kind. */
static int cmd_exec(struct dbg_console *c, const struct dbg_call *call)
{
	struct dbgp_cmd cmd = { .verb = DBGP_EXEC, .wait_ms = DBG_SLICE_MS };
	int kind = dbgp_exec_parse(call->cmd->name);

	if (kind < 0) {
		dbg_error(c->s, "%s: not a run command of the gdb backend", call->cmd->name);
		return 0;
	}
	cmd.exec = kind;
	if ((kind == DBGP_EXEC_STEP || kind == DBGP_EXEC_NEXT) && c->pstep &&
	    c->pstep->mpi) {
		dbg_pstep_run(c->pstep, call->set, kind, call->display);
		return 0;
	}
	run_control(c, call->set, call->display, &cmd);
	return 0;
}

/* hold, release: the parallel step's yellow ranks (pstep.c). */
static int cmd_hold(struct dbg_console *c, const struct dbg_call *call)
{
	struct sdm_idset *set = sdm_set_new();
	char buf[256];
	const char *p = buf;

	if (!set)
		return 0;
	/* "hold [1-2]" or "hold 1-2" name the ranks; else the command's set. */
	snprintf(buf, sizeof(buf), call->arg[0] == '[' ? "%s" : "[%s]", call->arg);
	if (!c->pstep || !c->pstep->mpi)
		dbg_error(c->s, "%s: no rank has libcrdbg-mpi (no parallel step)",
			  call->cmd->name);
	else if (!*call->arg || parse_prefix(c->s, &p, set) == 0)
		dbg_pstep_hold(c->pstep, *call->arg ? set : call->set,
			       !strcmp(call->cmd->name, "hold"));
	sdm_set_free(set);
	return 0;
}

static int cmd_mpi(struct dbg_console *c, const struct dbg_call *call)
{
	bool on = !strcmp(call->arg, "frames on");

	if (!c->pstep || !c->pstep->mpi) {
		dbg_error(c->s, "mpi: no rank has libcrdbg-mpi");
	} else if (on || !strcmp(call->arg, "frames off")) {
		dbg_pstep_frames(c->pstep, call->set, on);
		dbg_info(c->s, "mpi frames: %s", on ? "shown" : "hidden (MPI calls are atomic)");
	} else if (*call->arg) {
		dbg_error(c->s, "mpi: want nothing or 'frames on|off', not '%.60s'", call->arg);
	} else {
		dbg_pstep_table(c->pstep, call->set);
	}
	return 0;
}

static int cmd_start(struct dbg_console *c, const struct dbg_call *call)
{
	struct sdm_idset *live = dbg_live(c->s, call->set);

	/* gdb's temporary breakpoint 1 at main, in the console's table too. */
	if (live)
		dbg_bp_note_start(c->bp, live);
	sdm_set_free(live);
	return run_wait(c, call, DBGP_START);
}

static int cmd_interrupt(struct dbg_console *c, const struct dbg_call *call)
{
	return run_wait(c, call, DBGP_INTERRUPT);
}

static int cmd_wait(struct dbg_console *c, const struct dbg_call *call)
{
	return run_wait(c, call, DBGP_WAIT);
}

static int cmd_input(struct dbg_console *c, const struct dbg_call *call)
{
	if (c->mpir) {
		dbg_mpir_input(c->mpir, call->prefixed ? call->set : NULL, call->arg);
		return 0;
	}
	/* Like mpirun: stdin goes to rank 0 unless ranks are named. */
	if (!call->prefixed) {
		sdm_set_clear(call->set);
		sdm_set_add_element(call->set, 0);
	}
	return send_text(c, call, DBGP_INPUT);
}

static int cmd_checkpoint(struct dbg_console *c, const struct dbg_call *call)
{
	(void)call;
	if (!c->ckpt)
		dbg_error(c->s, "checkpoint: not available in this session (out of memory)");
	else
		dbg_ckpt_checkpoint(c->ckpt);
	return 0;
}

static int cmd_restart(struct dbg_console *c, const struct dbg_call *call)
{
	if (!c->ckpt)
		dbg_error(c->s, "restart: not available in this session (out of memory)");
	else
		dbg_ckpt_restart(c->ckpt, call->arg);
	return 0;
}

static int cmd_gdb(struct dbg_console *c, const struct dbg_call *call)
{
	return send_text(c, call, DBGP_CLI);
}

static const struct dbg_command commands[] = {
	{ "focus", { NULL }, "[RANKS|all]", "show or set the ranks commands go to", cmd_focus },
	{ "break", { "b", "br" }, "LOC [if EXPR]",
	  "breakpoint at file.c:LINE, FUNCTION or *ADDR, stopping only if EXPR", cmd_break },
	{ "tbreak", { NULL }, "LOC [if EXPR]", "a breakpoint deleted where it stops a rank",
	  cmd_break },
	{ "watch", { NULL }, "EXPR", "stop when EXPR changes (old and new value shown)",
	  cmd_break },
	{ "rwatch", { NULL }, "EXPR", "stop when EXPR is read", cmd_break },
	{ "awatch", { NULL }, "EXPR", "stop when EXPR is read or written", cmd_break },
	{ "delete", { "d" }, "[N...]", "delete breakpoints N (N-M ranges), or all after asking",
	  cmd_delete },
	{ "disable", { NULL }, "[N...]", "disable breakpoints N, or all", cmd_enable },
	{ "enable", { NULL }, "[N...]", "enable breakpoints N, or all", cmd_enable },
	{ "condition", { NULL }, "N [EXPR]", "stop at N only if EXPR (none: always)",
	  cmd_condition },
	{ "info", { "i" }, "breakpoints|...", "the breakpoint table with each rank set; "
	  "other info commands go to gdb", cmd_info },
	{ "continue", { "c" }, NULL, "resume; waits until every rank stops (^C interrupts)",
	  cmd_exec },
	{ "step", { "s" }, NULL, "one line, into calls; waits as continue does", cmd_exec },
	{ "next", { "n" }, NULL, "one line, over calls; waits as continue does", cmd_exec },
	{ "finish", { "fin" }, NULL, "run until the function returns; waits likewise", cmd_exec },
	{ "stepi", { "si" }, NULL, "one instruction, into calls; waits likewise", cmd_exec },
	{ "nexti", { "ni" }, NULL, "one instruction, over calls; waits likewise", cmd_exec },
	{ "start", { NULL }, NULL, NULL, cmd_start },	/* the session's first run to main */
	{ "hold", { NULL }, "[RANKS]", "parallel step: keep the ranks where they are (yellow)", cmd_hold },
	{ "release", { NULL }, "[RANKS]", "parallel step: let held ranks move again (green)", cmd_hold },
	{ "mpi", { NULL }, "[frames on|off]", "each rank's colour, position, steps and MPI call; "
	  "or show MPI's own frames", cmd_mpi },
	{ "interrupt", { NULL }, NULL, "stop the running ranks", cmd_interrupt },
	{ "wait", { NULL }, NULL, "wait for running ranks to stop", cmd_wait },
	{ "timeout", { NULL }, "SECONDS", "longest wait of a run command (0: no limit)",
	  cmd_timeout },
	{ "print", { "p" }, "EXPR", "evaluate EXPR; identical values are merged", cmd_print },
	{ "bt", { "backtrace", "where" }, NULL, "backtrace of each rank, merged", cmd_bt },
	{ "stacks", { NULL }, NULL, "merged stacks of all ranks as a tree", cmd_stacks },
	{ "status", { NULL }, NULL, "state, gdb pid, program pid and position per rank",
	  cmd_status },
	{ "input", { NULL }, "TEXT", "TEXT and a newline to the programs' stdin (rank 0 by default)",
	  cmd_input },
	{ "checkpoint", { NULL }, NULL, "checkpoint every rank (libcrdbg, crdbg.ko); prints the handles",
	  cmd_checkpoint },
	{ "restart", { NULL }, "[H[,H..]]", "restart the ranks (default: last checkpoint), same place",
	  cmd_restart },
	{ "echo", { NULL }, "TEXT", "print TEXT", cmd_echo },
	{ "gdb", { NULL }, "CMD", "any gdb command (unknown commands go to gdb too)", cmd_gdb },
	{ "help", { "h" }, "[COMMAND]", "this list, or one command's line", cmd_help },
	{ "quit", { "q", "exit" }, NULL, "end the session (the programs are killed)", cmd_quit },
};

static const size_t ncommands = sizeof(commands) / sizeof(commands[0]);

/* "name ARGS" of a command, as help shows it. */
static void help_line(char *buf, size_t size, size_t *len, const struct dbg_command *d)
{
	char left[64];
	int n;

	snprintf(left, sizeof(left), "%s%s%s", d->name, d->args ? " " : "",
		 d->args ? d->args : "");
	n = snprintf(buf + *len, size - *len, "%s%-17s %s", *len ? "\n" : "", left, d->help);
	for (int i = 0; n > 0 && d->alias[i] && (size_t)n < size - *len; i++)
		n += snprintf(buf + *len + n, size - *len - n, "%s%s%s", i ? ", " : " (also ",
			      d->alias[i], d->alias[i + 1] ? "" : ")");
	if (n > 0)
		*len = *len + n < size - 1 ? *len + n : size - 1;
}

static const struct dbg_command *find_command(const char *word)
{
	for (size_t i = 0; i < ncommands; i++) {
		const struct dbg_command *d = &commands[i];

		if (!strcmp(word, d->name))
			return d;
		for (int k = 0; d->alias[k]; k++)
			if (!strcmp(word, d->alias[k]))
				return d;
	}
	return NULL;
}

static int cmd_help(struct dbg_console *c, const struct dbg_call *call)
{
	const struct dbg_command *one = *call->arg ? find_command(call->arg) : NULL;
	char buf[DBG_HELP_MAX];
	size_t len = 0;

	if (*call->arg && (!one || !one->help)) {
		dbg_error(c->s, "help: no command '%.60s', try \"help\"", call->arg);
		return 0;
	}
	if (one) {
		help_line(buf, sizeof(buf), &len, one);
		dbg_info(c->s, "%s", buf);
		return 0;
	}
	len = snprintf(buf, sizeof(buf), "%-17s %s", "[RANKS] COMMAND",
		       "run COMMAND on RANKS (e.g. [0-3,7]) instead of the focus");
	for (size_t i = 0; i < ncommands; i++)
		if (commands[i].help)
			help_line(buf, sizeof(buf), &len, &commands[i]);
	dbg_info(c->s, "%s\nany other command goes to gdb as it is", buf);
	return 0;
}


const char *dbg_command_word(size_t i)
{
	for (size_t k = 0; k < ncommands; k++) {
		const struct dbg_command *d = &commands[k];

		if (!d->help)
			continue;
		if (!i--)
			return d->name;
		for (int a = 0; d->alias[a]; a++)
			if (strlen(d->alias[a]) >= 3 && !i--)
				return d->alias[a];
	}
	return NULL;
}

int dbg_execute(struct dbg_console *c, const char *line)
{
	struct dbg_session *s = c->s;
	struct dbg_call call = { .set = sdm_set_new() };
	char word[32], display[DBG_CMD_MAX + 1];
	const char *p = line;
	size_t wl;
	int quit = 0;

	if (!call.set)
		return 0;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '#' || !*p)
		goto out;
	if (strlen(p) > DBG_CMD_MAX) {
		dbg_error(s, "command too long (at most %d bytes)", DBG_CMD_MAX);
		goto out;
	}
	if (*p == '[') {
		if (parse_prefix(s, &p, call.set) < 0)
			goto out;
		call.prefixed = true;
	} else {
		sdm_set_assign(call.set, s->focus);
	}
	while (isspace((unsigned char)*p))
		p++;
	snprintf(display, sizeof(display), "%s", p);
	call.display = display;
	wl = strcspn(p, " \t");
	if (!wl)
		goto out;
	snprintf(word, sizeof(word), "%.*s", (int)(wl < 31 ? wl : 31), p);
	call.arg = p + wl;
	while (isspace((unsigned char)*call.arg))
		call.arg++;
	call.cmd = find_command(word);
	if (call.cmd) {
		quit = call.cmd->run(c, &call);
	} else {
		/* Not ours: the whole command goes to gdb. */
		call.arg = p;
		send_text(c, &call, DBGP_CLI);
	}
out:
	sdm_set_free(call.set);
	return quit;
}
