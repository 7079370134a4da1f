// SPDX-License-Identifier: GPL-2.0
/*
 * Console commands: a line is "[RANKS] COMMAND ARGS", RANKS in the id-set
 * form (0-3,7); without it the command goes to the focus set. Commands
 * the console does not know go to every gdb as console commands.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crdbg/merge.h"
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "session.h"

#define DBG_CMD_MAX	3900	/* fits the backend's 4096 with its prefix */

const char *const dbg_command_names[] = {
	"backtrace", "break", "bt", "checkpoint", "continue", "echo", "finish", "focus",
	"gdb", "help", "input", "interrupt", "next", "nexti", "print", "quit",
	"restart", "stacks", "status", "step", "stepi", "timeout", "wait", "where",
	NULL,
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Replies gathered over several rounds, identical texts merged. */
static int acc_add(struct sdm_fe_result *acc, uint8_t type,
		   const struct sdm_idset *src, const char *text)
{
	struct sdm_fe_event *v;

	for (unsigned int i = 0; i < acc->nev; i++)
		if (acc->ev[i].type == type &&
		    !strcmp((char *)acc->ev[i].payload, text))
			return sdm_set_union(acc->ev[i].src, src);
	v = realloc(acc->ev, (acc->nev + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	acc->ev = v;
	v = &acc->ev[acc->nev];
	v->type = type;
	v->src = sdm_set_copy(src);
	v->payload = (uint8_t *)strdup(text);
	v->len = strlen(text);
	if (!v->src || !v->payload) {
		sdm_set_free(v->src);
		free(v->payload);
		return -ENOMEM;
	}
	acc->nev++;
	return 0;
}

/*
 * A run-control command: send first (which names its wait slice), then
 * "wait" rounds to the ranks still running, printing their output in
 * between, until every rank stopped, the console's timeout passed or
 * ^C (then the running ranks are interrupted). One merged report.
 */
static void run_control(struct dbg_session *s, const struct sdm_idset *set,
			const char *display, const char *first)
{
	struct sdm_fe_result acc = { 0 }, r;
	struct sdm_idset *pending = dbg_live(s, set);
	uint64_t deadline = s->wait_s ? now_ms() + s->wait_s * 1000ull : 0;
	char cmd[DBG_CMD_MAX + 64];
	bool interrupting = false;
	int rc;

	if (!pending)
		return;
	if (sdm_set_is_empty(pending))
		dbg_error(s, "no live rank in the set");
	snprintf(cmd, sizeof(cmd), "%s", first);
	while (!sdm_set_is_empty(pending)) {
		if (*s->interrupted && !interrupting) {
			*s->interrupted = 0;
			interrupting = true;
			snprintf(cmd, sizeof(cmd), "interrupt %d", DBG_SLICE_MS);
		}
		rc = dbg_send(s, pending, cmd, DBG_SLICE_MS + DBG_CMD_TIMEOUT, &r);
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
			if (!error && !strcmp(text, "running"))
				continue;
			acc_add(&acc, error ? SDM_MSG_ERROR : SDM_MSG_REPLY,
				ev->src, text);
			sdm_set_diff(pending, ev->src);
		}
		sdm_fe_result_free(&r);
		dbg_pump_output(s, 0);
		if ((deadline && now_ms() >= deadline) ||
		    (s->terminate && *s->terminate))
			break;
		snprintf(cmd, sizeof(cmd), "wait %d", DBG_SLICE_MS);
	}
	if (!sdm_set_is_empty(pending))
		acc_add(&acc, SDM_MSG_REPLY, pending, "running");
	dbg_pump_output(s, 0);
	dbg_flush_lines(s);
	dbg_print_result(s, display, &acc);
	sdm_fe_result_free(&acc);
	sdm_set_free(pending);
}

/* Send cmd to the live ranks of set, print the merged replies. */
static void simple(struct dbg_session *s, const struct sdm_idset *set,
		   const char *display, const char *cmd)
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

/* One row per rank: state, gdb pid, program pid, where it is. */
static void status(struct dbg_session *s, const struct sdm_idset *set)
{
	/* Lost ranks too: a live server says why its gdb is gone. */
	struct sdm_idset *live = sdm_set_copy(set);
	struct sdm_fe_result r = { 0 };
	char **row = calloc(s->n, sizeof(*row));
	bool failed = false;
	sdm_id id;

	if (!live || !row)
		goto out;
	if (dbg_send(s, live, "status", DBG_CMD_TIMEOUT, &r) < 0) {
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
			if (error || !strncmp(text, "lost", 4))
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
		char state[16] = "-", where[512] = "";
		int gdb = 0, pid = 0, used = 0;

		if (id >= s->n)
			break;
		if (row[id] && sscanf(row[id], "%15s gdb=%d pid=%d %n", state,
				      &gdb, &pid, &used) >= 3) {
			snprintf(where, sizeof(where), "%s", row[id] + used);
		} else {
			snprintf(state, sizeof(state), "%s",
				 state_word(s->state[id]));
			if (row[id])
				snprintf(where, sizeof(where), "%s", row[id]);
		}
		status_row(s, id, state, gdb, pid, where);
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
	struct con_stacks *t = con_stacks_new();
	struct sdm_fe_result r = { 0 }, errs = { 0 };
	sdm_id id;

	if (!live || !t)
		goto out;
	if (dbg_send(s, live, "stack", DBG_CMD_TIMEOUT, &r) < 0) {
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
			acc_add(&errs, SDM_MSG_ERROR, ev->src, text);
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

static void help(struct dbg_session *s)
{
	dbg_info(s,
		 "[RANKS] COMMAND   run COMMAND on RANKS (e.g. [0-3,7]) instead of the focus\n"
		 "focus [RANKS|all] show or set the ranks commands go to\n"
		 "break LOC         set a breakpoint (file.c:LINE or function)\n"
		 "continue, step, next, finish, stepi, nexti\n"
		 "                  resume; waits until every rank stops (^C interrupts)\n"
		 "interrupt         stop the running ranks\n"
		 "wait              wait for running ranks to stop\n"
		 "timeout SECONDS   longest wait of a run command (0: no limit)\n"
		 "print EXPR        evaluate EXPR; identical values are merged\n"
		 "bt                backtrace of each rank, merged\n"
		 "stacks            merged stacks of all ranks as a tree\n"
		 "status            state, gdb pid, program pid and position per rank\n"
		 "input TEXT        TEXT and a newline to the programs' stdin (rank 0 by default)\n"
		 "checkpoint        checkpoint every rank (libcrdbg, crdbg.ko); prints the handles\n"
		 "restart [H[,H..]] restart the ranks (default: last checkpoint), same place\n"
		 "echo TEXT         print TEXT\n"
		 "gdb CMD           any gdb command (unknown commands go to gdb too)\n"
		 "quit              end the session (the programs are killed)");
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

static bool is(const char *w, const char *a, const char *b)
{
	return !strcmp(w, a) || (b && !strcmp(w, b));
}

int dbg_execute(struct dbg_session *s, const char *line)
{
	struct sdm_idset *set = sdm_set_new();
	char word[32], cmd[DBG_CMD_MAX + 64], display[DBG_CMD_MAX + 1];
	const char *p = line, *arg;
	bool prefixed = false;
	size_t wl;
	int quit = 0;

	if (!set)
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
		if (parse_prefix(s, &p, set) < 0)
			goto out;
		prefixed = true;
	} else {
		sdm_set_assign(set, s->focus);
	}
	while (isspace((unsigned char)*p))
		p++;
	snprintf(display, sizeof(display), "%s", p);
	wl = strcspn(p, " \t");
	if (!wl)
		goto out;
	snprintf(word, sizeof(word), "%.*s", (int)(wl < 31 ? wl : 31), p);
	arg = p + wl;
	while (isspace((unsigned char)*arg))
		arg++;

	if (is(word, "quit", "q") || !strcmp(word, "exit")) {
		quit = 1;
	} else if (is(word, "help", "h")) {
		help(s);
	} else if (!strcmp(word, "echo")) {
		dbg_info(s, "%s", arg);
	} else if (!strcmp(word, "focus")) {
		focus(s, arg);
	} else if (!strcmp(word, "timeout")) {
		if (*arg)
			s->wait_s = atoi(arg) > 0 ? atoi(arg) : 0;
		dbg_info(s, "timeout: %d s%s", s->wait_s,
			 s->wait_s ? "" : " (none)");
	} else if (!strcmp(word, "status")) {
		status(s, set);
	} else if (!strcmp(word, "stacks")) {
		stacks(s, set);
	} else if (is(word, "print", "p")) {
		if (!*arg) {
			dbg_error(s, "print: an expression is needed");
			goto out;
		}
		snprintf(cmd, sizeof(cmd), "print %s", arg);
		simple(s, set, display, cmd);
	} else if (is(word, "break", "b")) {
		if (!*arg) {
			dbg_error(s, "break: a location is needed");
			goto out;
		}
		snprintf(cmd, sizeof(cmd), "break %s", arg);
		simple(s, set, display, cmd);
	} else if (is(word, "bt", "backtrace") || !strcmp(word, "where")) {
		simple(s, set, display, "bt");
	} else if (is(word, "continue", "c") || is(word, "step", "s") ||
		   is(word, "next", "n") || is(word, "finish", "fin") ||
		   is(word, "stepi", "si") || is(word, "nexti", "ni")) {
		static const char *const full[][2] = {
			{ "c", "continue" }, { "s", "step" }, { "n", "next" },
			{ "fin", "finish" }, { "si", "stepi" }, { "ni", "nexti" },
		};
		const char *kind = word;

		for (size_t i = 0; i < sizeof(full) / sizeof(full[0]); i++)
			if (!strcmp(word, full[i][0]))
				kind = full[i][1];
		snprintf(cmd, sizeof(cmd), "exec %d %s", DBG_SLICE_MS, kind);
		run_control(s, set, display, cmd);
	} else if (!strcmp(word, "start")) {
		snprintf(cmd, sizeof(cmd), "start %d", DBG_SLICE_MS);
		run_control(s, set, display, cmd);
	} else if (!strcmp(word, "interrupt")) {
		snprintf(cmd, sizeof(cmd), "interrupt %d", DBG_SLICE_MS);
		run_control(s, set, display, cmd);
	} else if (!strcmp(word, "wait")) {
		snprintf(cmd, sizeof(cmd), "wait %d", DBG_SLICE_MS);
		run_control(s, set, display, cmd);
	} else if (!strcmp(word, "input") && s->launcher) {
		dbg_mpir_input(s, prefixed ? set : NULL, arg);
	} else if (!strcmp(word, "input")) {
		/* Like mpirun: stdin goes to rank 0 unless ranks are named. */
		if (!prefixed) {
			sdm_set_clear(set);
			sdm_set_add_element(set, 0);
		}
		snprintf(cmd, sizeof(cmd), "input %s", arg);
		simple(s, set, display, cmd);
	} else if (!strcmp(word, "checkpoint")) {
		dbg_checkpoint(s);
	} else if (!strcmp(word, "restart")) {
		dbg_restart(s, arg);
	} else if (!strcmp(word, "gdb")) {
		snprintf(cmd, sizeof(cmd), "cli %s", arg);
		simple(s, set, display, cmd);
	} else {
		snprintf(cmd, sizeof(cmd), "cli %s", p);
		simple(s, set, display, cmd);
	}
out:
	sdm_set_free(set);
	return quit;
}
