// SPDX-License-Identifier: GPL-2.0
/*
 * Job checkpoint parts run by the session's servers (parts-sdm.h). Part
 * K goes to the server of the first rank it holds: a job checkpoint the
 * console takes has a part per rank, on the rank's node; one taken from
 * a shell names no ranks, and its part K is rank K (crdbg debug
 * --restart). A step is one
 * "part wait" command to every part still under way; the servers answer
 * when their part said it (or ended), so the console hears one merged
 * "frozen" for any number of ranks; each answer finds its part in a
 * table by rank.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crdbg/dbgproto.h>
#include "sdm/engine.h"
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "parts-sdm.h"

#define ORDER_TIMEOUT_MS	30000
/* Beyond a wait's own time: the server answers first, the SDM after this. */
#define WAIT_SLACK_MS		15000
#define ENDED			DBGP_ERROR "ended: "

struct sdm_part {
	sdm_id rank;		/* the rank whose server runs it */
	bool started, over;
};

struct dbg_parts {
	struct dbg_session *s;
	struct crs_job_transport tp;
	struct sdm_part *part;	/* by part */
	size_t n;		/* parts known (the highest started + 1) */
	long *of_rank;		/* by rank: its started part, or -1 */
	size_t nr_ranks;
	struct sdm_idset *restarted;	/* ranks whose restart parts may run on */
};

/* Room for part and for every rank of the session; what is new stays off. */
static int grow(struct dbg_parts *p, size_t part)
{
	size_t n = part + 1, nr = p->s->n;

	if (n > p->n) {
		struct sdm_part *np = realloc(p->part, n * sizeof(*np));

		if (!np)
			return -ENOMEM;
		for (size_t i = p->n; i < n; i++)
			np[i] = (struct sdm_part){ 0 };
		p->part = np;
		p->n = n;
	}
	if (nr > p->nr_ranks) {
		long *nof = realloc(p->of_rank, nr * sizeof(*nof));

		if (!nof)
			return -ENOMEM;
		for (size_t i = p->nr_ranks; i < nr; i++)
			nof[i] = -1;
		p->of_rank = nof;
		p->nr_ranks = nr;
	}
	return 0;
}

/* The part a rank's answer speaks for; -1 if none. */
static long part_of(const struct dbg_parts *p, sdm_id id)
{
	return id < p->nr_ranks ? p->of_rank[id] : -1;
}

/* The ranks of the parts started and not over (and not at step, unless UNSPEC). */
static struct sdm_idset *under_way(const struct dbg_parts *p, const struct crs_part_report *rep,
				   size_t n, enum job_part_step step)
{
	struct sdm_idset *set = sdm_set_new();

	for (size_t i = 0; set && i < p->n; i++) {
		if (!p->part[i].started || p->part[i].over)
			continue;
		if (step != JOB_STEP_UNSPEC && i < n && rep[i].msg.step == step)
			continue;
		if (sdm_set_add_element(set, p->part[i].rank) < 0) {
			sdm_set_free(set);
			return NULL;
		}
	}
	return set;
}

/* The part command pc to set; the answers in *r. */
static int part_cmd(struct dbg_parts *p, const struct sdm_idset *set,
		    const struct dbgp_part_cmd *pc, uint32_t timeout_ms, struct sdm_fe_result *r)
{
	char text[DBGP_CMD_MAX + 1];
	struct dbgp_cmd cmd = { .verb = DBGP_PART, .arg = text };
	int n = dbgp_part_format(text, sizeof(text), pc);

	return n < 0 ? n : dbg_send(p->s, set, &cmd, timeout_ms, r);
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
	struct dbgp_part_cmd start = { .op = DBGP_PART_START };
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
	/* argv[0] is the part program, the server's own */
	for (char *const *a = argv + 1; *a && start.argc < DBGP_PART_ARGS_MAX; a++)
		start.argv[++start.argc] = *a;
	if (sdm_set_add_element(one, rank) < 0) {
		rc = -ENOMEM;
		goto out;
	}
	rc = part_cmd(p, one, &start, ORDER_TIMEOUT_MS, &r);
	if (rc == -EINVAL || rc == -ENOSPC) {
		snprintf(err, errlen, "part %zu: its command cannot be sent (%s): %.64s...", part,
			 rc == -ENOSPC ? "too long" : "a separator or newline in it",
			 argv[1] ? argv[1] : "");
		goto out;
	}
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
		if (p->part[part].started)	/* started anew: its rank may be another */
			p->of_rank[p->part[part].rank] = -1;
		p->part[part] = (struct sdm_part){ .rank = rank, .started = true };
		p->of_rank[rank] = (long)part;
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
	p->part[part].over = true;
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
};

static void on_order(struct dbg_parts *p, size_t part, const char *text, bool error, void *arg)
{
	struct answers *a = arg;

	ended(p, part, text, error, a->rep, a->n);
}

static void sdm_send(void *arg, enum job_part_order order)
{
	struct dbg_parts *p = arg;
	struct sdm_idset *set = under_way(p, NULL, 0, JOB_STEP_UNSPEC);
	struct sdm_fe_result r = { 0 };
	struct answers a = { 0 };

	if (set && !part_cmd(p, set, &(struct dbgp_part_cmd){ .op = DBGP_PART_ORDER,
							       .line = job_part_order_name(order) },
			     ORDER_TIMEOUT_MS, &r))
		for_each_answer(p, &r, on_order, &a);
	sdm_fe_result_free(&r);
	sdm_set_free(set);
}

static void on_step(struct dbg_parts *p, size_t part, const char *text, bool error, void *arg)
{
	struct answers *a = arg;

	struct job_part_msg m;

	if (part >= a->n || ended(p, part, text, error, a->rep, a->n))
		return;
	/* the server passes the part's step on as the codec wrote it */
	if (!error && !job_part_msg_parse(text, strlen(text), &m))
		a->rep[part].msg = m;
	else if (!error)
		snprintf(a->rep[part].why, sizeof(a->rep[part].why),
			 "its server sent a malformed step: %.400s", text);
	/* else "no answer in N s": still under way, the caller times out */
}

static int sdm_wait(void *arg, enum job_part_step step, int timeout_s,
		    struct crs_part_report *rep, size_t n)
{
	struct dbg_parts *p = arg;
	struct sdm_idset *set = under_way(p, rep, n, step), *left;
	struct sdm_fe_result r = { 0 };
	struct answers a = { .rep = rep, .n = n };
	uint32_t ms = (uint32_t)(timeout_s > 0 ? timeout_s : 1) * 1000u;
	struct dbgp_part_cmd wait = { .op = DBGP_PART_WAIT, .ms = ms };
	int rc;

	if (!set)
		return -ENOMEM;
	snprintf(wait.step, sizeof(wait.step), "%s", job_part_step_name(step));
	rc = part_cmd(p, set, &wait, ms + WAIT_SLACK_MS, &r);
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
	struct dbgp_part_end end;

	if (part >= a->n)
		return;
	if (!error && !dbgp_part_end_parse(text, &end) && !end.running) {
		p->part[part].over = true;
		a->rep[part].over = true;
		a->rep[part].status = end.status;
		if (end.why[0])
			snprintf(a->rep[part].why, sizeof(a->rep[part].why), "%s", end.why);
	} else if (!error && !dbgp_part_end_parse(text, &end)) {
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

	/* every part started, ended or not: each says how it ended */
	for (size_t i = 0; set && i < p->n; i++)
		if (p->part[i].started && sdm_set_add_element(set, p->part[i].rank) < 0)
			break;
	if (set && !part_cmd(p, set, &(struct dbgp_part_cmd){ .op = DBGP_PART_FINISH, .ms = ms },
			     ms + WAIT_SLACK_MS, &r))
		for_each_answer(p, &r, on_finish, &a);
	sdm_fe_result_free(&r);
	sdm_set_free(set);
	/* an operation's parts are done with: the next one starts its own */
	for (size_t i = 0; i < p->n; i++) {
		if (p->part[i].started)
			p->of_rank[p->part[i].rank] = -1;
		p->part[i].started = false;
	}
}

/* The next pids of w (at most a command's worth) as one wait's text. */
static int parked_text(const struct dbg_parked *w, size_t from, uint32_t ms, char *buf,
		       size_t len, size_t *ret_n)
{
	struct dbgp_part_cmd wait = { .op = DBGP_PART_WAIT, .ms = ms };
	char arg[DBGP_CMD_MAX + 1];
	struct dbgp_cmd cmd = { .verb = DBGP_PART, .arg = arg };
	size_t n = w->n - from < DBGP_PART_PIDS_MAX ? w->n - from : DBGP_PART_PIDS_MAX;

	for (size_t i = 0; i < n; i++)
		wait.pid[i] = (int)w->pid[from + i];
	wait.npid = (unsigned int)n;
	*ret_n = n;
	if (dbgp_part_format(arg, sizeof(arg), &wait) < 0)
		return -EINVAL;
	return dbgp_encode(buf, len, &cmd);
}

/* The answer to one wait of w: 0, -EPIPE (its part ended), -ETIMEDOUT; why said. */
static int parked_answer(struct dbg_parts *p, struct dbg_parked *w, const struct sdm_fe_result *r)
{
	int rc = -ETIMEDOUT;

	snprintf(w->why, sizeof(w->why), "rank %u's server did not answer", w->server);
	for (unsigned int e = 0; e < r->nev; e++) {
		bool error;
		const char *t = dbg_event_text(p->s, r->ev[e].type, r->ev[e].src,
					       (const char *)r->ev[e].payload, &error);
		bool over = !strncmp(t, ENDED, strlen(ENDED));

		if (!error)
			return 0;
		rc = over ? -EPIPE : -ETIMEDOUT;
		snprintf(w->why, sizeof(w->why), "%s", over ? t + strlen(ENDED) : t);
	}
	return rc;
}

/*
 * One round: a wait for the next pids of every part not settled, all
 * under way at once; then every answer. false when nothing was left.
 */
static bool parked_round(struct dbg_parts *p, struct dbg_parked *w, size_t n, size_t *done,
			 uint32_t ms)
{
	uint32_t *req = calloc(n, sizeof(*req));
	size_t *sent = calloc(n, sizeof(*sent));
	char text[DBGP_CMD_MAX + 1];
	bool any = false;

	for (size_t i = 0; req && sent && i < n; i++) {
		struct sdm_idset *one = sdm_set_new();
		int len;

		if (w[i].rc != -EINPROGRESS)
			continue;
		len = parked_text(&w[i], done[i], ms, text, sizeof(text), &sent[i]);
		if (len < 0 || !one || sdm_set_add_element(one, w[i].server) < 0 ||
		    sdm_fe_submit(p->s->fe, one, text, (size_t)len, ms + WAIT_SLACK_MS, &req[i])) {
			w[i].rc = len < 0 ? len : -ENOMEM;
			snprintf(w[i].why, sizeof(w[i].why), "cannot ask rank %u's server",
				 w[i].server);
		}
		sdm_set_free(one);
		any |= w[i].rc == -EINPROGRESS;
	}
	for (size_t i = 0; req && sent && i < n; i++) {
		struct sdm_fe_result r = { 0 };
		int rc;

		if (w[i].rc != -EINPROGRESS)
			continue;
		rc = sdm_fe_collect(p->s->fe, req[i], &r);
		w[i].rc = rc ? rc : parked_answer(p, &w[i], &r);
		sdm_fe_result_free(&r);
		if (!w[i].rc && (done[i] += sent[i]) < w[i].n)
			w[i].rc = -EINPROGRESS;	/* a command's worth at a time */
	}
	for (size_t i = 0; (!req || !sent) && i < n; i++)
		if (w[i].rc == -EINPROGRESS)
			w[i].rc = -ENOMEM;
	free(req);
	free(sent);
	return any;
}

void dbg_parts_wait_parked(struct dbg_parts *p, struct dbg_parked *w, size_t n,
			   uint32_t timeout_ms)
{
	size_t *done = calloc(n ? n : 1, sizeof(*done));
	uint64_t end = sdm_now_ms() + timeout_ms;

	for (size_t i = 0; i < n; i++) {
		w[i].rc = w[i].n ? -EINPROGRESS : 0;
		w[i].why[0] = 0;
	}
	while (done) {
		uint64_t now = sdm_now_ms();

		if (now >= end || !parked_round(p, w, n, done, (uint32_t)(end - now)))
			break;
	}
	for (size_t i = 0; i < n; i++) {
		if (w[i].rc == -EINPROGRESS || !done) {
			w[i].rc = -ETIMEDOUT;
			snprintf(w[i].why, sizeof(w[i].why), "no answer in %u s",
				 (timeout_ms + 999) / 1000);
		}
	}
	free(done);
}

void dbg_parts_drain(struct dbg_parts *p, uint32_t timeout_ms)
{
	struct sdm_fe_result r = { 0 };

	if (!p->restarted || sdm_set_is_empty(p->restarted))
		return;
	if (!part_cmd(p, p->restarted,
		      &(struct dbgp_part_cmd){ .op = DBGP_PART_DRAIN, .ms = timeout_ms },
		      timeout_ms + WAIT_SLACK_MS, &r))
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
	free(p->part);
	free(p->of_rank);
	sdm_set_free(p->restarted);
	free(p);
}
