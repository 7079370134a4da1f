// SPDX-License-Identifier: GPL-2.0
/*
 * The ranks as the parallel step shows them: a colour each (green can
 * move, yellow held by the user, red waiting in MPI to finish an earlier
 * motion), at the line of the user's code (an MPI call's own line while
 * in it). Text merges ranks that share position, colour and call:
 *
 *   [0] prog_pstep.c:9 green
 *   [1] prog_pstep.c:7 red (MPI_Recv from 0)
 *   [2-3] prog_pstep.c:13 red (MPI_Finalize)
 *
 * with ANSI colours when the output is a terminal. JSON is one object
 * per event, one entry per rank in rank order (Documentation/console.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdm/idset.h"
#include "pstep.h"
#include "session.h"

enum ps_colour ps_colour(const struct ps_rank *r)
{
	if (r->lost)
		return PS_LOST;
	if (r->exited)
		return PS_EXITED;
	if (r->held)
		return PS_YELLOW;
	return r->red ? PS_RED : PS_GREEN;
}

const char *ps_colour_name(enum ps_colour c)
{
	static const char *const name[] = {
		[PS_GREEN] = "green", [PS_YELLOW] = "yellow", [PS_RED] = "red",
		[PS_EXITED] = "exited", [PS_LOST] = "lost",
	};

	return name[c];
}

static const char *ansi(enum ps_colour c)
{
	static const char *const code[] = {
		[PS_GREEN] = "\033[32m", [PS_YELLOW] = "\033[33m",
		[PS_RED] = "\033[31m", [PS_EXITED] = "", [PS_LOST] = "",
	};

	return code[c];
}

static bool in_call(const struct ps_rank *r)
{
	return r->have_state && r->st.kind != CRDBG_MPI_OUT &&
	       r->st.kind != CRDBG_MPI_LOCAL && !r->exited && !r->lost;
}

/* The row of a rank without its rank set; equal rows merge. */
static void row_text(const struct ps_rank *r, bool tty, char *buf, size_t size)
{
	enum ps_colour c = ps_colour(r);
	const char *base = strrchr(r->file, '/');
	char call[160] = "";
	char pos[300];

	if (c == PS_EXITED || c == PS_LOST) {
		snprintf(buf, size, "%s", ps_colour_name(c));
		return;
	}
	base = base ? base + 1 : r->file;
	if (r->line && *base)
		snprintf(pos, sizeof(pos), "%s:%d", base, r->line);
	else
		snprintf(pos, sizeof(pos), "%s", *r->func ? r->func : "?");
	if (in_call(r)) {
		char t[128];

		ps_model_call_text(&r->st, t, sizeof(t));
		snprintf(call, sizeof(call), " (%s)", t);
	}
	snprintf(buf, size, "%s %s%s%s%s", pos, tty ? ansi(c) : "",
		 ps_colour_name(c), tty ? "\033[0m" : "", call);
}

static void json_rank(FILE *f, uint32_t id, const struct ps_rank *r)
{
	enum ps_colour c = ps_colour(r);

	fprintf(f, "{\"rank\":%u,\"file\":", id);
	if (*r->file && c != PS_EXITED && c != PS_LOST)
		dbg_json_str(f, r->file);
	else
		fputs("null", f);
	if (r->line && c != PS_EXITED && c != PS_LOST)
		fprintf(f, ",\"line\":%d", r->line);
	else
		fputs(",\"line\":null", f);
	fprintf(f, ",\"state\":\"%s\",\"mpi\":",
		c == PS_LOST ? "exited" : ps_colour_name(c));
	if (!in_call(r)) {
		fputs("null}", f);
		return;
	}
	fputs("{\"call\":", f);
	dbg_json_str(f, r->st.call);
	if (r->st.kind == CRDBG_MPI_COLL || r->st.peer < 0)
		fputs(",\"peer\":null", f);
	else
		fprintf(f, ",\"peer\":%d", r->st.peer);
	if (r->st.kind == CRDBG_MPI_COLL || r->st.tag == CRDBG_MPI_NONE)
		fputs(",\"tag\":null}}", f);
	else
		fprintf(f, ",\"tag\":%d}}", r->st.tag);
}

static void json_rows(struct dbg_pstep *p, const char *event)
{
	FILE *f = p->s->out;

	fputs("{\"event\":", f);
	dbg_json_str(f, event);
	fputs(",\"ranks\":[", f);
	for (uint32_t i = 0; i < p->n; i++) {
		if (i)
			fputc(',', f);
		json_rank(f, i, &p->r[i]);
	}
	fputs("]}\n", f);
}

void ps_view_rows(struct dbg_pstep *p, const char *event)
{
	bool tty = isatty(fileno(p->s->out));
	bool *done = calloc(p->n, sizeof(*done));
	char a[512], b[512];

	if (p->s->json) {
		json_rows(p, event);
		goto out;
	}
	/* Rows in the order of their lowest rank. */
	for (uint32_t i = 0; done && i < p->n; i++) {
		struct sdm_idset *set;
		char *str;

		if (done[i])
			continue;
		set = sdm_set_new();
		if (!set)
			break;
		row_text(&p->r[i], tty, a, sizeof(a));
		for (uint32_t k = i; k < p->n; k++) {
			if (done[k])
				continue;
			row_text(&p->r[k], tty, b, sizeof(b));
			if (!strcmp(a, b)) {
				done[k] = true;
				sdm_set_add_element(set, k);
			}
		}
		str = sdm_set_to_string(set);
		fprintf(p->s->out, "[%s] %s\n", str ? str : "?", a);
		free(str);
		sdm_set_free(set);
	}
out:
	fflush(p->s->out);
	free(done);
}
