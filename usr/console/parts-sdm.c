// SPDX-License-Identifier: GPL-2.0
/*
 * Job checkpoint parts run by the session's servers (parts-sdm.h). Part
 * K goes to the server of the first rank it holds: a job checkpoint the
 * console takes has a part per rank, on the rank's node; one taken from
 * a shell names no ranks, and its part K is rank K (crdbg debug
 * --restart). A step is one
 * "part wait" command to every part still under way; the servers answer
 * when their part said it (or ended), so the console hears one merged
 * "frozen" for any number of ranks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crdbg/dbgproto.h>
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "parts-sdm.h"

#define ORDER_TIMEOUT_MS	30000
/* Beyond a wait's own time: the server answers first, the SDM after this. */
#define WAIT_SLACK_MS		15000
#define ENDED			DBGP_ERROR "ended: "

struct dbg_parts {
	struct dbg_session *s;
	struct crs_job_transport tp;
	sdm_id *rank;		/* per part: the rank whose server runs it */
	bool *started, *over;
	size_t n;		/* parts known (the highest started + 1) */
	struct sdm_idset *restarted;	/* ranks whose restart parts may run on */
};

/* Room for part; every part not started yet stays off. */
static int grow(struct dbg_parts *p, size_t part)
{
	size_t n = part + 1;
	sdm_id *rank;
	bool *started, *over;

	if (n <= p->n)
		return 0;
	rank = realloc(p->rank, n * sizeof(*rank));
	if (rank)
		p->rank = rank;
	started = realloc(p->started, n * sizeof(*started));
	if (started)
		p->started = started;
	over = realloc(p->over, n * sizeof(*over));
	if (over)
		p->over = over;
	if (!rank || !started || !over)
		return -ENOMEM;
	for (size_t i = p->n; i < n; i++) {
		p->started[i] = p->over[i] = false;
		p->rank[i] = 0;
	}
	p->n = n;
	return 0;
}

/* The part a rank's answer speaks for; -1 if none. */
static long part_of(const struct dbg_parts *p, sdm_id id)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->started[i] && p->rank[i] == id)
			return (long)i;
	return -1;
}

/* The ranks of the parts started and not over (and not at step, if given). */
static struct sdm_idset *under_way(const struct dbg_parts *p, const struct crs_part_report *rep,
				   size_t n, const char *step)
{
	struct sdm_idset *set = sdm_set_new();

	for (size_t i = 0; set && i < p->n; i++) {
		size_t len = step ? strlen(step) : 0;

		if (!p->started[i] || p->over[i])
			continue;
		if (step && i < n && !strncmp(rep[i].step, step, len) &&
		    (!rep[i].step[len] || rep[i].step[len] == ' '))
			continue;
		if (sdm_set_add_element(set, p->rank[i]) < 0) {
			sdm_set_free(set);
			return NULL;
		}
	}
	return set;
}

/* "part TEXT" to set; the answers in *r. */
static int part_cmd(struct dbg_parts *p, const struct sdm_idset *set, const char *text,
		    uint32_t timeout_ms, struct sdm_fe_result *r)
{
	struct dbgp_cmd cmd = { .verb = DBGP_PART, .arg = text };

	return dbg_send(p->s, set, &cmd, timeout_ms, r);
}

/*
 * Each answer of r to the parts it speaks for: fn(part, text, error).
 * Ranks that got no answer at all are not called.
 */
static void for_each_answer(struct dbg_parts *p, const struct sdm_fe_result *r,
			    void (*fn)(struct dbg_parts *p, size_t part, const char *text,
				       bool error, void *arg),
			    void *arg)
{
	for (unsigned int e = 0; e < r->nev; e++) {
		bool error;
		const char *t = dbg_event_text(p->s, r->ev[e].type, r->ev[e].src,
					       (const char *)r->ev[e].payload, &error);
		sdm_id id;

		sdm_set_for_each(id, r->ev[e].src) {
			long part = part_of(p, id);

			if (part >= 0)
				fn(p, (size_t)part, t, error, arg);
		}
	}
}

static int sdm_start(void *arg, size_t part, const char *node, const char *ranks,
		     char *const argv[], char *err, size_t errlen)
{
	struct dbg_parts *p = arg;
	struct dbg_session *s = p->s;
	struct sdm_idset *set = sdm_set_new(), *one = sdm_set_new();
	struct sdm_fe_result r = { 0 };
	char text[DBGP_CMD_MAX + 1];
	size_t len;
	sdm_id rank;
	int rc = -EINVAL;

	if (!set || !one || grow(p, part)) {
		rc = -ENOMEM;
		goto out;
	}
	/* a job taken outside a session names no ranks: rank K is part K */
	if (!strcmp(ranks, "-"))
		rank = (sdm_id)part;
	else if (sdm_set_parse(set, ranks, NULL) < 0 || !sdm_set_find_next(set, 0, &rank))
		rank = s->n;
	if (rank >= s->n) {
		snprintf(err, errlen, "part %zu holds no rank of this session (\"%s\")", part,
			 ranks);
		goto out;
	}
	if (part_of(p, rank) >= 0 && (size_t)part_of(p, rank) != part) {
		snprintf(err, errlen, "rank %u holds two parts of the job", rank);
		goto out;
	}
	if (s->host && s->host[rank] && node[0] && strcmp(node, "this host") &&
	    strcmp(s->host[rank], node)) {
		snprintf(err, errlen, "part %zu is on %s, rank %u on %s", part, node, rank,
			 s->host[rank]);
		goto out;
	}
	/* "start ARG\x1fARG...": argv[0] is the server's own crdbg */
	len = (size_t)snprintf(text, sizeof(text), "start");
	for (char *const *a = argv + 1; *a; a++) {
		if (strchr(*a, DBGP_ARG_SEP) || strchr(*a, '\n') ||
		    len + strlen(*a) + 2 >= sizeof(text)) {
			snprintf(err, errlen, "part %zu: an argument cannot be sent: %.64s", part, *a);
			goto out;
		}
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%c%s",
					a == argv + 1 ? ' ' : DBGP_ARG_SEP, *a);
	}
	if (sdm_set_add_element(one, rank) < 0) {
		rc = -ENOMEM;
		goto out;
	}
	rc = part_cmd(p, one, text, ORDER_TIMEOUT_MS, &r);
	if (rc) {
		snprintf(err, errlen, "part %zu: cannot reach rank %u's server: %s", part, rank,
			 strerror(-rc));
		goto out;
	}
	rc = -EIO;
	for (unsigned int e = 0; e < r.nev; e++) {
		bool error;
		const char *t = dbg_event_text(s, r.ev[e].type, r.ev[e].src,
					       (const char *)r.ev[e].payload, &error);

		if (!error && !strcmp(t, "started"))
			rc = 0;
		else
			snprintf(err, errlen, "%s: %s", node[0] ? node : "this host",
				 !strncmp(t, DBGP_ERROR, strlen(DBGP_ERROR)) ?
				 t + strlen(DBGP_ERROR) : t);
	}
	if (!rc) {
		p->rank[part] = rank;
		p->started[part] = true;
		p->over[part] = false;
		if (!strcmp(argv[1], "restart") && p->restarted)
			sdm_set_add_element(p->restarted, rank);
	} else if (!r.nev) {
		snprintf(err, errlen, "part %zu: rank %u's server did not answer", part, rank);
	}
out:
	sdm_fe_result_free(&r);
	sdm_set_free(set);
	sdm_set_free(one);
	return rc;
}

/* An answer that says the part ended: it is over, and why. */
static bool ended(struct dbg_parts *p, size_t part, const char *text, bool error,
		  struct crs_part_report *rep, size_t n)
{
	bool lost = !strncmp(text, DBGP_LOST, strlen(DBGP_LOST));

	if (!error || (!lost && strncmp(text, ENDED, strlen(ENDED))))
		return false;
	p->over[part] = true;
	if (part < n) {
		rep[part].over = true;
		snprintf(rep[part].why, sizeof(rep[part].why), "%s",
			 lost ? text : text + strlen(ENDED));
	}
	return true;
}

struct answers {
	struct crs_part_report *rep;
	size_t n;
	const char *step;
};

static void on_order(struct dbg_parts *p, size_t part, const char *text, bool error, void *arg)
{
	struct answers *a = arg;

	ended(p, part, text, error, a->rep, a->n);
}

static void sdm_send(void *arg, const char *line)
{
	struct dbg_parts *p = arg;
	struct sdm_idset *set = under_way(p, NULL, 0, NULL);
	struct sdm_fe_result r = { 0 };
	struct answers a = { 0 };
	char text[600];

	snprintf(text, sizeof(text), "order %s", line);
	if (set && !part_cmd(p, set, text, ORDER_TIMEOUT_MS, &r))
		for_each_answer(p, &r, on_order, &a);
	sdm_fe_result_free(&r);
	sdm_set_free(set);
}

static void on_step(struct dbg_parts *p, size_t part, const char *text, bool error, void *arg)
{
	struct answers *a = arg;

	if (part >= a->n || ended(p, part, text, error, a->rep, a->n))
		return;
	if (!error)
		snprintf(a->rep[part].step, sizeof(a->rep[part].step), "%s", text);
	/* else "no answer in N s": still under way, the caller times out */
}

static int sdm_wait(void *arg, const char *step, int timeout_s, struct crs_part_report *rep,
		    size_t n)
{
	struct dbg_parts *p = arg;
	struct sdm_idset *set = under_way(p, rep, n, step), *left;
	struct sdm_fe_result r = { 0 };
	struct answers a = { .rep = rep, .n = n, .step = step };
	uint32_t ms = (uint32_t)(timeout_s > 0 ? timeout_s : 1) * 1000u;
	char text[128];
	int rc;

	if (!set)
		return -ENOMEM;
	snprintf(text, sizeof(text), "wait %u %s", ms, step);
	rc = part_cmd(p, set, text, ms + WAIT_SLACK_MS, &r);
	if (!rc)
		for_each_answer(p, &r, on_step, &a);
	sdm_fe_result_free(&r);
	sdm_set_free(set);
	if (rc)
		return rc;
	left = under_way(p, rep, n, step);
	rc = !left ? -ENOMEM : sdm_set_is_empty(left) ? 0 : -ETIMEDOUT;
	sdm_set_free(left);
	return rc;
}

static void on_finish(struct dbg_parts *p, size_t part, const char *text, bool error, void *arg)
{
	struct answers *a = arg;
	int status;

	if (part >= a->n)
		return;
	if (!error && sscanf(text, "exit %d", &status) == 1) {
		const char *why = strstr(text, ": ");

		p->over[part] = true;
		a->rep[part].over = true;
		a->rep[part].status = status;
		if (why)
			snprintf(a->rep[part].why, sizeof(a->rep[part].why), "%s", why + 2);
	} else if (!error && !strcmp(text, "running")) {
		a->rep[part].status = 0;	/* it runs on with its processes */
	} else {
		ended(p, part, text, error, a->rep, a->n);
		if (!a->rep[part].why[0])
			snprintf(a->rep[part].why, sizeof(a->rep[part].why), "%s", text);
		a->rep[part].status = 1;
	}
}

static void sdm_finish(void *arg, int grace_s, struct crs_part_report *rep, size_t n)
{
	struct dbg_parts *p = arg;
	struct sdm_idset *set = sdm_set_new();
	struct sdm_fe_result r = { 0 };
	struct answers a = { .rep = rep, .n = n };
	uint32_t ms = (uint32_t)(grace_s > 0 ? grace_s : 0) * 1000u;
	char text[64];

	/* every part started, ended or not: each says how it ended */
	for (size_t i = 0; set && i < p->n; i++)
		if (p->started[i] && sdm_set_add_element(set, p->rank[i]) < 0)
			break;
	snprintf(text, sizeof(text), "finish %u", ms);
	if (set && !part_cmd(p, set, text, ms + WAIT_SLACK_MS, &r))
		for_each_answer(p, &r, on_finish, &a);
	sdm_fe_result_free(&r);
	sdm_set_free(set);
	/* an operation's parts are done with: the next one starts its own */
	for (size_t i = 0; i < p->n; i++)
		p->started[i] = false;
}

int dbg_parts_wait_debug(struct dbg_parts *p, sdm_id id, pid_t pid, uint32_t timeout_ms,
			 char *err, size_t errlen)
{
	struct sdm_idset *one = sdm_set_new();
	struct sdm_fe_result r = { 0 };
	uint32_t ms = timeout_ms;
	char text[64];
	int rc = -ENOMEM;

	if (!one || sdm_set_add_element(one, id) < 0)
		goto out;
	snprintf(text, sizeof(text), "wait %u debug %d", ms, (int)pid);
	rc = part_cmd(p, one, text, ms + WAIT_SLACK_MS, &r);
	if (rc) {
		snprintf(err, errlen, "cannot reach rank %u's server: %s", id, strerror(-rc));
		goto out;
	}
	rc = -ETIMEDOUT;
	snprintf(err, errlen, "rank %u's server did not answer", id);
	for (unsigned int e = 0; e < r.nev; e++) {
		bool error;
		const char *t = dbg_event_text(p->s, r.ev[e].type, r.ev[e].src,
					       (const char *)r.ev[e].payload, &error);

		if (!error) {
			rc = 0;
			break;
		}
		if (!strncmp(t, ENDED, strlen(ENDED)))
			rc = -EPIPE;
		snprintf(err, errlen, "%s", !strncmp(t, ENDED, strlen(ENDED)) ?
			 t + strlen(ENDED) : t);
	}
out:
	sdm_fe_result_free(&r);
	sdm_set_free(one);
	return rc;
}

void dbg_parts_drain(struct dbg_parts *p, uint32_t timeout_ms)
{
	struct sdm_fe_result r = { 0 };
	char text[64];

	if (!p->restarted || sdm_set_is_empty(p->restarted))
		return;
	snprintf(text, sizeof(text), "drain %u", timeout_ms);
	if (!part_cmd(p, p->restarted, text, timeout_ms + WAIT_SLACK_MS, &r))
		sdm_fe_result_free(&r);
}

const struct crs_job_transport *dbg_parts_transport(struct dbg_parts *p)
{
	return &p->tp;
}

struct dbg_parts *dbg_parts_new(struct dbg_session *s)
{
	struct dbg_parts *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->s = s;
	p->restarted = sdm_set_new();
	p->tp = (struct crs_job_transport){
		.start = sdm_start, .send = sdm_send, .wait = sdm_wait, .finish = sdm_finish,
		.arg = p,
	};
	return p;
}

void dbg_parts_free(struct dbg_parts *p)
{
	if (!p)
		return;
	free(p->rank);
	free(p->started);
	free(p->over);
	sdm_set_free(p->restarted);
	free(p);
}
