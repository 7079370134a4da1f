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
#include "timeline.h"

#define DBG_CMD_MAX	3900	/* fits DBGP_CMD_MAX with the verb */
#define DBG_HELP_MAX	16384	/* the whole table, never cut */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void show_displays(struct dbg_console *c, const struct sdm_idset *set);

/*
 * A rank that stops on a signal (not our SIGINT) or exits with a code
 * other than 0 while others run is a fault: announced at once and, with
 * stopall on, the others are stopped. One that is killed or lost is
 * announced at once. 0: neither.
 */
enum { FAULT_NONE, FAULT_ANNOUNCE, FAULT_STOP_OTHERS };

static int fault_kind(const char *text, bool error)
{
	static const char sig[] = DBGP_STOPPED "signal ";
	size_t n = dbgp_reply_text_len(text), k = sizeof(sig) - 1;

	if (error)
		return FAULT_ANNOUNCE;	/* lost */
	if (n > k && !strncmp(text, sig, k)) {
		/* "signal SIGINT, ..." is our own interrupt (or ^C). */
		size_t len = strcspn(text + k, ",\x1e");

		return len == 6 && !strncmp(text + k, "SIGINT", 6) ?
		       FAULT_NONE : FAULT_STOP_OTHERS;
	}
	if (!strncmp(text, DBGP_EXITED "signal ", strlen(DBGP_EXITED "signal ")))
		return FAULT_ANNOUNCE;
	if (!strncmp(text, DBGP_EXITED "code ", strlen(DBGP_EXITED "code ")) &&
	    atoi(text + strlen(DBGP_EXITED "code ")) != 0)
		return FAULT_STOP_OTHERS;
	return FAULT_NONE;
}

/*
 * A stop at a breakpoint or watchpoint (the user's, not the exit point's
 * hold, which is an exit): with stopall on it stops the others too.
 */
static bool breakpoint_stop(const char *text)
{
	static const char *const reasons[] = {
		"breakpoint-hit", "watchpoint-trigger", "read-watchpoint-trigger",
		"access-watchpoint-trigger",
	};
	const char *fields = dbgp_reply_fields(text);
	struct dbgp_field f;

	if (dbgp_reply_kind(text) != DBGP_REPLY_STOPPED)
		return false;
	while (fields && dbgp_next_field(&fields, &f)) {
		if (!dbgp_field_is(&f, "reason"))
			continue;
		for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
			if (f.vlen == strlen(reasons[i]) && !memcmp(f.value, reasons[i], f.vlen))
				return true;
	}
	return false;
}

/* Print one reply now, ahead of the run command's report. */
static void announce(struct dbg_console *c, const char *display, uint8_t type,
		     const struct sdm_idset *src, const char *text,
		     const struct sdm_idset *others, bool stop)
{
	struct dbg_session *s = c->s;
	struct sdm_fe_result one = { 0 };
	char *str;

	dbg_pump_output(s, 0);
	dbg_flush_lines(s);
	dbg_bp_renumber(c->bp, &one, type, src, text);
	dbg_print_result(s, display, &one);
	sdm_fe_result_free(&one);
	if (!stop)
		return;
	str = sdm_set_to_string(others);
	dbg_info(s, "stopping the other ranks [%s] (stopall off leaves them running)",
		 str ? str : "?");
	free(str);
}

/* An exit the backend holds in _exit for us (dbgproto.h, "hold"). */
static bool held_exit(const char *text)
{
	const char *fields = dbgp_reply_fields(text);
	struct dbgp_field f;

	if (dbgp_reply_kind(text) != DBGP_REPLY_EXITED)
		return false;
	while (fields && dbgp_next_field(&fields, &f))
		if (dbgp_field_is(&f, "held"))
			return true;
	return false;
}

/*
 * The group stop: a rank stopped at a breakpoint while others of the
 * command run. The stops so far are printed now, in place of the
 * report's first part (kept in early for the timeline); with stopall on
 * the others are then stopped (true: interrupt them), with it off the
 * command returns and they run on, their stops reported when they come.
 */
static bool group_stop(struct dbg_console *c, const char *display,
		       struct sdm_fe_result *acc, struct sdm_fe_result *early,
		       const struct sdm_idset *pending)
{
	struct dbg_session *s = c->s;
	char *str = sdm_set_to_string(pending);

	dbg_pump_output(s, 0);
	dbg_flush_lines(s);
	dbg_print_result(s, display, acc);
	for (unsigned int i = 0; i < acc->nev; i++)
		dbg_result_add(early, acc->ev[i].type, acc->ev[i].src,
			       (const char *)acc->ev[i].payload);
	sdm_fe_result_free(acc);
	*acc = (struct sdm_fe_result){ 0 };
	if (c->stopall)
		dbg_info(s, "stopping the other ranks [%s] (stopall off leaves them running)",
			 str ? str : "?");
	else
		dbg_info(s, "[%s] run on (stopall off): their stops are reported when they come",
			 str ? str : "?");
	free(str);
	return c->stopall;
}

/*
 * A run-control command: send first (which names its wait slice), then
 * "wait" rounds to the ranks still running, printing their output in
 * between, until every rank stopped, the console's timeout passed or
 * ^C (then the running ranks are interrupted). A fault of a rank while
 * others run is printed when it comes (and stops the others, with
 * stopall on); the rest is one merged report. A stop at a breakpoint
 * while others run (not in the session's start) leaves them one more
 * wait round to stop by themselves, and is then printed with the stops
 * so far; with stopall on the others are stopped (as DDT and TotalView
 * stop the group), with it off the command returns while they run on
 * (after a fault too, at the end of its round).
 * Either way it never waits for ranks that may be blocked waiting for
 * the stopped one. With stopall on, a rank
 * that exits with a code other than 0 is held in its exit (s->exit_held)
 * until a run command, kill or detach names it, or the session ends: its
 * launcher would otherwise end the others while the user looks at them
 * (Open MPI's mpirun a second later, MPICH's mpiexec.hydra at once).
 */
static void run_control(struct dbg_console *c, const struct sdm_idset *set,
			const char *display, const struct dbgp_cmd *first, bool user)
{
	struct dbg_session *s = c->s;
	struct sdm_fe_result acc = { 0 }, early = { 0 }, r;
	/* held: the ranks this command's replies newly hold in their exit */
	struct sdm_idset *pending = dbg_live(s, set), *held = sdm_set_new();
	uint64_t deadline = s->wait_s ? now_ms() + s->wait_s * 1000ull : 0;
	struct dbgp_cmd cmd = *first;
	/*
	 * No group stop in the session's start, nor in wait: its ranks
	 * stopped before it would end it at once, and waiting for every
	 * rank is what the user asked for.
	 */
	bool interrupting = false, stop_others = false,
	     grouped = first->verb == DBGP_START || first->verb == DBGP_WAIT;
	int grace = -1;		/* rounds left before the group stop; -1: none */
	int rc;

	if (!pending || !held) {
		sdm_set_free(pending);
		sdm_set_free(held);
		return;
	}
	cmd.hold_exits = c->stopall;
	if (sdm_set_is_empty(pending))
		dbg_error(s, "no live rank in the set (every one exited or is lost)");
	while (!sdm_set_is_empty(pending)) {
		if ((*s->interrupted || stop_others) && !interrupting) {
			*s->interrupted = 0;
			interrupting = true;
			cmd = (struct dbgp_cmd){ .verb = DBGP_INTERRUPT, .wait_ms = DBG_SLICE_MS,
						 .hold_exits = c->stopall };
		}
		rc = dbg_send(s, pending, &cmd, DBG_SLICE_MS + DBG_CMD_TIMEOUT, &r);
		if (rc < 0) {
			dbg_error(s, "%.60s: %s", display, strerror(-rc));
			break;
		}
		for (unsigned int i = 0; i < r.nev; i++) {
			const struct sdm_fe_event *ev = &r.ev[i];
			uint8_t type;
			const char *text;
			bool error;
			int fault;

			text = dbg_event_text(s, ev->type, ev->src,
					      (const char *)ev->payload, &error);
			if (!error && dbgp_reply_kind(text) == DBGP_REPLY_RUNNING)
				continue;
			type = error ? SDM_MSG_ERROR : SDM_MSG_REPLY;
			sdm_set_diff(pending, ev->src);
			if (!error && held_exit(text))
				sdm_set_union(held, ev->src);
			fault = fault_kind(text, error);
			if (fault && !sdm_set_is_empty(pending)) {
				bool stop = fault == FAULT_STOP_OTHERS && c->stopall &&
					    !interrupting;

				announce(c, display, type, ev->src, text, pending, stop);
				stop_others |= stop;
				/* stopall off: the prompt back at the round's end */
				if (fault == FAULT_STOP_OTHERS && !c->stopall && grace < 0)
					grace = 0;
				continue;
			}
			if (!error && !grouped && !interrupting && grace < 0 &&
			    breakpoint_stop(text))
				grace = 1;
			/* Stops at breakpoints get the console's numbers. */
			dbg_bp_renumber(c->bp, &acc, type, ev->src, text);
		}
		sdm_fe_result_free(&r);
		dbg_pump_output(s, 0);
		if (grace == 0 && !grouped && !interrupting && !sdm_set_is_empty(pending)) {
			grouped = true;
			if (!group_stop(c, display, &acc, &early, pending))
				break;
			stop_others = true;
		} else if (grace > 0) {
			grace--;
		}
		if ((deadline && now_ms() >= deadline) ||
		    (s->terminate && *s->terminate))
			break;
		cmd = (struct dbgp_cmd){ .verb = DBGP_WAIT, .wait_ms = DBG_SLICE_MS,
					 .hold_exits = c->stopall };
	}
	if (!sdm_set_is_empty(pending))
		dbg_result_add(&acc, SDM_MSG_REPLY, pending, DBGP_RUNNING);
	dbg_pump_output(s, 0);
	dbg_flush_lines(s);
	dbg_print_result(s, display, &acc);
	dbg_bp_settle(c->bp);
	sdm_set_union(s->exit_held, held);
	if (!sdm_set_is_empty(held)) {
		char *str = sdm_set_to_string(held);

		dbg_info(s, "[%s] held in exit until a run command, kill or detach names it "
			 "(the launcher would end the job)", str ? str : "?");
		free(str);
	}
	sdm_set_free(held);
	show_displays(c, set);
	/* A stop the user's run command brought: the timeline's moment. */
	for (unsigned int i = 0; i < early.nev; i++)
		dbg_result_add(&acc, early.ev[i].type, early.ev[i].src,
			       (const char *)early.ev[i].payload);
	if (user)
		dbg_tl_after_stop(c->tl, &acc);
	sdm_fe_result_free(&acc);
	sdm_fe_result_free(&early);
	sdm_set_free(pending);
}

/*
 * Between commands (at the prompt, or while piped commands are awaited):
 * ask the ranks that still run, without waiting, whether they stopped,
 * exited or are gone. Those that did are reported as "wait" would
 * report them; a fault or a breakpoint among them is announced and, with
 * stopall on, stops the ones still running, exactly as during a run
 * command.
 */
void dbg_watch(struct dbg_console *c)
{
	struct dbg_session *s = c->s;
	struct dbgp_cmd ask = { .verb = DBGP_WAIT, .wait_ms = 0, .hold_exits = c->stopall };
	struct dbgp_cmd wait = { .verb = DBGP_WAIT, .wait_ms = DBG_SLICE_MS };
	struct sdm_idset *running = sdm_set_new(), *changed = sdm_set_new();
	struct sdm_fe_result r = { 0 };
	bool fault = false;

	if (!running || !changed || !s->fe)
		goto out;
	for (uint32_t id = 0; id < s->n; id++)
		if (s->state[id] == DBG_RUNNING && sdm_set_add_element(running, id))
			goto out;
	if (sdm_set_is_empty(running) || dbg_send(s, running, &ask, DBG_CMD_TIMEOUT, &r))
		goto out;
	for (unsigned int i = 0; i < r.nev; i++) {
		const char *text = (const char *)r.ev[i].payload;
		bool error = r.ev[i].type != SDM_MSG_REPLY;

		/* Read as is: run_control() below marks the lost and says so. */
		if (!error && dbgp_reply_kind(text) == DBGP_REPLY_RUNNING)
			continue;
		sdm_set_union(changed, r.ev[i].src);
		fault |= fault_kind(text, error) == FAULT_STOP_OTHERS ||
			 (!error && breakpoint_stop(text));
	}
	if (sdm_set_is_empty(changed))
		goto out;
	/* Asked again, they answer at once; the others are then stopped. */
	run_control(c, fault && c->stopall ? running : changed, "wait", &wait, false);
out:
	sdm_fe_result_free(&r);
	sdm_set_free(running);
	sdm_set_free(changed);
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
		dbg_error(s, "no live rank in the set (every one exited or is lost)");
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
		if (s->host) {
			fputs(",\"node\":", s->out);
			dbg_json_str(s->out, s->host[id]);
		}
		fputs("}\n", s->out);
	} else if (s->host) {
		/* Ranks on other nodes: pids are the nodes' own. */
		fprintf(s->out, "%-6u %-8s %-12.12s %-8d %-8d %s\n", id, state,
			s->host[id], gdb, pid, where);
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

/*
 * Where a rank is, as a merged status row shows it: without the reply's
 * prefix (the state says it), the pc (ranks at one line may have their
 * own address-space layout) or a finish's value, and with the console's
 * breakpoint number.
 */
static char *place(struct dbg_console *c, sdm_id id, const char *where)
{
	char *t = dbg_bp_renumber_text(c->bp, id, where), *pc;

	if (!t)
		return NULL;
	if (!strncmp(t, DBGP_STOPPED, strlen(DBGP_STOPPED)))
		memmove(t, t + strlen(DBGP_STOPPED), strlen(t) - strlen(DBGP_STOPPED) + 1);
	else if (!strncmp(t, DBGP_EXITED, strlen(DBGP_EXITED)))
		memmove(t, t + strlen(DBGP_EXITED), strlen(t) - strlen(DBGP_EXITED) + 1);
	pc = strstr(t, ", pc 0x");
	if (pc)
		*pc = 0;
	/* What a finish returned is not where the rank is. */
	pc = strstr(t, ", returned ");
	if (pc && !strncmp(t, "function-finished, ", 19))
		*pc = 0;
	return t;
}

/* One row per group of ranks in the same state and place. */
static void status_merged(struct dbg_console *c, const struct sdm_idset *set,
			  char **row)
{
	struct dbg_session *s = c->s;
	struct sdm_fe_result acc = { 0 };
	struct sdm_idset *one = sdm_set_new();
	sdm_id id;

	sdm_set_for_each(id, set) {
		struct dbgp_status st = { .where = "" };
		char *where, *line;

		if (id >= s->n || !one)
			break;
		if (!row[id] || dbgp_parse_status(row[id], &st)) {
			snprintf(st.state, sizeof(st.state), "%s", state_word(s->state[id]));
			st.where = row[id] ? row[id] : "";
		}
		where = place(c, id, st.where);
		if (where && asprintf(&line, "%s\t%s", st.state, where) >= 0) {
			sdm_set_clear(one);
			sdm_set_add_element(one, id);
			dbg_result_add(&acc, SDM_MSG_REPLY, one, line);
			free(line);
		}
		free(where);
	}
	for (unsigned int i = 0; i < acc.nev; i++) {
		char *ranks = sdm_set_to_string(acc.ev[i].src), set_text[64];
		char *state = (char *)acc.ev[i].payload, *where = strchr(state, '\t');

		*where++ = 0;
		if (s->json) {
			fputs("{\"type\":\"status\",\"ranks\":", s->out);
			dbg_json_str(s->out, ranks ? ranks : "");
			fputs(",\"state\":", s->out);
			dbg_json_str(s->out, state);
			fputs(",\"where\":", s->out);
			dbg_json_str(s->out, where);
			fputs("}\n", s->out);
		} else {
			snprintf(set_text, sizeof(set_text), "[%s]", ranks ? ranks : "?");
			fprintf(s->out, "%-12s %-8s %s\n", set_text, state, where);
		}
		free(ranks);
	}
	sdm_fe_result_free(&acc);
	sdm_set_free(one);
}

/*
 * status: the ranks merged by state and place; status -p: one row per
 * rank with its gdb's pid and its program's pid.
 */
static void status(struct dbg_console *c, const struct sdm_idset *set,
		   bool per_rank)
{
	struct dbg_session *s = c->s;
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
	if (!per_rank) {
		if (!s->json)
			fprintf(s->out, "%-12s %-8s %s\n", "ranks", "state", "where");
		status_merged(c, set, row);
		fflush(s->out);
		goto out;
	}
	if (!s->json)
		fprintf(s->out, s->host ? "%-6s %-8s %-12s %-8s %-8s %s\n" :
			"%-6s %-8s %s%-8s %-8s %s\n", "rank", "state",
			s->host ? "node" : "", "gdb", "pid", "where");
	sdm_set_for_each(id, set) {
		struct dbgp_status st = { .where = "" };
		char *where;

		if (id >= s->n)
			break;
		if (!row[id] || dbgp_parse_status(row[id], &st)) {
			snprintf(st.state, sizeof(st.state), "%s",
				 state_word(s->state[id]));
			st.where = row[id] ? row[id] : "";
		}
		/* The console's breakpoint numbers, as everywhere else. */
		where = dbg_bp_renumber_text(c->bp, id, st.where);
		status_row(s, id, st.state, st.gdb_pid, st.pid, where ? where : st.where);
		free(where);
	}
	fflush(s->out);
out:
	for (uint32_t i = 0; row && i < s->n; i++)
		free(row[i]);
	free(row);
	sdm_fe_result_free(&r);
	sdm_set_free(live);
}

/*
 * The frames of a stack reply, outermost first, in frames[]: stack's
 * function names as they are; with lines, bt's "#N  func at file:line"
 * lines (innermost first) without their "#N".
 */
static size_t stack_frames(char *text, bool lines, const char **frames)
{
	size_t n = 0;

	for (char *p = strtok(text, "\n"); p && n < MERGE_MAX_FRAMES; p = strtok(NULL, "\n")) {
		if (lines && *p == '#') {
			p += strcspn(p, " ");
			p += strspn(p, " ");
		}
		frames[n++] = p;
	}
	for (size_t i = 0; lines && i < n / 2; i++) {
		const char *t = frames[i];

		frames[i] = frames[n - 1 - i];
		frames[n - 1 - i] = t;
	}
	return n;
}

/* Merged backtraces of set as a prefix tree; with lines, frame by line. */
static void stacks(struct dbg_session *s, const struct sdm_idset *set, bool lines)
{
	struct sdm_idset *live = dbg_live(s, set);
	struct dbgp_cmd cmd = { .verb = lines ? DBGP_BT : DBGP_STACK };
	struct merge_stacks *t = merge_stacks_new();
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
		const char *frames[MERGE_MAX_FRAMES];
		size_t n = 0;
		bool error;
		char *copy;
		const char *text = dbg_event_text(s, ev->type, ev->src,
						  (char *)ev->payload, &error);

		if (error) {
			dbg_result_add(&errs, SDM_MSG_ERROR, ev->src, text);
			continue;
		}
		copy = strdup(text);
		if (!copy)
			continue;
		n = stack_frames(copy, lines, frames);
		sdm_set_for_each(id, ev->src)
			merge_stacks_add(t, id, frames, n);
		free(copy);
	}
	if (s->json) {
		merge_stacks_print_json(t, s->out);
	} else {
		merge_stacks_print(t, s->out);
	}
	if (errs.nev)
		dbg_print_result(s, "stacks", &errs);
	fflush(s->out);
out:
	sdm_fe_result_free(&r);
	sdm_fe_result_free(&errs);
	merge_stacks_free(t);
	sdm_set_free(live);
}

/* Parse "[SET]" at *p; ret gets the ranks. 0, or -errno after a message. */
static int parse_prefix(struct dbg_session *s, const char **p,
			struct sdm_idset *ret)
{
	const char *close = strchr(*p, ']'), *end;
	char set[256];
	size_t n = 0;
	sdm_id max;

	/* Spaces inside the brackets are allowed: "[0, 2 - 3]". */
	for (const char *q = *p + 1; close && q < close && n < sizeof(set) - 1; q++)
		if (!isspace((unsigned char)*q))
			set[n++] = *q;
	set[n] = 0;
	if (!close || sdm_set_parse(ret, set, &end) < 0 || *end ||
	    sdm_set_is_empty(ret)) {
		dbg_error(s, "bad rank set in '%.60s' (want e.g. [0-3,7])", *p);
		return -EINVAL;
	}
	if (sdm_set_count_range(ret, 0, s->n - 1) != sdm_set_size(ret)) {
		max = s->n - 1;
		dbg_error(s, "rank out of range: this session has ranks 0-%u", max);
		return -ERANGE;
	}
	*p = close + 1;
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
	const char *fmt;		/* print/FMT: "/FMT", else NULL */
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

	/* start is the session's own first run to main: not the user's stop */
	run_control(c, call->set, call->display, &cmd, verb != DBGP_START);
	return 0;
}

/* quit: at a terminal, with ranks still alive, only after asking. */
static int cmd_quit(struct dbg_console *c, const struct dbg_call *call)
{
	struct sdm_idset *all = sdm_set_new(), *live = NULL;
	char question[160];
	bool ask;

	(void)call;
	if (all && sdm_set_add_range(all, 0, c->s->n - 1) == 0)
		live = dbg_live(c->s, all);
	ask = c->confirm && live && !sdm_set_is_empty(live);
	if (ask)
		snprintf(question, sizeof(question),
			 "%zu rank%s still alive (%s). Quit anyway? (y or n) ",
			 sdm_set_size(live), sdm_set_size(live) == 1 ? " is" : "s are",
			 c->mpir && !dbg_mpir_launched(c->mpir) ? "they will be detached" :
			 "they will be killed");
	sdm_set_free(all);
	sdm_set_free(live);
	return ask ? c->confirm(question) : 1;
}

/*
 * What the front end received for the previous command: one message per
 * distinct reply however many ranks sent it, when aggregation works.
 */
static int cmd_sdm(struct dbg_console *c, const struct dbg_call *call)
{
	struct dbg_session *s = c->s;

	(void)call;
	if (s->json)
		fprintf(s->out, "{\"type\":\"sdm\",\"messages\":%llu,\"bytes\":%llu}\n",
			(unsigned long long)s->last_frames,
			(unsigned long long)s->last_bytes);
	else
		dbg_info(s, "sdm: the previous command: %llu messages, %llu bytes "
			 "reached the front end", (unsigned long long)s->last_frames,
			 (unsigned long long)s->last_bytes);
	return 0;
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

static int cmd_stopall(struct dbg_console *c, const struct dbg_call *call)
{
	if (!strcmp(call->arg, "on") || !strcmp(call->arg, "off"))
		c->stopall = !strcmp(call->arg, "on");
	else if (*call->arg)
		dbg_error(c->s, "stopall: on or off, not '%.40s'", call->arg);
	dbg_info(c->s, "stopall: %s", c->stopall ?
		 "on (a rank's breakpoint or fault stops the others)" :
		 "off (the others run on)");
	return 0;
}

static int cmd_status(struct dbg_console *c, const struct dbg_call *call)
{
	if (*call->arg && strcmp(call->arg, "-p")) {
		dbg_error(c->s, "status: -p or nothing, not '%.40s'", call->arg);
		return 0;
	}
	status(c, call->set, !strcmp(call->arg, "-p"));
	if (c->pstep && c->pstep->mpi)
		dbg_pstep_show(c->pstep);
	return 0;
}

static int cmd_stacks(struct dbg_console *c, const struct dbg_call *call)
{
	if (*call->arg && strcmp(call->arg, "-l")) {
		dbg_error(c->s, "stacks: -l or nothing, not '%.40s'", call->arg);
		return 0;
	}
	stacks(c->s, call->set, !strcmp(call->arg, "-l"));
	return 0;
}

/* "x = 3" (not ==, !=, <=, >=): the length of "x", else 0. */
static size_t assigned_length(const char *expr)
{
	for (const char *p = expr; (p = strchr(p, '=')); p++) {
		if (p > expr && strchr("=!<>", p[-1]))
			continue;
		if (p[1] == '=') {
			p++;
			continue;
		}
		while (p > expr && isspace((unsigned char)p[-1]))
			p--;
		return p - expr;
	}
	return 0;
}

/*
 * A print reply as the console shows it: "EXPR = VALUE", whatever gdb
 * said ("$7 = VALUE" for print/FMT, whose history numbers differ from
 * rank to rank); an assignment "x = 3" as "x = VALUE", once.
 */
static char *print_text(const char *expr, const char *reply)
{
	size_t el = strlen(expr), lhs = assigned_length(expr);
	const char *value = reply;
	char *out;

	if (reply[0] == '$' && strstr(reply, " = "))
		value = strstr(reply, " = ") + 3;
	else if (!strncmp(reply, expr, el) && !strncmp(reply + el, " = ", 3))
		value = reply + el + 3;
	else
		return strdup(reply);
	if (asprintf(&out, "%.*s = %s", (int)(lhs ? lhs : el), expr, value) < 0)
		return NULL;
	return out;
}

#define DBG_SUMMARY_MIN	5	/* distinct values from which a summary comes first */

/* "N distinct values over M ranks; min V [r], max V [r]" (numbers only). */
static void print_summary(struct dbg_session *s, const struct sdm_fe_result *acc,
			  size_t skip)
{
	size_t ranks = 0, values = 0, lo = 0, hi = 0;
	double vlo = 0, vhi = 0;
	bool numeric = true;
	char *a, *b;

	for (unsigned int i = 0; i < acc->nev; i++) {
		const char *v = (char *)acc->ev[i].payload + skip;
		char *end;
		double d;

		if (acc->ev[i].type != SDM_MSG_REPLY)
			continue;
		values++;
		ranks += sdm_set_size(acc->ev[i].src);
		d = strtod(v, &end);
		numeric &= end != v && !*end;
		if (values == 1 || d < vlo) {
			vlo = d;
			lo = i;
		}
		if (values == 1 || d > vhi) {
			vhi = d;
			hi = i;
		}
	}
	if (values < DBG_SUMMARY_MIN)
		return;
	if (!numeric) {
		dbg_info(s, "%zu distinct values over %zu ranks:", values, ranks);
		return;
	}
	a = sdm_set_to_string(acc->ev[lo].src);
	b = sdm_set_to_string(acc->ev[hi].src);
	dbg_info(s, "%zu distinct values over %zu ranks; min %s [%s], max %s [%s]:",
		 values, ranks, (char *)acc->ev[lo].payload + skip, a ? a : "?",
		 (char *)acc->ev[hi].payload + skip, b ? b : "?");
	free(a);
	free(b);
}

/* EXPR (with "/FMT" or NULL) on the live ranks of set, merged, summarised. */
static void print_expr(struct dbg_console *c, const struct sdm_idset *set,
		       const char *fmt, const char *expr, const char *display)
{
	struct dbg_session *s = c->s;
	struct dbgp_cmd cmd = { .verb = DBGP_PRINT, .arg = expr };
	struct sdm_fe_result r, acc = { 0 };
	struct sdm_idset *live;
	char cli[DBG_CMD_MAX + 16];

	if (fmt) {
		snprintf(cli, sizeof(cli), "print%s %s", fmt, expr);
		cmd = (struct dbgp_cmd){ .verb = DBGP_CLI, .arg = cli };
	}
	live = dbg_live(s, set);
	if (!live)
		return;
	if (sdm_set_is_empty(live))
		dbg_error(s, "no live rank in the set (every one exited or is lost)");
	else if (dbg_send(s, live, &cmd, DBG_CMD_TIMEOUT, &r) < 0)
		dbg_error(s, "print: no reply");
	else {
		for (unsigned int i = 0; i < r.nev; i++) {
			bool error;
			const char *text = dbg_event_text(s, r.ev[i].type, r.ev[i].src,
							  (char *)r.ev[i].payload, &error);
			char *t = error ? strdup(text) : print_text(expr, text);

			if (t)
				dbg_result_add(&acc, error ? SDM_MSG_ERROR : SDM_MSG_REPLY,
					       r.ev[i].src, t);
			free(t);
		}
		sdm_fe_result_free(&r);
		dbg_pump_output(s, 0);
		if (!s->json) {
			size_t lhs = assigned_length(expr);

			print_summary(s, &acc, (lhs ? lhs : strlen(expr)) + 3);
		}
		dbg_print_result(s, display, &acc);
	}
	sdm_fe_result_free(&acc);
	sdm_set_free(live);
}

/* print[/FMT] EXPR: values merged over ranks, summarised when many. */
static int cmd_print(struct dbg_console *c, const struct dbg_call *call)
{
	if (!*call->arg) {
		dbg_error(c->s, "print: an expression is needed");
		return 0;
	}
	print_expr(c, call->set, call->fmt, call->arg, call->display);
	return 0;
}

/*
 * The display expressions, printed after every stop on the ranks of the
 * run command that stopped; one out of scope there shows its error,
 * which does not fail a batch.
 */
static void show_displays(struct dbg_console *c, const struct sdm_idset *set)
{
	struct sdm_idset *stopped = sdm_set_copy(set);
	unsigned int errors = c->s->errors;
	sdm_id id;

	if (!stopped)
		return;
	sdm_set_for_each(id, set)
		if (id >= c->s->n || c->s->state[id] != DBG_STOPPED)
			sdm_set_remove_element(stopped, id);
	for (unsigned int i = 0; i < c->ndisplay && !sdm_set_is_empty(stopped); i++) {
		char display[DBG_CMD_MAX + 32];

		snprintf(display, sizeof(display), "display%s %s", c->display[i].fmt,
			 c->display[i].expr);
		print_expr(c, stopped, *c->display[i].fmt ? c->display[i].fmt : NULL,
			   c->display[i].expr, display);
	}
	c->s->errors = errors;
	sdm_set_free(stopped);
}

/* display[/FMT] EXPR: shown now and after every stop; display: all now. */
static int cmd_display(struct dbg_console *c, const struct dbg_call *call)
{
	struct dbg_display *d = &c->display[c->ndisplay];

	if (*call->arg && c->ndisplay == DBG_MAX_DISPLAYS) {
		dbg_error(c->s, "display: at most %d expressions", DBG_MAX_DISPLAYS);
		return 0;
	}
	if (*call->arg) {
		d->expr = strdup(call->arg);
		if (!d->expr)
			return 0;
		snprintf(d->fmt, sizeof(d->fmt), "%s", call->fmt ? call->fmt : "");
		c->ndisplay++;
		print_expr(c, call->set, call->fmt, d->expr, call->display);
		return 0;
	}
	for (unsigned int i = 0; i < c->ndisplay; i++)
		dbg_info(c->s, "%u: display%s %s", i + 1, c->display[i].fmt,
			 c->display[i].expr);
	show_displays(c, call->set);
	return 0;
}

/* undisplay [N]: forget display N (from 1), or all of them. */
static int cmd_undisplay(struct dbg_console *c, const struct dbg_call *call)
{
	unsigned long n = strtoul(call->arg, NULL, 10);

	if (*call->arg && (n < 1 || n > c->ndisplay)) {
		dbg_error(c->s, "undisplay: no display number '%.20s'", call->arg);
		return 0;
	}
	for (unsigned int i = 0; i < c->ndisplay; i++) {
		if (*call->arg && i != n - 1)
			continue;
		free(c->display[i].expr);
		c->display[i].expr = NULL;
	}
	n = 0;
	for (unsigned int i = 0; i < c->ndisplay; i++)
		if (c->display[i].expr)
			c->display[n++] = c->display[i];
	c->ndisplay = n;
	return 0;
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

/* bt [N|-N]: gdb's count; bt full and other forms go to gdb as they are. */
static int cmd_bt(struct dbg_console *c, const struct dbg_call *call)
{
	struct dbgp_cmd cmd = { .verb = DBGP_BT, .arg = call->arg };
	char buf[DBGP_CMD_MAX + 1];

	if (*call->arg && dbgp_encode(buf, sizeof(buf), &cmd) < 0)
		return send_text(c, &(struct dbg_call){ .cmd = call->cmd, .set = call->set,
			.prefixed = call->prefixed, .arg = call->display,
			.display = call->display }, DBGP_CLI);
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
	if (kind == DBGP_EXEC_ADVANCE && !*call->arg) {
		dbg_error(c->s, "advance: a location is needed");
		return 0;
	}
	if (kind == DBGP_EXEC_UNTIL || kind == DBGP_EXEC_ADVANCE)
		cmd.arg = call->arg;
	dbg_release_exits(c->s, call->set);
	if ((kind == DBGP_EXEC_STEP || kind == DBGP_EXEC_NEXT) && c->pstep &&
	    c->pstep->mpi) {
		dbg_pstep_run(c->pstep, call->set, kind, call->display);
		dbg_tl_after_stop(c->tl, NULL);
		return 0;
	}
	run_control(c, call->set, call->display, &cmd, true);
	return 0;
}

/*
 * kill, detach: gdb's, on the live ranks of the set; those it ended
 * leave the default set and show "exited killed" or "exited detached"
 * in status.
 */
static int cmd_end(struct dbg_console *c, const struct dbg_call *call)
{
	struct dbg_session *s = c->s;
	struct dbgp_cmd cmd = { .verb = DBGP_CLI, .arg = call->cmd->name };
	struct sdm_idset *live = dbg_live(s, call->set);
	struct sdm_fe_result r, acc = { 0 };
	bool kill = !strcmp(call->cmd->name, "kill");
	bool held = sdm_set_intersects(s->exit_held, call->set);

	if (!live)
		return 0;
	/* Ranks held in their exit end as they were ending, with their code. */
	dbg_release_exits(s, call->set);
	if (sdm_set_is_empty(live)) {
		if (!held)
			dbg_error(s, "no live rank in the set (every one exited or is lost)");
	} else if (dbg_send(s, live, &cmd, DBG_CMD_TIMEOUT, &r) < 0)
		dbg_error(s, "%s: no reply", call->cmd->name);
	else {
		for (unsigned int i = 0; i < r.nev; i++) {
			bool error;
			const char *text = dbg_event_text(s, r.ev[i].type, r.ev[i].src,
							  (char *)r.ev[i].payload, &error);

			/* gdb's own words name each pid: one line for all instead. */
			dbg_result_add(&acc, error ? SDM_MSG_ERROR : SDM_MSG_REPLY, r.ev[i].src,
				       error ? text : kill ? DBGP_EXITED "killed" :
				       DBGP_EXITED "detached");
		}
		sdm_fe_result_free(&r);
		dbg_pump_output(s, 0);
		dbg_print_result(s, call->display, &acc);
	}
	sdm_fe_result_free(&acc);
	sdm_set_free(live);
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

/*
 * gdb's run would start a copy of the program outside the job (under
 * MPIR, a singleton MPI process): refused. The job runs once a session.
 */
static int cmd_run(struct dbg_console *c, const struct dbg_call *call)
{
	(void)call;
	dbg_error(c->s, "run: %s runs once per session; quit and start crdbg again to rerun it",
		  c->mpir ? "an MPI job started by its launcher" : "the job");
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

/* checkpoint, checkpoints, restart, back: the timeline (timeline.c). */
static int cmd_checkpoint(struct dbg_console *c, const struct dbg_call *call)
{
	const char *name = call->cmd->name;

	if (!c->tl) {
		dbg_error(c->s, "%s: not available in this session (out of memory)", name);
		return 0;
	}
	if (!strcmp(name, "checkpoints"))
		dbg_tl_list(c->tl);
	else if (!strcmp(name, "back"))
		dbg_tl_back(c->tl);
	else if (!strcmp(name, "restart"))
		dbg_tl_restart(c->tl, call->arg);
	else
		dbg_tl_checkpoint(c->tl);
	return 0;
}

/*
 * set: the timeline's settings (auto-checkpoint, checkpoint-keep,
 * checkpoint-budget); any other set goes to gdb as it was typed
 * (set var x = 3).
 */
static int cmd_set(struct dbg_console *c, const struct dbg_call *call)
{
	struct dbg_call to_gdb = *call;

	if (c->tl && !strncmp(call->arg, "auto-checkpoint", 15) && c->mpir &&
	    !dbg_mpir_launched(c->mpir)) {
		dbg_error(c->s, "set auto-checkpoint: a job joined with crdbg attach cannot be checkpointed from the console");
		return 0;
	}
	if (c->tl && dbg_tl_set(c->tl, call->arg))
		return 0;
	to_gdb.arg = call->display;
	return send_text(c, &to_gdb, DBGP_CLI);
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
	{ "until", { "u" }, "[LOC]", "run until a line past this one (or LOC) in this frame; "
	  "waits likewise", cmd_exec },
	{ "advance", { NULL }, "LOC", "run until LOC (or the current frame returns); waits likewise",
	  cmd_exec },
	{ "stepi", { "si" }, NULL, "one instruction, into calls; waits likewise", cmd_exec },
	{ "nexti", { "ni" }, NULL, "one instruction, over calls; waits likewise", cmd_exec },
	{ "kill", { "k" }, NULL, "end the ranks' programs (an MPI launcher then ends the job)",
	  cmd_end },
	{ "detach", { NULL }, NULL, "let the ranks run on without the debugger", cmd_end },
	{ "run", { "r" }, NULL, "refused: the job runs once per session (never a singleton copy)",
	  cmd_run },
	{ "start", { NULL }, NULL, NULL, cmd_start },	/* the session's first run to main */
	{ "hold", { NULL }, "[RANKS]", "parallel step: keep the ranks where they are (yellow)", cmd_hold },
	{ "release", { NULL }, "[RANKS]", "parallel step: let held ranks move again (green)", cmd_hold },
	{ "mpi", { NULL }, "[frames on|off]", "each rank's colour, position, steps and MPI call; "
	  "or show MPI's own frames", cmd_mpi },
	{ "interrupt", { NULL }, NULL, "stop the running ranks", cmd_interrupt },
	{ "wait", { NULL }, NULL, "wait for running ranks to stop", cmd_wait },
	{ "stopall", { NULL }, "[on|off]",
	  "a rank's breakpoint or fault (signal, exit code) stops the others (on)", cmd_stopall },
	{ "timeout", { NULL }, "SECONDS", "longest wait of a run command (0: no limit)",
	  cmd_timeout },
	{ "print", { "p" }, "EXPR", "evaluate EXPR; identical values are merged", cmd_print },
	{ "display", { NULL }, "[/FMT] [EXPR]", "print EXPR now and after every stop; "
	  "alone: the list, printed now", cmd_display },
	{ "undisplay", { NULL }, "[N]", "forget display N, or all", cmd_undisplay },
	{ "bt", { "backtrace", "where" }, "[N|-N]",
	  "backtrace of each rank, merged (N innermost, -N outermost frames)", cmd_bt },
	{ "stacks", { NULL }, "[-l]", "merged stacks of all ranks as a tree; -l: with lines",
	  cmd_stacks },
	{ "status", { NULL }, "[-p]", "ranks merged by state and place; -p: one row per rank "
	  "with gdb and program pids",
	  cmd_status },
	{ "input", { NULL }, "TEXT", "TEXT and a newline to the programs' stdin (rank 0 by default)",
	  cmd_input },
	{ "checkpoint", { NULL }, NULL, "checkpoint every rank (libcrdbg, crdbg.ko); prints the handles",
	  cmd_checkpoint },
	{ "checkpoints", { NULL }, NULL, "the session's checkpoints: number, stop, size, handles",
	  cmd_checkpoint },
	{ "restart", { NULL }, "[N|H[,H..]]", "back to checkpoint N or handles (default: the last "
	  "checkpoint), breakpoints kept", cmd_checkpoint },
	{ "back", { NULL }, NULL, "restart the checkpoint before the job's position", cmd_checkpoint },
	{ "set", { NULL }, "auto-checkpoint on|off | checkpoint-keep K | checkpoint-budget SIZE | ...",
	  "checkpoint at every stop; keep at most K checkpoints (0: all); other set: gdb's",
	  cmd_set },
	{ "echo", { NULL }, "TEXT", "print TEXT", cmd_echo },
	{ "sdm", { NULL }, NULL, "messages and bytes the previous command brought the front end",
	  cmd_sdm },
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
	char word[32], fmt[32], display[DBG_CMD_MAX + 1];
	const char *p = line;
	size_t wl;
	int quit = 0;
	bool counting;

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
	if (!call.cmd && strchr(word, '/')) {
		/* print/x, p/x: the format goes with the command. */
		char *slash = strchr(word, '/');

		call.fmt = p + (slash - word);
		*slash = 0;
		call.cmd = find_command(word);
		if (call.cmd && call.cmd->run != cmd_print && call.cmd->run != cmd_display)
			call.cmd = NULL;
		if (call.cmd)
			snprintf(fmt, sizeof(fmt), "%.*s", (int)(wl - (slash - word)), call.fmt);
		call.fmt = call.cmd ? fmt : NULL;
	}
	counting = s->fe && !(call.cmd && call.cmd->run == cmd_sdm);
	if (counting)
		sdm_fe_counters_reset(s->fe);
	if (call.cmd) {
		quit = call.cmd->run(c, &call);
	} else {
		/* Not ours: the whole command goes to gdb. */
		call.arg = p;
		send_text(c, &call, DBGP_CLI);
	}
	if (counting)
		sdm_fe_counters(s->fe, &s->last_frames, &s->last_bytes);
out:
	sdm_set_free(call.set);
	return quit;
}
