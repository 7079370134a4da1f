// SPDX-License-Identifier: GPL-2.0
/*
 * The parallel step (pstep.h, Documentation/console.md). One parallel
 * step or next on a rank set:
 *
 *  1. Every rank of the set that is not held and finished its previous
 *     motion gets the sequential command (a rank stopped inside an MPI
 *     call, as in MPI_Init at the start, is first run back to its call
 *     site). A red rank, whose earlier motion waits in MPI, gets nothing
 *     new: it is resumed to finish that motion (back to its call site,
 *     then the motion it was given).
 *  2. While some of them run, the console reads every rank's MPI state
 *     (the server reads it through /proc/PID/mem, the rank running) and
 *     asks the model (pstep-model.c) which running ranks are stuck: in a
 *     call nobody who can move will complete.
 *  3. When every rank still running is stuck, each of them must show,
 *     in its own state, progress tests made after the others were seen
 *     stopped that still did not complete its call (so a message already
 *     on its way is not missed); then the step is complete. Stuck ranks
 *     are interrupted and turn red (inside the call, shown at its line);
 *     stuck ranks that wait only for each other are a deadlock, named by
 *     its cycle.
 *
 * Waiting is done in slices (polling the servers), but the decision to
 * stop waiting comes only from the MPI states.
 */
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
#include "pstep.h"
#include "session.h"

#define PS_SLICE_MS	100	/* one wait round */
#define PS_CONFIRM_POLLS 2	/* progress tests that prove a call stuck */

enum ps_phase { PS_IDLE, PS_RETURNING, PS_MOVING, PS_DONE };

/* One parallel step in progress. */
struct ps_run {
	struct dbg_pstep *p;
	enum ps_phase *phase;
	int *call_line;		/* PS_RETURNING: the line of the MPI call */
	bool *stuck;
	uint64_t *snap_calls, *snap_polls;
	bool snapped;
	struct sdm_fe_result shown;	/* stops worth printing as they are */
};

struct dbg_pstep *dbg_pstep_new(struct dbg_session *s)
{
	struct dbg_pstep *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->s = s;
	return p;
}

void dbg_pstep_free(struct dbg_pstep *p)
{
	if (!p)
		return;
	free(p->r);
	free(p);
}

static int ensure_ranks(struct dbg_pstep *p)
{
	if (p->r && p->n == p->s->n)
		return 0;
	free(p->r);
	p->n = p->s->n;
	p->r = calloc(p->n ? p->n : 1, sizeof(*p->r));
	return p->r ? 0 : -ENOMEM;
}

static bool unhex(const char *hex, size_t len, struct crdbg_mpi_state *st)
{
	return dbgp_hex_decode(st, sizeof(*st), hex, len) == 0 &&
	       st->magic == CRDBG_MPI_MAGIC && st->version == CRDBG_MPI_VERSION;
}

/* One rank's answer to "mpi" (crdbg/dbgproto.h). */
static void take_mpi(struct ps_rank *r, const char *text, bool error)
{
	const char *fields = dbgp_reply_fields(text);
	size_t tl = dbgp_reply_text_len(text);
	struct dbgp_field f;

	if (error) {
		if (dbgp_reply_kind(text) == DBGP_REPLY_LOST)
			r->lost = true;
		return;
	}
	r->running = tl == strlen(DBGP_RUNNING) && !strncmp(text, DBGP_RUNNING, tl);
	if (tl == 6 && !strncmp(text, "exited", 6))
		r->exited = true;
	r->have_state = false;
	if (!r->running) {
		r->func[0] = r->file[0] = 0;
		r->line = 0;
	}
	while (fields && dbgp_next_field(&fields, &f)) {
		if (dbgp_field_is(&f, "state"))
			r->have_state = unhex(f.value, f.vlen, &r->st);
		else if (dbgp_field_is(&f, "func"))
			snprintf(r->func, sizeof(r->func), "%.*s", (int)f.vlen, f.value);
		else if (dbgp_field_is(&f, "file"))
			snprintf(r->file, sizeof(r->file), "%.*s", (int)f.vlen, f.value);
		else if (dbgp_field_is(&f, "line"))
			r->line = atoi(f.value);
	}
}

/* Read the MPI state and position of the live ranks of set. */
static void look(struct dbg_pstep *p, const struct sdm_idset *set)
{
	struct dbgp_cmd cmd = { .verb = DBGP_MPI };
	struct sdm_idset *live = dbg_live(p->s, set);
	struct sdm_fe_result res;
	sdm_id id;

	/* Ranks that ended under other commands (continue, kill, a restart back). */
	sdm_set_for_each(id, set) {
		if (id >= p->n)
			break;
		p->r[id].exited = p->s->state[id] == DBG_EXITED;
		p->r[id].lost |= p->s->state[id] == DBG_LOST;
	}
	if (!live || sdm_set_is_empty(live) ||
	    dbg_send(p->s, live, &cmd, DBG_CMD_TIMEOUT, &res) < 0) {
		sdm_set_free(live);
		return;
	}
	for (unsigned int i = 0; i < res.nev; i++) {
		const struct sdm_fe_event *ev = &res.ev[i];
		bool error;
		const char *text = dbg_event_text(p->s, ev->type, ev->src,
						  (const char *)ev->payload, &error);

		sdm_set_for_each(id, ev->src)
			if (id < p->n)
				take_mpi(&p->r[id], text, error);
	}
	sdm_fe_result_free(&res);
	sdm_set_free(live);
}

static struct sdm_idset *all_ranks(struct dbg_pstep *p)
{
	struct sdm_idset *all = sdm_set_new();

	if (all && p->n)
		sdm_set_add_range(all, 0, p->n - 1);
	return all;
}

void dbg_pstep_frames(struct dbg_pstep *p, const struct sdm_idset *set, bool show)
{
	struct dbgp_cmd cmd = { .verb = DBGP_MPI,
				.arg = show ? "frames on" : "frames off" };
	struct sdm_idset *live = dbg_live(p->s, set);
	struct sdm_fe_result res;

	p->show_lib = show;
	if (live && !sdm_set_is_empty(live) &&
	    dbg_send(p->s, live, &cmd, DBG_CMD_TIMEOUT, &res) == 0)
		sdm_fe_result_free(&res);
	sdm_set_free(live);
}

void dbg_pstep_refresh(struct dbg_pstep *p)
{
	struct sdm_idset *all, *with;
	bool sync = false;
	char *str;

	if (ensure_ranks(p) < 0)
		return;
	all = all_ranks(p);
	with = sdm_set_new();
	if (all && with)
		look(p, all);
	for (uint32_t i = 0; with && i < p->n; i++) {
		if (p->r[i].have_state) {
			sdm_set_add_element(with, i);
			sync |= p->r[i].st.sync_sends;
		}
	}
	if (with && !sdm_set_is_empty(with) && !p->announced) {
		str = sdm_set_to_string(with);
		p->mpi = true;
		p->announced = true;
		dbg_pstep_frames(p, with, false);
		dbg_info(p->s, "[%s]: libcrdbg-mpi: step and next are parallel steps%s",
			 str ? str : "?",
			 sync ? "; MPI_Send is synchronous (MPI_Ssend) while debugging" : "");
		free(str);
	}
	sdm_set_free(with);
	sdm_set_free(all);
}

/* A stop to show as gdb's line too: not the end of an ordinary step. */
static bool worth_showing(const char *text)
{
	const char *f = dbgp_reply_fields(text);
	struct dbgp_field fl;

	if (dbgp_reply_kind(text) == DBGP_REPLY_EXITED)
		return true;
	while (f && dbgp_next_field(&f, &fl))
		if (dbgp_field_is(&fl, "reason"))
			return !(fl.vlen == 18 && !memcmp(fl.value, "end-stepping-range", 18)) &&
			       !(fl.vlen == 17 && !memcmp(fl.value, "function-finished", 17));
	return false;
}

/* Remember a reply of rank id to print at the end, identical ones merged. */
static void show_later(struct ps_run *run, uint8_t type, sdm_id id, const char *reply)
{
	struct sdm_fe_result *acc = &run->shown;
	/* A breakpoint's number as the console's table has it. */
	char *own = run->p->bp ? dbg_bp_renumber_text(run->p->bp, id, reply) : NULL;
	const char *text = own ? own : reply;
	struct sdm_fe_event *v;

	for (unsigned int i = 0; i < acc->nev; i++) {
		if (acc->ev[i].type == type && !strcmp((char *)acc->ev[i].payload, text)) {
			sdm_set_add_element(acc->ev[i].src, id);
			free(own);
			return;
		}
	}
	v = realloc(acc->ev, (acc->nev + 1) * sizeof(*v));
	if (!v) {
		free(own);
		return;
	}
	acc->ev = v;
	v = &acc->ev[acc->nev];
	v->type = type;
	v->src = sdm_set_new();
	v->payload = (uint8_t *)strdup(text);
	v->len = strlen(text);
	free(own);
	if (!v->src || !v->payload) {
		sdm_set_free(v->src);
		free(v->payload);
		return;
	}
	sdm_set_add_element(v->src, id);
	acc->nev++;
}

/* The line a stop reply names, 0 if none. */
static int stop_line(const char *text)
{
	const char *f = dbgp_reply_fields(text);
	struct dbgp_field fl;

	while (f && dbgp_next_field(&f, &fl))
		if (dbgp_field_is(&fl, "line"))
			return atoi(fl.value);
	return 0;
}

/*
 * Back from an MPI call in its caller: is the motion done already? The
 * return address starts the next line when the call was the last thing
 * on its line, and a step or next ends at the start of a new line.
 */
static bool returned_to_new_line(struct ps_run *run, sdm_id id, const char *text)
{
	int line = stop_line(text);

	return line && run->call_line[id] && line != run->call_line[id];
}

/* Replies to a run command or a wait: phases move on. */
static void take_run_replies(struct ps_run *run, struct sdm_fe_result *res,
			     struct sdm_idset *next)
{
	struct dbg_pstep *p = run->p;
	sdm_id id;

	for (unsigned int i = 0; i < res->nev; i++) {
		const struct sdm_fe_event *ev = &res->ev[i];
		bool error;
		const char *text = dbg_event_text(p->s, ev->type, ev->src,
						  (const char *)ev->payload, &error);
		enum dbgp_reply_kind kind = dbgp_reply_kind(text);

		if (!error && kind == DBGP_REPLY_RUNNING)
			continue;
		sdm_set_for_each(id, ev->src) {
			bool returning;

			if (id >= p->n)
				break;
			returning = run->phase[id] == PS_RETURNING;
			if (!error && kind == DBGP_REPLY_STOPPED &&
			    run->phase[id] == PS_RETURNING &&
			    !returned_to_new_line(run, id, text)) {
				/* Back at the call site: now the motion itself. */
				run->phase[id] = PS_MOVING;
				sdm_set_add_element(next, id);
				continue;
			}
			run->phase[id] = PS_DONE;
			p->s->state[id] = error ? DBG_LOST :
					  kind == DBGP_REPLY_EXITED ? DBG_EXITED : DBG_STOPPED;
			p->r[id].exited = kind == DBGP_REPLY_EXITED;
			p->r[id].lost |= kind == DBGP_REPLY_LOST;
			p->r[id].red = false;
			/* Our breakpoint at the call site is no news. */
			if (error || kind == DBGP_REPLY_EXITED ||
			    (!returning && worth_showing(text)))
				show_later(run, error ? SDM_MSG_ERROR : SDM_MSG_REPLY, id, text);
		}
	}
	sdm_fe_result_free(res);
}

/* Send a run command to set (nothing if empty) and take its replies. */
static void run_cmd(struct ps_run *run, const struct sdm_idset *set,
		    const struct dbgp_cmd *cmd, struct sdm_idset *next)
{
	struct sdm_fe_result res;
	sdm_id id;

	if (sdm_set_is_empty(set))
		return;
	sdm_set_for_each(id, set)
		if (id < run->p->n)
			run->p->s->state[id] = DBG_RUNNING;
	if (dbg_send(run->p->s, set, cmd, DBG_CMD_TIMEOUT + cmd->wait_ms, &res) < 0) {
		dbg_error(run->p->s, "parallel step: no answer from the ranks");
		sdm_set_for_each(id, set)
			if (id < run->p->n)
				run->phase[id] = PS_DONE;
		return;
	}
	take_run_replies(run, &res, next);
}

/* Start the motion of kind on the ranks of set (back at their call site). */
static void move(struct ps_run *run, struct sdm_idset *set)
{
	struct sdm_idset *again = sdm_set_new();
	sdm_id id;

	while (again && !sdm_set_is_empty(set)) {
		for (int k = 0; k < __DBGP_EXEC_LAST; k++) {
			struct dbgp_cmd cmd = { .verb = DBGP_EXEC, .exec = k };
			struct sdm_idset *group = sdm_set_new();

			if (!group)
				break;
			sdm_set_for_each(id, set)
				if (id < run->p->n && run->p->r[id].pending == (enum dbgp_exec)k)
					sdm_set_add_element(group, id);
			run_cmd(run, group, &cmd, again);
			sdm_set_free(group);
		}
		sdm_set_assign(set, again);
		sdm_set_clear(again);
	}
	sdm_set_free(again);
}

/* The ranks of the step still on their way. */
static struct sdm_idset *active(struct ps_run *run)
{
	struct sdm_idset *a = sdm_set_new();

	for (uint32_t i = 0; a && i < run->p->n; i++)
		if (run->phase[i] == PS_RETURNING || run->phase[i] == PS_MOVING)
			sdm_set_add_element(a, i);
	return a;
}

/*
 * Every active rank is stuck, and has shown PS_CONFIRM_POLLS progress
 * tests since the snapshot taken when it was first seen stuck (a rank
 * whose call is not made of tests needs none).
 */
static bool confirmed(struct ps_run *run, const struct sdm_idset *act)
{
	struct dbg_pstep *p = run->p;
	bool all = true, ok = true;
	sdm_id id;

	ps_model_stuck(p->r, p->n, run->stuck);
	sdm_set_for_each(id, act)
		all &= id < p->n && run->stuck[id];
	if (!all) {
		run->snapped = false;
		return false;
	}
	if (!run->snapped) {
		sdm_set_for_each(id, act) {
			run->snap_calls[id] = p->r[id].st.ncalls;
			run->snap_polls[id] = p->r[id].st.polls;
		}
		run->snapped = true;
		return false;
	}
	sdm_set_for_each(id, act) {
		const struct crdbg_mpi_state *st = &p->r[id].st;

		if (st->ncalls != run->snap_calls[id]) {
			run->snapped = false;
			return false;
		}
		if (st->pollable && st->polls < run->snap_polls[id] + PS_CONFIRM_POLLS)
			ok = false;
	}
	return ok;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait rounds until every active rank finished or is confirmed stuck. */
static void wait_step(struct ps_run *run, struct sdm_idset *stuck_set)
{
	struct dbg_session *s = run->p->s;
	uint64_t deadline = s->wait_s ? now_ms() + s->wait_s * 1000ull : 0;
	struct dbgp_cmd wait = { .verb = DBGP_WAIT, .wait_ms = PS_SLICE_MS };
	struct sdm_idset *act = NULL, *all = all_ranks(run->p), *next = sdm_set_new();

	while (all && next && (act = active(run)) && !sdm_set_is_empty(act)) {
		run_cmd(run, act, &wait, next);
		move(run, next);
		sdm_set_free(act);
		act = active(run);
		dbg_pump_output(s, 0);
		if (!act || sdm_set_is_empty(act))
			break;
		look(run->p, all);
		if (confirmed(run, act)) {
			sdm_set_assign(stuck_set, act);
			break;
		}
		if (*s->interrupted || (s->terminate && *s->terminate) ||
		    (deadline && now_ms() >= deadline)) {
			*s->interrupted = 0;
			dbg_info(s, "parallel step interrupted; ranks still moving are stopped where they are");
			sdm_set_free(act);
			act = NULL;
			break;
		}
		sdm_set_free(act);
	}
	sdm_set_free(act);
	sdm_set_free(all);
	sdm_set_free(next);
}

/* Name the deadlock among the stuck ranks, if they only wait for each other. */
static void report_deadlock(struct ps_run *run)
{
	struct dbg_pstep *p = run->p;
	bool *triv = calloc(p->n, sizeof(*triv));
	char cycle[1024];

	if (!triv)
		return;
	if (ps_model_trivial(p->r, p->n, run->stuck, triv)) {
		ps_model_cycle(p->r, p->n, run->stuck, triv, cycle, sizeof(cycle));
		dbg_info(p->s, "deadlock: no rank can move: %s", cycle);
	}
	free(triv);
}

/* Stop the ranks left moving (^C, the timeout) or stuck (red). */
static void stop_ranks(struct ps_run *run, const struct sdm_idset *stuck_set)
{
	struct dbgp_cmd intr = { .verb = DBGP_INTERRUPT, .wait_ms = DBG_SLICE_MS * 10 };
	struct sdm_idset *act = active(run), *none = sdm_set_new();
	struct dbg_pstep *p = run->p;
	struct sdm_fe_result res;
	sdm_id id;

	if (act && !sdm_set_is_empty(act) && none &&
	    dbg_send(p->s, act, &intr, DBG_CMD_TIMEOUT + intr.wait_ms, &res) == 0)
		sdm_fe_result_free(&res);
	sdm_set_for_each(id, act ? act : none) {
		if (id >= p->n)
			break;
		p->s->state[id] = DBG_STOPPED;
		/* A stuck rank keeps its motion; one cut short loses it. */
		p->r[id].red = sdm_set_contains(stuck_set, id);
	}
	sdm_set_free(act);
	sdm_set_free(none);
}

/* Which ranks of set start a motion now, and how. */
static void start_step(struct ps_run *run, const struct sdm_idset *set,
		       enum dbgp_exec kind)
{
	struct dbgp_cmd ret = { .verb = DBGP_EXEC, .exec = DBGP_EXEC_MPI_RETURN };
	struct sdm_idset *back = sdm_set_new(), *go = sdm_set_new(), *next = sdm_set_new();
	struct dbg_pstep *p = run->p;
	sdm_id id;

	sdm_set_for_each(id, set) {
		struct ps_rank *r = &p->r[id];

		if (id >= p->n || !back || !go || !next)
			break;
		if (r->held || r->exited || r->lost || r->running)
			continue;
		/* Run out of its call since (continue, finish): not red any more. */
		if (r->red && (!r->have_state || r->st.kind == CRDBG_MPI_OUT))
			r->red = false;
		if (!r->red) {
			r->pending = kind;
			r->steps++;
		}
		if (r->red || (r->have_state && r->st.kind != CRDBG_MPI_OUT &&
			       r->st.kind != CRDBG_MPI_LOCAL)) {
			run->phase[id] = PS_RETURNING;
			run->call_line[id] = r->line;
			sdm_set_add_element(back, id);
		} else {
			run->phase[id] = PS_MOVING;
			sdm_set_add_element(go, id);
		}
	}
	if (back && go && next) {
		run_cmd(run, back, &ret, next);
		sdm_set_union(go, next);
		move(run, go);
	}
	sdm_set_free(back);
	sdm_set_free(go);
	sdm_set_free(next);
}

void dbg_pstep_run(struct dbg_pstep *p, const struct sdm_idset *set,
		   enum dbgp_exec kind, const char *display)
{
	struct ps_run run = { .p = p };
	struct sdm_idset *stuck_set = sdm_set_new(), *all;

	if (ensure_ranks(p) < 0 || !stuck_set)
		goto out;
	run.phase = calloc(p->n, sizeof(*run.phase));
	run.stuck = calloc(p->n, sizeof(*run.stuck));
	run.call_line = calloc(p->n, sizeof(*run.call_line));
	run.snap_calls = calloc(p->n, sizeof(*run.snap_calls));
	run.snap_polls = calloc(p->n, sizeof(*run.snap_polls));
	all = all_ranks(p);
	if (!run.phase || !run.stuck || !run.call_line || !run.snap_calls || !run.snap_polls || !all) {
		sdm_set_free(all);
		goto out;
	}
	look(p, all);
	start_step(&run, set, kind);
	wait_step(&run, stuck_set);
	if (!sdm_set_is_empty(stuck_set))
		report_deadlock(&run);
	stop_ranks(&run, stuck_set);
	look(p, all);
	sdm_set_free(all);
	dbg_pump_output(p->s, 0);
	dbg_flush_lines(p->s);
	if (run.shown.nev)
		dbg_print_result(p->s, display, &run.shown);
	if (p->bp)	/* temporary breakpoints where ranks stopped */
		dbg_bp_settle(p->bp);
	ps_view_rows(p, "pstep");
out:
	sdm_fe_result_free(&run.shown);
	free(run.phase);
	free(run.stuck);
	free(run.call_line);
	free(run.snap_calls);
	free(run.snap_polls);
	sdm_set_free(stuck_set);
}

void dbg_pstep_hold(struct dbg_pstep *p, const struct sdm_idset *set, bool hold)
{
	struct sdm_idset *all;
	sdm_id id;

	if (ensure_ranks(p) < 0)
		return;
	sdm_set_for_each(id, set)
		if (id < p->n)
			p->r[id].held = hold;
	all = all_ranks(p);
	if (all)
		look(p, all);
	sdm_set_free(all);
	ps_view_rows(p, "colours");
}

void dbg_pstep_show(struct dbg_pstep *p)
{
	struct sdm_idset *all;

	if (ensure_ranks(p) < 0)
		return;
	all = all_ranks(p);
	if (all)
		look(p, all);
	sdm_set_free(all);
	ps_view_rows(p, "colours");
}

void dbg_pstep_table(struct dbg_pstep *p, const struct sdm_idset *set)
{
	struct sdm_idset *all;
	sdm_id id;

	if (ensure_ranks(p) < 0)
		return;
	all = all_ranks(p);
	if (all)
		look(p, all);
	sdm_set_free(all);
	if (!p->s->json)
		fprintf(p->s->out, "%-5s %-7s %-32s %-6s %s\n", "rank", "colour",
			"position", "steps", "mpi");
	sdm_set_for_each(id, set) {
		const struct ps_rank *r = &p->r[id];
		char pos[300], call[160] = "-";

		if (id >= p->n)
			break;
		snprintf(pos, sizeof(pos), "%s:%d", *r->file ? r->file : "?", r->line);
		if (r->have_state && r->st.kind != CRDBG_MPI_OUT && !r->exited)
			ps_model_call_text(&r->st, call, sizeof(call));
		if (p->s->json) {
			fprintf(p->s->out, "{\"type\":\"mpi\",\"rank\":%u,\"colour\":\"%s\",\"steps\":%u,\"call\":",
				id, ps_colour_name(ps_colour(r)), r->steps);
			dbg_json_str(p->s->out, call);
			fputs("}\n", p->s->out);
		} else {
			fprintf(p->s->out, "%-5u %-7s %-32s %-6u %s\n", id,
				ps_colour_name(ps_colour(r)), pos, r->steps, call);
		}
	}
	fflush(p->s->out);
}
