// SPDX-License-Identifier: GPL-2.0
/* Where a stop left the ranks, in one line (stop-line.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <crdbg/dbgproto.h>
#include "sdm/idset.h"
#include "stop-line.h"

/* One clause of a stop's summary: a text and every rank that said it. */
struct stop_clause {
	const char *text;
	size_t len;
	struct sdm_idset *ranks;
	sdm_id first;
};

/* The text of a stop reply, without "stopped: " and its fields. */
static const char *stop_reply(const char *t, size_t *len)
{
	static const char st[] = DBGP_STOPPED;

	*len = t ? dbgp_reply_text_len(t) : 0;
	if (*len >= sizeof(st) - 1 && !strncmp(t, st, sizeof(st) - 1)) {
		t += sizeof(st) - 1;
		*len -= sizeof(st) - 1;
	}
	return t ? t : "";
}

/*
 * The report's clauses, one per distinct text (the ranks' replies differ
 * in their fields, pid or thread, where the text is the same), in rank
 * order of their first rank. Their count; -1 on ENOMEM.
 */
static int stop_clauses(const struct sdm_fe_result *r, struct stop_clause *c, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; r && i < r->nev; i++) {
		size_t len;
		const char *t = stop_reply((const char *)r->ev[i].payload, &len);
		unsigned int k;

		for (k = 0; k < n; k++)
			if (c[k].len == len && !memcmp(c[k].text, t, len))
				break;
		if (k == n) {
			if (n == max)
				continue;	/* past what a summary line holds */
			c[n++] = (struct stop_clause){ .text = t, .len = len,
							.ranks = sdm_set_new() };
			if (!c[k].ranks)
				goto fail;
		}
		if (sdm_set_union(c[k].ranks, r->ev[i].src))
			goto fail;
	}
	for (unsigned int k = 0; k < n; k++)
		if (!sdm_set_find_next(c[k].ranks, 0, &c[k].first))
			c[k].first = UINT32_MAX;
	/* few clauses: an insertion sort by first rank */
	for (unsigned int k = 1; k < n; k++)
		for (unsigned int j = k; j && c[j - 1].first > c[j].first; j--) {
			struct stop_clause x = c[j];

			c[j] = c[j - 1];
			c[j - 1] = x;
		}
	return (int)n;
fail:
	while (n--)
		sdm_set_free(c[n].ranks);
	return -1;
}

/*
 * "[0-5] breakpoint 2, step at t.c:9; [6] ...": where the report says the
 * ranks are, a clause per distinct place in rank order. What does not
 * fit is left out whole, a clause at a time (never cut mid-word), and
 * "..." says so.
 */
#define STOP_CLAUSES	64

/* "[R] TEXT" of one clause into buf (len), TEXT cut at a space if it must be: its length. */
static size_t clause_cut(const struct stop_clause *c, const char *ranks, char *buf, size_t len)
{
	int w = snprintf(buf, len, "[%s] ", ranks);
	size_t room, t = c->len;

	if (w < 0 || (size_t)w + sizeof(" ...") > len)
		return 0;
	room = len - (size_t)w - sizeof(" ...");
	if (t > room) {
		t = room;
		while (t && c->text[t] != ' ')
			t--;
	}
	return (size_t)w + (size_t)snprintf(buf + w, len - (size_t)w, "%.*s%s", (int)t, c->text,
					    t < c->len ? " ..." : "");
}

void dbg_stop_line(const struct sdm_fe_result *r, char *buf, size_t len)
{
	struct stop_clause c[STOP_CLAUSES];
	int n = stop_clauses(r, c, STOP_CLAUSES);
	size_t l = 0, more = sizeof("; ...");

	buf[0] = 0;
	for (int k = 0; k < n; k++) {
		char *ranks = sdm_set_to_string(c[k].ranks);
		const char *rs = ranks ? ranks : "?";
		int w = snprintf(NULL, 0, "%s[%s] %.*s", l ? "; " : "", rs, (int)c[k].len,
				 c[k].text);

		if (!k && w >= 0 && (size_t)w + (n > 1 ? more : 1) > len) {
			l = clause_cut(&c[k], rs, buf, len);	/* one place, too long */
		} else if (w < 0 || l + (size_t)w + (k + 1 < n ? more : 1) > len) {
			snprintf(buf + l, len - l, "; ...");
			free(ranks);
			break;
		} else {
			l += (size_t)snprintf(buf + l, len - l, "%s[%s] %.*s", l ? "; " : "", rs,
					      (int)c[k].len, c[k].text);
		}
		free(ranks);
	}
	for (int k = 0; k < n; k++)
		sdm_set_free(c[k].ranks);
	if (!buf[0])
		snprintf(buf, len, "after a parallel step");
}

