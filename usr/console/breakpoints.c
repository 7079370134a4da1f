// SPDX-License-Identifier: GPL-2.0
/*
 * The session's breakpoint table (breakpoints.h): console numbers over
 * the gdbs' own. A breakpoint is set on each rank of its set with the
 * backend's break verb (or gdb's watch for watchpoints) and gdb's number
 * is read from each rank's reply; identical replies come merged, so one
 * reply is one gdb number for its whole rank set. Later commands on it
 * go to each group of ranks that share a gdb number, with that number.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crdbg/dbgproto.h"
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "breakpoints.h"
#include "session.h"

#define BP_TEXT_MAX	1024
#define NUMBER_MARK	"\x01"	/* in a reply: the console number goes here */

struct dbg_bp {
	unsigned int num;
	enum dbg_bp_kind kind;
	bool gdb_temp;		/* gdb deletes it itself (the start's main) */
	char *what;		/* "LOC at FILE:LINE", or the watched EXPR */
	char *cond;		/* NULL: unconditional */
	struct sdm_idset *ranks;
	struct sdm_idset *disabled;
	struct sdm_idset *hit;	/* temporary: ranks stopped at it */
	unsigned long hits;	/* stops at it, one per rank */
	int *gdbno;		/* per rank; 0: not set there */
};

struct dbg_bptab {
	struct dbg_session *s;
	struct dbg_bp **bp;
	size_t n;
	unsigned int next;
};

static const char *const kind_word[] = {
	[DBG_BP_BREAK] = "break", [DBG_BP_TBREAK] = "tbreak",
	[DBG_BP_WATCH] = "watch", [DBG_BP_RWATCH] = "rwatch",
	[DBG_BP_AWATCH] = "awatch",
};

struct dbg_bptab *dbg_bp_new(struct dbg_session *s)
{
	struct dbg_bptab *t = calloc(1, sizeof(*t));

	if (t) {
		t->s = s;
		t->next = 1;
	}
	return t;
}

static void bp_free(struct dbg_bp *bp)
{
	if (!bp)
		return;
	free(bp->what);
	free(bp->cond);
	free(bp->gdbno);
	sdm_set_free(bp->ranks);
	sdm_set_free(bp->disabled);
	sdm_set_free(bp->hit);
	free(bp);
}

void dbg_bp_free(struct dbg_bptab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		bp_free(t->bp[i]);
	free(t->bp);
	free(t);
}

bool dbg_bp_any(const struct dbg_bptab *t)
{
	return t && t->n;
}

static struct dbg_bp *bp_alloc(struct dbg_bptab *t, enum dbg_bp_kind kind,
			       const char *what)
{
	struct dbg_bp *bp = calloc(1, sizeof(*bp));

	if (!bp)
		return NULL;
	bp->kind = kind;
	bp->what = strdup(what);
	bp->ranks = sdm_set_new();
	bp->disabled = sdm_set_new();
	bp->hit = sdm_set_new();
	bp->gdbno = calloc(t->s->n, sizeof(*bp->gdbno));
	if (!bp->what || !bp->ranks || !bp->disabled || !bp->hit || !bp->gdbno) {
		bp_free(bp);
		return NULL;
	}
	return bp;
}

/* bp enters the table with the next console number. */
static int bp_add(struct dbg_bptab *t, struct dbg_bp *bp)
{
	struct dbg_bp **v = realloc(t->bp, (t->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	t->bp = v;
	bp->num = t->next++;
	t->bp[t->n++] = bp;
	return 0;
}

static void bp_remove(struct dbg_bptab *t, struct dbg_bp *bp)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->bp[i] != bp)
			continue;
		memmove(&t->bp[i], &t->bp[i + 1], (t->n - i - 1) * sizeof(*t->bp));
		t->n--;
		bp_free(bp);
		return;
	}
}

static struct dbg_bp *find(struct dbg_bptab *t, unsigned long num)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->bp[i]->num == num)
			return t->bp[i];
	return NULL;
}

/* The console's breakpoint that is gdb's number g on rank id. */
static struct dbg_bp *lookup(struct dbg_bptab *t, sdm_id id, int g)
{
	if (id >= t->s->n)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->bp[i]->gdbno[id] == g &&
		    sdm_set_contains(t->bp[i]->ranks, id))
			return t->bp[i];
	return NULL;
}

static sdm_id lowest(const struct sdm_idset *set)
{
	sdm_id id = 0;

	sdm_set_find_next(set, 0, &id);
	return id;
}

/* The number right after key's first occurrence in text, or 0. */
static int number_after(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	if (!p || !isdigit((unsigned char)p[strlen(key)]))
		return 0;
	return atoi(p + strlen(key));
}

/* text with the number after key's first occurrence made num (malloc'd). */
static char *replace_number(const char *text, const char *key, unsigned int num)
{
	const char *p = strstr(text, key), *q;
	char *out;

	if (!p || !isdigit((unsigned char)p[strlen(key)]))
		return strdup(text);
	p += strlen(key);
	for (q = p; isdigit((unsigned char)*q); q++)
		;
	if (asprintf(&out, "%.*s%u%s", (int)(p - text), text, num, q) < 0)
		return NULL;
	return out;
}

/* gdb's breakpoint number of a stop at a breakpoint or watchpoint, or 0. */
static int stop_gdbno(const char *text)
{
	if (dbgp_reply_kind(text) != DBGP_REPLY_STOPPED)
		return 0;
	return number_after(text, DBGP_STOPPED "breakpoint ") ?:
	       number_after(text, DBGP_STOPPED "watchpoint ");
}

static char *renumber_stop(const char *text, unsigned int num)
{
	const char *key = strstr(text, DBGP_STOPPED "breakpoint ") ?
			  DBGP_STOPPED "breakpoint " : DBGP_STOPPED "watchpoint ";
	char *a = replace_number(text, key, num), *b;

	if (!a || !dbgp_reply_fields(a))
		return a;
	b = replace_number(a, "bkptno=", num);
	free(a);
	return b;
}

int dbg_bp_renumber(struct dbg_bptab *t, struct sdm_fe_result *acc,
		    uint8_t type, const struct sdm_idset *src, const char *text)
{
	int g = type == SDM_MSG_REPLY ? stop_gdbno(text) : 0;
	struct sdm_idset *left, *group;
	sdm_id id;
	int rc = 0;

	if (!t || g <= 0)
		return dbg_result_add(acc, type, src, text);
	left = sdm_set_copy(src);
	group = sdm_set_new();
	while (!rc && left && group && !sdm_set_is_empty(left)) {
		struct dbg_bp *bp = lookup(t, lowest(left), g);
		char *renum;

		sdm_set_clear(group);
		sdm_set_for_each(id, left)
			if (lookup(t, id, g) == bp)
				sdm_set_add_element(group, id);
		sdm_set_diff(left, group);
		if (!bp) {
			rc = dbg_result_add(acc, type, group, text);
			continue;
		}
		bp->hits += sdm_set_size(group);
		if (bp->kind == DBG_BP_TBREAK || bp->gdb_temp)
			sdm_set_union(bp->hit, group);
		renum = renumber_stop(text, bp->num);
		rc = renum ? dbg_result_add(acc, type, group, renum) : -ENOMEM;
		free(renum);
	}
	if (!left || !group)
		rc = -ENOMEM;
	sdm_set_free(left);
	sdm_set_free(group);
	return rc;
}

char *dbg_bp_renumber_text(struct dbg_bptab *t, uint32_t id, const char *text)
{
	struct dbg_bp *bp;
	int g = stop_gdbno(text);

	if (!t || g <= 0 || !(bp = lookup(t, id, g)))
		return strdup(text);
	return renumber_stop(text, bp->num);
}

/*
 * Send "VERB G[ TAIL]" (a gdb command) to each group of bp's ranks in set
 * (NULL: all) with gdb's number G there. Errors go into acc; what gdb
 * says otherwise is gdb's text with gdb's numbers, and is dropped.
 */
static void each_gdb(struct dbg_bptab *t, struct dbg_bp *bp,
		     const struct sdm_idset *set, const char *verb,
		     const char *tail, struct sdm_fe_result *acc)
{
	struct dbg_session *s = t->s;
	struct sdm_idset *left = sdm_set_copy(bp->ranks), *group = sdm_set_new();
	char cmd[DBGP_CMD_MAX - 16];
	sdm_id id;

	if (left && set)
		sdm_set_intersect(left, set);
	while (left && group && !sdm_set_is_empty(left)) {
		int g = bp->gdbno[lowest(left)];
		struct dbgp_cmd c = { .verb = DBGP_CLI, .arg = cmd };
		struct sdm_idset *live;
		struct sdm_fe_result r;

		sdm_set_clear(group);
		sdm_set_for_each(id, left)
			if (bp->gdbno[id] == g)
				sdm_set_add_element(group, id);
		sdm_set_diff(left, group);
		live = dbg_live(s, group);
		snprintf(cmd, sizeof(cmd), "%s %d%s%s", verb, g, tail ? " " : "",
			 tail ? tail : "");
		if (live && dbg_send(s, live, &c, DBG_CMD_TIMEOUT, &r) == 0) {
			for (unsigned int i = 0; i < r.nev; i++) {
				bool error;
				const char *text = dbg_event_text(s, r.ev[i].type, r.ev[i].src,
								  (char *)r.ev[i].payload, &error);

				if (error)
					dbg_result_add(acc, SDM_MSG_ERROR, r.ev[i].src, text);
			}
			sdm_fe_result_free(&r);
		}
		sdm_set_free(live);
	}
	sdm_set_free(left);
	sdm_set_free(group);
}

/* Print the errors gathered in acc (nothing when there are none). */
static void print_errors(struct dbg_bptab *t, const char *cmd,
			 struct sdm_fe_result *acc)
{
	if (acc->nev)
		dbg_print_result(t->s, cmd, acc);
	sdm_fe_result_free(acc);
}

void dbg_bp_note_start(struct dbg_bptab *t, const struct sdm_idset *set)
{
	struct dbg_bp *bp;
	sdm_id id;

	if (!t || !(bp = bp_alloc(t, DBG_BP_TBREAK, "main")))
		return;
	bp->gdb_temp = true;
	sdm_set_assign(bp->ranks, set);
	sdm_set_for_each(id, set)
		if (id < t->s->n)
			bp->gdbno[id] = 1;	/* gdb's first, in a fresh gdb */
	if (bp_add(t, bp) < 0)
		bp_free(bp);
}

/* "LOC if EXPR": LOC in loc, EXPR returned (NULL without one). */
static char *split_condition(char *loc)
{
	char *p = loc, *found = NULL;

	while ((p = strstr(p, " if ")) != NULL) {
		found = p;
		p += 4;
	}
	if (!found)
		return NULL;
	*found = 0;
	found += 4;
	while (isspace((unsigned char)*found))
		found++;
	return found;
}

static bool is_watch(enum dbg_bp_kind kind)
{
	return kind == DBG_BP_WATCH || kind == DBG_BP_RWATCH ||
	       kind == DBG_BP_AWATCH;
}

/*
 * gdb's reply to the break verb ("breakpoint G at FILE:LINE...") or to
 * watch ("Hardware watchpoint G: EXPR", or "Watchpoint G: EXPR" for one
 * gdb checks by single-stepping: no debug register left, an expression
 * they cannot watch, can-use-hw-watchpoints 0): the number G, and where
 * it is.
 */
static int created_gdbno(enum dbg_bp_kind kind, const char *text,
			 const char **ret_rest)
{
	const char *key = !is_watch(kind) ? "breakpoint " :
			  !strncmp(text, "Watchpoint ", 11) ? "Watchpoint " : "watchpoint ";
	const char *p = strstr(text, key);
	int g = number_after(text, key);

	*ret_rest = "";
	if (g <= 0)
		return 0;
	for (p += strlen(key); isdigit((unsigned char)*p); p++)
		;
	*ret_rest = p;
	return g;
}

/* Send the creating command; gdb's numbers into bp, replies into acc. */
static void create_on_ranks(struct dbg_bptab *t, struct dbg_bp *bp,
			    const struct sdm_idset *live, const char *loc,
			    struct sdm_fe_result *acc)
{
	struct dbg_session *s = t->s;
	struct dbgp_cmd c = { .verb = DBGP_BREAK, .arg = loc };
	char cmd[DBGP_CMD_MAX - 16], text[BP_TEXT_MAX];
	struct sdm_fe_result r;
	sdm_id id;

	if (is_watch(bp->kind)) {
		snprintf(cmd, sizeof(cmd), "%s %s", kind_word[bp->kind], loc);
		c = (struct dbgp_cmd){ .verb = DBGP_CLI, .arg = cmd };
	}
	if (dbg_send(s, live, &c, DBG_CMD_TIMEOUT, &r) < 0) {
		dbg_error(s, "%s: no reply", kind_word[bp->kind]);
		return;
	}
	for (unsigned int i = 0; i < r.nev; i++) {
		const struct sdm_fe_event *ev = &r.ev[i];
		const char *rest, *reply;
		bool error;
		int g;

		reply = dbg_event_text(s, ev->type, ev->src, (char *)ev->payload, &error);
		g = error ? 0 : created_gdbno(bp->kind, reply, &rest);
		if (g <= 0) {
			dbg_result_add(acc, error ? SDM_MSG_ERROR : SDM_MSG_REPLY,
				       ev->src, reply);
			continue;
		}
		sdm_set_union(bp->ranks, ev->src);
		sdm_set_for_each(id, ev->src)
			if (id < s->n)
				bp->gdbno[id] = g;
		/* NUMBER_MARK: the number, once the breakpoint has one. */
		if (is_watch(bp->kind))
			snprintf(text, sizeof(text), "%s " NUMBER_MARK ": %s",
				 bp->kind == DBG_BP_WATCH ? "watchpoint" :
				 bp->kind == DBG_BP_RWATCH ? "read watchpoint" :
				 "access watchpoint", loc);
		else
			snprintf(text, sizeof(text), "%sbreakpoint " NUMBER_MARK "%s",
				 bp->kind == DBG_BP_TBREAK ? "temporary " : "", rest);
		dbg_result_add(acc, SDM_MSG_REPLY, ev->src, text);
		if (!strcmp(bp->what, loc) && !is_watch(bp->kind) && *rest == ' ' &&
		    rest[1] != '(') {
			char *w;

			/* "f at a.c:3"; a.c:3 is said once. */
			if (asprintf(&w, "%s%s", strchr(loc, ':') ? "" : loc,
				     strchr(loc, ':') ? rest + 1 : rest) >= 0) {
				free(bp->what);
				bp->what = w;
			}
		}
	}
	sdm_fe_result_free(&r);
}

/* The NUMBER_MARK left in the created replies becomes the console number. */
static void fill_number(struct sdm_fe_result *acc, unsigned int num)
{
	for (unsigned int i = 0; i < acc->nev; i++) {
		char *p = (char *)acc->ev[i].payload, *q, *mark = strstr(p, NUMBER_MARK);

		if (acc->ev[i].type != SDM_MSG_REPLY || !mark)
			continue;
		if (asprintf(&q, "%.*s%u%s", (int)(mark - p), p, num,
			     mark + strlen(NUMBER_MARK)) < 0)
			continue;
		free(p);
		acc->ev[i].payload = (uint8_t *)q;
		acc->ev[i].len = strlen(q);
	}
}

void dbg_bp_create(struct dbg_bptab *t, const struct sdm_idset *set,
		   enum dbg_bp_kind kind, const char *arg)
{
	struct dbg_session *s = t->s;
	struct sdm_fe_result acc = { 0 }, cerr = { 0 };
	struct sdm_idset *live = dbg_live(s, set);
	char *loc = strdup(arg), *cond = NULL, display[BP_TEXT_MAX];
	struct dbg_bp *bp = NULL;

	if (!live || !loc)
		goto out;
	if (sdm_set_is_empty(live)) {
		dbg_error(s, "no live rank in the set");
		goto out;
	}
	if (!is_watch(kind))
		cond = split_condition(loc);
	bp = bp_alloc(t, kind, loc);
	if (!bp)
		goto out;
	create_on_ranks(t, bp, live, loc, &acc);
	if (!sdm_set_is_empty(bp->ranks) && cond && *cond) {
		each_gdb(t, bp, NULL, "condition", cond, &cerr);
		if (cerr.nev) {
			/* Like gdb: a condition it cannot parse, no breakpoint. */
			each_gdb(t, bp, NULL, "delete", NULL, &acc);
			sdm_set_clear(bp->ranks);
			sdm_fe_result_free(&acc);
			print_errors(t, kind_word[kind], &cerr);
			goto out;
		}
		bp->cond = strdup(cond);
	}
	if (!sdm_set_is_empty(bp->ranks) && bp_add(t, bp) == 0) {
		fill_number(&acc, bp->num);
		bp = NULL;
	}
	snprintf(display, sizeof(display), "%s %s", kind_word[kind], arg);
	dbg_print_result(s, display, &acc);
out:
	sdm_fe_result_free(&acc);
	bp_free(bp);
	free(loc);
	sdm_set_free(live);
}

/*
 * The breakpoints that args names: "N", "N-M", several of them, or every
 * breakpoint when args is empty. A name that is not one is an error.
 * Returns a NULL-terminated array (malloc'd), NULL after a message.
 */
static struct dbg_bp **select_bps(struct dbg_bptab *t, const char *cmd,
				  const char *args)
{
	struct dbg_bp **v = calloc(t->n + 1, sizeof(*v));
	const char *p = args;
	size_t n = 0;

	if (!v)
		return NULL;
	if (!*args) {
		memcpy(v, t->bp, t->n * sizeof(*v));
		return v;
	}
	while (*p) {
		unsigned long a, b;
		char *end;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		a = b = strtoul(p, &end, 10);
		if (end != p && *end == '-')
			b = strtoul(end + 1, &end, 10);
		if (end == p || (*end && !isspace((unsigned char)*end)) || b < a) {
			dbg_error(t->s, "%s: want breakpoint numbers, not '%.40s'", cmd, p);
			free(v);
			return NULL;
		}
		for (unsigned long num = a; num <= b && num - a < 100000; num++) {
			struct dbg_bp *bp = find(t, num);
			bool seen = false;

			if (!bp && a == b) {
				dbg_error(t->s, "%s: no breakpoint number %lu", cmd, num);
				free(v);
				return NULL;
			}
			for (size_t k = 0; k < n; k++)
				seen |= v[k] == bp;
			if (bp && !seen)
				v[n++] = bp;
		}
		p = end;
	}
	return v;
}

void dbg_bp_delete(struct dbg_bptab *t, const struct sdm_idset *set,
		   const char *args)
{
	struct dbg_bp **v = select_bps(t, "delete", args);
	struct sdm_fe_result acc = { 0 };

	for (size_t i = 0; v && v[i]; i++) {
		struct dbg_bp *bp = v[i];

		each_gdb(t, bp, set, "delete", NULL, &acc);
		if (set) {
			sdm_set_diff(bp->ranks, set);
			sdm_set_diff(bp->disabled, set);
		} else {
			sdm_set_clear(bp->ranks);
		}
		if (sdm_set_is_empty(bp->ranks))
			bp_remove(t, bp);
	}
	print_errors(t, "delete", &acc);
	free(v);
}

void dbg_bp_enable(struct dbg_bptab *t, const struct sdm_idset *set,
		   const char *args, bool enable)
{
	const char *verb = enable ? "enable" : "disable";
	struct dbg_bp **v = select_bps(t, verb, args);
	struct sdm_fe_result acc = { 0 };

	for (size_t i = 0; v && v[i]; i++) {
		struct dbg_bp *bp = v[i];
		struct sdm_idset *which = sdm_set_copy(bp->ranks);

		if (!which)
			break;
		if (set)
			sdm_set_intersect(which, set);
		each_gdb(t, bp, which, verb, NULL, &acc);
		if (enable)
			sdm_set_diff(bp->disabled, which);
		else
			sdm_set_union(bp->disabled, which);
		sdm_set_free(which);
	}
	print_errors(t, verb, &acc);
	free(v);
}

void dbg_bp_condition(struct dbg_bptab *t, const struct sdm_idset *set,
		      const char *args)
{
	struct sdm_fe_result acc = { 0 };
	unsigned long num;
	struct dbg_bp *bp;
	char *end;

	num = strtoul(args, &end, 10);
	if (end == args || (*end && !isspace((unsigned char)*end))) {
		dbg_error(t->s, "condition: want a breakpoint number and an expression");
		return;
	}
	bp = find(t, num);
	if (!bp) {
		dbg_error(t->s, "condition: no breakpoint number %lu", num);
		return;
	}
	while (isspace((unsigned char)*end))
		end++;
	each_gdb(t, bp, set, "condition", *end ? end : NULL, &acc);
	if (!acc.nev) {
		free(bp->cond);
		bp->cond = *end ? strdup(end) : NULL;
		if (!*end)
			dbg_info(t->s, "breakpoint %u now unconditional", bp->num);
	}
	print_errors(t, "condition", &acc);
}

static const char *type_word(const struct dbg_bp *bp)
{
	switch (bp->kind) {
	case DBG_BP_WATCH: return "watchpoint";
	case DBG_BP_RWATCH: return "read watchpoint";
	case DBG_BP_AWATCH: return "acc watchpoint";
	default: return "breakpoint";
	}
}

/*
 * The live ranks of bp where gdb still has it pending (no library with
 * its location loaded there yet), asked of each group of ranks that
 * share gdb's number for it. A new set, NULL on ENOMEM.
 */
static struct sdm_idset *pending_on(struct dbg_bptab *t, const struct dbg_bp *bp)
{
	struct sdm_idset *left = dbg_live(t->s, bp->ranks), *group = sdm_set_new();
	struct sdm_idset *pending = sdm_set_new();
	char cmd[48];
	sdm_id id;

	while (left && group && pending && !is_watch(bp->kind) && !sdm_set_is_empty(left)) {
		int g = bp->gdbno[lowest(left)];
		struct dbgp_cmd c = { .verb = DBGP_CLI, .arg = cmd };
		struct sdm_idset *yes;

		sdm_set_clear(group);
		sdm_set_for_each(id, left)
			if (bp->gdbno[id] == g)
				sdm_set_add_element(group, id);
		sdm_set_diff(left, group);
		snprintf(cmd, sizeof(cmd), "info breakpoints %d", g);
		yes = dbg_ranks_replying(t->s, group, &c, DBG_CMD_TIMEOUT, "<PENDING>");
		if (yes)
			sdm_set_union(pending, yes);
		sdm_set_free(yes);
	}
	sdm_set_free(left);
	sdm_set_free(group);
	return pending;
}

/* "\n\tpending on [1-3], resolved on [0]" for a breakpoint pending somewhere. */
static size_t pending_line(struct dbg_bptab *t, const struct dbg_bp *bp, char *buf,
			   size_t size)
{
	struct sdm_idset *pending = pending_on(t, bp), *resolved = dbg_live(t->s, bp->ranks);
	char *p = NULL, *r = NULL;
	size_t n = 0;

	if (pending && resolved && !sdm_set_is_empty(pending)) {
		sdm_set_diff(resolved, pending);
		p = sdm_set_to_string(pending);
		r = sdm_set_to_string(resolved);
		n = snprintf(buf, size, "\n\tpending on [%s] (no library loaded there has it yet)",
			     p ? p : "?");
		if (!sdm_set_is_empty(resolved) && n < size)
			n += snprintf(buf + n, size - n, ", resolved on [%s]", r ? r : "?");
	}
	free(p);
	free(r);
	sdm_set_free(pending);
	sdm_set_free(resolved);
	return n < size ? n : size - 1;
}

void dbg_bp_info(struct dbg_bptab *t)
{
	char buf[8192];
	size_t len = 0;

	if (!t->n) {
		dbg_info(t->s, "No breakpoints or watchpoints.");
		return;
	}
	len += snprintf(buf, sizeof(buf), "%-4s %-15s %-4s %-3s %-12s %s", "Num",
			"Type", "Disp", "Enb", "Ranks", "What");
	for (size_t i = 0; i < t->n && len < sizeof(buf) - 1; i++) {
		const struct dbg_bp *bp = t->bp[i];
		char *ranks = sdm_set_to_string(bp->ranks);
		char *off = sdm_set_to_string(bp->disabled);
		bool all_off = sdm_set_is_subset(bp->ranks, bp->disabled);
		char set[64];

		snprintf(set, sizeof(set), "[%s]", ranks ? ranks : "?");
		len += snprintf(buf + len, sizeof(buf) - len, "\n%-4u %-15s %-4s %-3s %-12s %s",
				bp->num, type_word(bp),
				bp->kind == DBG_BP_TBREAK ? "del" : "keep",
				all_off ? "n" : "y", set, bp->what);
		if (!all_off && !sdm_set_is_empty(bp->disabled) && len < sizeof(buf))
			len += snprintf(buf + len, sizeof(buf) - len,
					"\n\tdisabled on [%s]", off ? off : "?");
		if (len < sizeof(buf))
			len += pending_line(t, bp, buf + len, sizeof(buf) - len);
		if (bp->cond && len < sizeof(buf))
			len += snprintf(buf + len, sizeof(buf) - len,
					"\n\tstop only if %s", bp->cond);
		if (bp->hits && len < sizeof(buf))
			len += snprintf(buf + len, sizeof(buf) - len,
					"\n\tbreakpoint already hit %lu time%s (over all ranks)",
					bp->hits, bp->hits == 1 ? "" : "s");
		free(ranks);
		free(off);
	}
	dbg_info(t->s, "%s", buf);
}

void dbg_bp_settle(struct dbg_bptab *t)
{
	struct sdm_fe_result acc = { 0 };

	for (size_t i = 0; t && i < t->n;) {
		struct dbg_bp *bp = t->bp[i];

		if (sdm_set_is_empty(bp->hit)) {
			i++;
			continue;
		}
		if (!bp->gdb_temp)
			each_gdb(t, bp, bp->hit, "delete", NULL, &acc);
		sdm_set_diff(bp->ranks, bp->hit);
		sdm_set_clear(bp->hit);
		if (sdm_set_is_empty(bp->ranks))
			bp_remove(t, bp);
		else
			i++;
	}
	if (t)
		print_errors(t, "tbreak", &acc);
}
