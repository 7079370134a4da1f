// SPDX-License-Identifier: GPL-2.0
/*
 * The session's checkpoint timeline, over checkpoint.c's dbg_ckpt_take()
 * and dbg_ckpt_restart().
 *
 * Every checkpoint the session takes (by hand with "checkpoint", or at
 * every stop with auto-checkpoint on) gets the next number and remembers
 * the stop it was taken at, its size in the store and its handles.
 * "restart N" gives checkpoint N's handles to dbg_ckpt_restart(); "back"
 * goes to the checkpoint before the job's position along the way the
 * session went (each entry remembers the one the job was at when it was
 * taken), so after "restart 1" and a continue, "back" is 1 again.
 *
 * Cheap: the ranks' processes keep their pids at every stop, so crdbg
 * checkpoint makes each checkpoint incremental on the previous one
 * (criu --track-mem, a chain per rank, Documentation/checkpoint.md).
 *
 * Retention ("set checkpoint-keep K", K = 0: no limit) has to respect the
 * chains: crdbg rm refuses a checkpoint others depend on, and a chain can
 * only go as a whole. So a chain is cut at L = (K + 1) / 2 links (the
 * next checkpoint is taken --full), and when the session holds more than
 * K checkpoints the oldest chain is removed, newest link first: the store
 * then holds between K - L + 1 and K of the session's checkpoints, every
 * one of them restartable. The first checkpoint after a restart is full
 * too: the restored processes start a new chain.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <crdbg/crs.h>
#include <crdbg/job.h>
#include <crdbg/dbgproto.h>
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "checkpoint.h"
#include "session.h"
#include "stop-line.h"
#include "timeline.h"

#define TL_KEEP_DEFAULT	8
#define TL_CHAIN_MAX	16	/* chain length without a keep limit */
#define TL_STOP_MAX	256
#define TL_HANDLES_MAX	4096

struct tl_entry {
	unsigned int no;
	unsigned int prev;	/* the entry the job was at when this was taken */
	bool removed;
	bool full;		/* no part has a parent: a chain starts here */
	time_t when;
	double secs;		/* how long the job was held for it */
	uint64_t bytes;		/* on disk, every part */
	char stop[TL_STOP_MAX];
	char handles[TL_HANDLES_MAX];	/* a job handle, or one per rank (rank order) */
	bool job;			/* handles is a job checkpoint */
	char parts[TL_HANDLES_MAX];	/* its parts' handles, comma-separated */
	char parents[TL_HANDLES_MAX];	/* each part's parent, "" for none */
};

struct dbg_timeline {
	struct dbg_session *s;
	struct dbg_ckpt *ck;
	bool autockpt;
	unsigned int keep;	/* 0: no limit */
	uint64_t budget;	/* bytes in the store, 0: no limit */
	struct tl_entry *e;	/* e[i].no == i + 1; removed ones stay */
	unsigned int n, cap;
	unsigned int current;	/* the entry the job was last at, 0: none */
	bool moved;		/* the job ran since it was at current */
	unsigned int chain;	/* links of the newest chain */
	bool need_full;		/* a restart happened: start a new chain */
	char stop[TL_STOP_MAX];	/* where the job stopped last */
};

struct dbg_timeline *dbg_tl_new(struct dbg_session *s, struct dbg_ckpt *ck)
{
	struct dbg_timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->s = s;
	tl->ck = ck;
	tl->keep = TL_KEEP_DEFAULT;
	snprintf(tl->stop, sizeof(tl->stop), "where the session started");
	return tl;
}

void dbg_tl_free(struct dbg_timeline *tl)
{
	if (!tl)
		return;
	free(tl->e);
	free(tl);
}

static struct tl_entry *entry(struct dbg_timeline *tl, unsigned int no)
{
	return no && no <= tl->n ? &tl->e[no - 1] : NULL;
}

static unsigned int chain_cap(const struct dbg_timeline *tl)
{
	return tl->keep ? (tl->keep + 1) / 2 : TL_CHAIN_MAX;
}

/* ---- settings ---- */

static bool word_is(const char **p, const char *w)
{
	size_t l = strlen(w);

	if (strncmp(*p, w, l) || ((*p)[l] && !isspace((unsigned char)(*p)[l])))
		return false;
	*p += l;
	while (isspace((unsigned char)**p))
		(*p)++;
	return true;
}

static void size_text(uint64_t b, char *buf, size_t len);

static void show_settings(struct dbg_timeline *tl)
{
	char keep[64], budget[48] = "0 (no limit)";

	if (tl->keep)
		snprintf(keep, sizeof(keep), "%u (chains of at most %u)", tl->keep, chain_cap(tl));
	else
		snprintf(keep, sizeof(keep), "0 (no limit)");
	if (tl->budget)
		size_text(tl->budget, budget, sizeof(budget));
	dbg_info(tl->s, "auto-checkpoint %s; checkpoint-keep %s; checkpoint-budget %s",
		 tl->autockpt ? "on" : "off", keep, budget);
}

/* "512M", "2G", "1.5GiB", "100000" (bytes), "0": a size; false if not one. */
static bool parse_size(const char *p, uint64_t *ret)
{
	static const char units[] = "KMGT";
	const char *u;
	char *end;
	double v;

	if (!isdigit((unsigned char)*p))
		return false;
	errno = 0;
	v = strtod(p, &end);
	if (errno || v < 0)
		return false;
	if (*end && (u = strchr(units, toupper((unsigned char)*end)))) {
		v *= (double)(1ull << (10 * (u - units + 1)));
		end++;
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
	} else if (!strcmp(end, "B")) {
		end++;
	}
	if (*end || v >= 18e18)
		return false;
	*ret = (uint64_t)v;
	return true;
}

static void retain(struct dbg_timeline *tl);

bool dbg_tl_set(struct dbg_timeline *tl, const char *arg)
{
	const char *p = arg;
	char *end;
	unsigned long k;

	if (word_is(&p, "auto-checkpoint")) {
		if (!strcmp(p, "on"))
			tl->autockpt = true;
		else if (!strcmp(p, "off"))
			tl->autockpt = false;
		else if (*p) {
			dbg_error(tl->s, "set auto-checkpoint: want on or off, not '%.40s'", p);
			return true;
		}
		show_settings(tl);
		return true;
	}
	if (word_is(&p, "checkpoint-budget")) {
		if (*p) {
			uint64_t b;

			if (!parse_size(p, &b)) {
				dbg_error(tl->s, "set checkpoint-budget: want a size such as 512M or 2G (0: no limit), not '%.40s'",
					  p);
				return true;
			}
			tl->budget = b;
			retain(tl);
		}
		show_settings(tl);
		return true;
	}
	if (word_is(&p, "checkpoint-keep")) {
		if (*p) {
			errno = 0;
			k = strtoul(p, &end, 10);
			if (!isdigit((unsigned char)*p) || *end || errno || k > 100000) {
				dbg_error(tl->s, "set checkpoint-keep: want a number of checkpoints (0: no limit), not '%.40s'",
					  p);
				return true;
			}
			tl->keep = (unsigned int)k;
			/* a chain longer than the new cap ends with the next one */
			retain(tl);
		}
		show_settings(tl);
		return true;
	}
	return false;
}

/* ---- what an entry holds ---- */

/* Whether tok is one of the comma-separated items of list. */
static bool has_item(const char *list, const char *tok, size_t toklen)
{
	const char *p = list;

	if (!toklen)
		return false;
	while (*p) {
		size_t l = strcspn(p, ",");

		if (l == toklen && !strncmp(p, tok, l))
			return true;
		p += l;
		if (*p == ',')
			p++;
	}
	return false;
}

/* Bytes the files of one checkpoint directory take on disk. */
static uint64_t dir_bytes(const char *root, const char *handle)
{
	char dir[PATH_MAX], path[PATH_MAX + 256];
	uint64_t sum = 0;
	struct dirent *d;
	struct stat st;
	DIR *dp;

	if (crs_store_path(root, handle, dir, sizeof(dir)))
		return 0;
	dp = opendir(dir);
	if (!dp)
		return 0;
	while ((d = readdir(dp))) {
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (!lstat(path, &st) && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_blocks * 512;
	}
	closedir(dp);
	return sum;
}

/*
 * A job checkpoint (the console's, <crdbg/job.h>): its parts, their
 * parents and sizes, from the manifest, which records them because a
 * part may live in another node's store. false if handle is no job.
 */
static bool describe_job(struct tl_entry *e, const char *root)
{
	struct crs_job j;
	char err[256];
	size_t pl = 0, ql = 0;

	if (!crs_job_exists(root, e->handles) || crs_job_load(root, e->handles, &j, err, sizeof(err)))
		return false;
	for (size_t i = 0; i < j.nr_parts; i++) {
		const struct crs_job_part *p = &j.parts[i];

		pl += snprintf(e->parts + pl, sizeof(e->parts) - pl, "%s%s", i ? "," : "", p->handle);
		ql += snprintf(e->parents + ql, sizeof(e->parents) - ql, "%s%s", i ? "," : "",
			       p->parent);
		if (pl >= sizeof(e->parts) || ql >= sizeof(e->parents))
			break;	/* too many parts to follow: taken as a chain of its own */
		if (p->parent[0])
			e->full = false;
		e->bytes += p->bytes;
	}
	crs_job_free(&j);
	return true;
}

/*
 * The parts of e (the job's, or e's own comma-separated handles: an MPIR
 * job's one tree, or one checkpoint per rank), each part's parent and
 * the size of all parts.
 */
static void describe(struct tl_entry *e)
{
	const char *root = crs_store_root(NULL);
	char h[CRS_HANDLE_MAX], err[256];
	const char *p = e->handles;
	size_t pl = 0;

	e->full = true;
	e->bytes = 0;
	e->parents[0] = 0;
	e->parts[0] = 0;
	e->job = describe_job(e, root);
	if (e->job)
		return;
	snprintf(e->parts, sizeof(e->parts), "%s", e->handles);
	while (*p) {
		size_t l = strcspn(p, ",");
		struct crs_meta m;

		snprintf(h, sizeof(h), "%.*s", (int)(l < sizeof(h) ? l : sizeof(h) - 1), p);
		crs_meta_init(&m);
		if (!crs_store_load(root, h, &m, err, sizeof(err)) && m.parent[0])
			e->full = false;
		pl += snprintf(e->parents + pl, sizeof(e->parents) - pl, "%s%s",
			       p == e->handles ? "" : ",", m.parent);
		if (pl >= sizeof(e->parents))
			pl = sizeof(e->parents) - 1;
		crs_meta_free(&m);
		e->bytes += dir_bytes(root, h);
		p += l;
		if (*p == ',')
			p++;
	}
}

/* Whether a part of e has its parent among the parts of the marked entries. */
static bool depends_on(struct dbg_timeline *tl, const struct tl_entry *e, const bool *mark)
{
	const char *p = e->parents;

	for (;;) {
		size_t l = strcspn(p, ",");	/* "" for a full part */

		for (unsigned int i = 0; l && i < tl->n; i++)
			if (mark[i] && has_item(tl->e[i].parts, p, l))
				return true;
		p += l;
		if (*p != ',')
			return false;
		p++;
	}
}

static void size_text(uint64_t b, char *buf, size_t len)
{
	if (b >= 1ull << 30)
		snprintf(buf, len, "%.1f GiB", b / (double)(1ull << 30));
	else if (b >= 1ull << 20)
		snprintf(buf, len, "%.1f MiB", b / (double)(1ull << 20));
	else
		snprintf(buf, len, "%.0f KiB", b / 1024.0);
}

/* ---- retention ---- */

/* Remove a job checkpoint: every part on its node, then the manifest. */
static bool remove_job(struct dbg_timeline *tl, struct tl_entry *e)
{
	char err[512];
	int rc = dbg_ckpt_remove_job(tl->ck, e->handles, err, sizeof(err));

	if (rc && rc != -ENOENT) {
		dbg_error(tl->s, "checkpoint-keep: checkpoint %u: cannot remove %s: %s", e->no,
			  e->handles, err);
		return false;
	}
	return true;
}

/* Remove e's parts from the store (crdbg rm). false: a part stays (said). */
static bool remove_entry(struct dbg_timeline *tl, struct tl_entry *e)
{
	const char *root = crs_store_root(NULL), *p = e->handles;
	char h[CRS_HANDLE_MAX], deps[512];
	bool ok = true;
	int rc;

	if (e->job) {
		e->removed = remove_job(tl, e);
		return e->removed;
	}
	while (*p) {
		size_t l = strcspn(p, ",");

		snprintf(h, sizeof(h), "%.*s", (int)(l < sizeof(h) ? l : sizeof(h) - 1), p);
		rc = crs_store_remove(root, h);
		if (rc == -EBUSY) {
			if (crs_store_dependents(root, h, deps, sizeof(deps)) < 0)
				deps[0] = 0;
			dbg_error(tl->s, "checkpoint-keep: checkpoint %u: %s is kept: %s depend%s on it",
				  e->no, h, deps[0] ? deps : "other checkpoints",
				  strchr(deps, ',') ? "" : "s");
			ok = false;
		} else if (rc < 0 && rc != -ENOENT) {
			dbg_error(tl->s, "checkpoint-keep: checkpoint %u: cannot remove %s: %s",
				  e->no, h, strerror(-rc));
			ok = false;
		}
		p += l;
		if (*p == ',')
			p++;
	}
	e->removed = ok;
	return ok;
}

static unsigned int kept(const struct dbg_timeline *tl)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < tl->n; i++)
		k += !tl->e[i].removed;
	return k;
}

static uint64_t kept_bytes(const struct dbg_timeline *tl)
{
	uint64_t b = 0;

	for (unsigned int i = 0; i < tl->n; i++)
		if (!tl->e[i].removed)
			b += tl->e[i].bytes;
	return b;
}

static bool over_limit(const struct dbg_timeline *tl)
{
	return (tl->keep && kept(tl) > tl->keep) ||
	       (tl->budget && kept_bytes(tl) > tl->budget);
}

/* Which limit: "checkpoint-keep 4", "checkpoint-budget 512.0 MiB". */
static void limit_text(const struct dbg_timeline *tl, char *buf, size_t len)
{
	char size[32];

	if (tl->keep && kept(tl) > tl->keep) {
		snprintf(buf, len, "checkpoint-keep %u", tl->keep);
		return;
	}
	size_text(tl->budget, size, sizeof(size));
	snprintf(buf, len, "checkpoint-budget %s", size);
}

/*
 * Over a limit (count or bytes): remove the oldest chain whole (its
 * oldest entry and every entry that depends on it), newest link first,
 * never the chain of the newest checkpoint.
 */
static void retain(struct dbg_timeline *tl)
{
	bool *mark;

	if ((!tl->keep && !tl->budget) || !tl->n)
		return;
	if (tl->chain >= chain_cap(tl))
		tl->need_full = true;
	mark = calloc(tl->n, sizeof(*mark));
	if (!mark)
		return;
	while (over_limit(tl)) {
		unsigned int first = 0, last = 0, i;
		char what[64];
		bool ok = true;

		limit_text(tl, what, sizeof(what));	/* before: which limit is passed */
		memset(mark, 0, tl->n * sizeof(*mark));
		while (first < tl->n && tl->e[first].removed)
			first++;
		mark[first] = true;
		for (i = first + 1; i < tl->n; i++) {
			if (!tl->e[i].removed && depends_on(tl, &tl->e[i], mark)) {
				mark[i] = true;
				last = i;
			}
		}
		if (mark[tl->n - 1])
			break;	/* the newest chain: kept whole */
		for (i = tl->n; i-- > first;)
			if (mark[i] && !remove_entry(tl, &tl->e[i]))
				ok = false;
		if (!ok)
			break;
		if (last > first)
			dbg_info(tl->s, "%s: removed checkpoints %u-%u (one chain)", what,
				 first + 1, last + 1);
		else
			dbg_info(tl->s, "%s: removed checkpoint %u", what, first + 1);
	}
	free(mark);
}

/* ---- taking one ---- */

static bool every_rank_stopped(struct dbg_timeline *tl, bool *some_alive)
{
	bool all = true;

	*some_alive = false;
	for (uint32_t id = 0; id < tl->s->n; id++) {
		if (tl->s->state[id] == DBG_STOPPED || tl->s->state[id] == DBG_RUNNING)
			*some_alive = true;
		if (tl->s->state[id] != DBG_STOPPED)
			all = false;
	}
	return all;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Checkpoint the job where it stands; quiet: the handles only in the list. */
static void take(struct dbg_timeline *tl, bool quiet)
{
	struct tl_entry *e, *grown;
	unsigned int flags = quiet ? DBG_CKPT_QUIET : 0;
	char size[32];
	double t0;

	if (tl->n == tl->cap) {
		unsigned int cap = tl->cap ? 2 * tl->cap : 16;

		grown = realloc(tl->e, cap * sizeof(*grown));
		if (!grown) {
			dbg_error(tl->s, "checkpoint: out of memory");
			return;
		}
		tl->e = grown;
		tl->cap = cap;
	}
	e = &tl->e[tl->n];
	memset(e, 0, sizeof(*e));
	if (tl->need_full || tl->chain >= chain_cap(tl))
		flags |= DBG_CKPT_FULL;
	t0 = now_s();
	if (dbg_ckpt_take(tl->ck, flags, e->handles, sizeof(e->handles)))
		return;	/* said why; nothing was kept */
	e->secs = now_s() - t0;
	e->no = ++tl->n;
	e->prev = tl->current;
	e->when = time(NULL);
	snprintf(e->stop, sizeof(e->stop), "%s", tl->stop);
	describe(e);
	tl->chain = e->full ? 1 : tl->chain + 1;
	tl->need_full = false;
	tl->current = e->no;
	tl->moved = false;
	size_text(e->bytes, size, sizeof(size));
	dbg_info(tl->s, "checkpoint %u: %s, %s %s, %.2f s", e->no, e->stop, size,
		 e->full ? "full" : "incremental", e->secs);
	retain(tl);
}

void dbg_tl_checkpoint(struct dbg_timeline *tl)
{
	take(tl, false);
}

void dbg_tl_after_stop(struct dbg_timeline *tl, const struct sdm_fe_result *stops)
{
	bool alive;

	if (!tl)
		return;
	dbg_stop_line(stops, tl->stop, sizeof(tl->stop));
	tl->moved = true;
	if (!tl->autockpt)
		return;
	if (!every_rank_stopped(tl, &alive)) {
		if (alive)
			dbg_info(tl->s, "auto-checkpoint: not here: not every rank is stopped");
		return;
	}
	take(tl, true);
}

/* ---- the list ---- */

void dbg_tl_list(struct dbg_timeline *tl)
{
	char size[32], when[16];
	unsigned int shown = 0;
	uint64_t total = 0;

	show_settings(tl);
	for (unsigned int i = 0; i < tl->n; i++) {
		struct tl_entry *e = &tl->e[i];
		struct tm tm;

		if (e->removed)
			continue;
		if (!shown++)
			dbg_info(tl->s, "  Num  Taken(UTC) Size       Kind         Stop");
		gmtime_r(&e->when, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		size_text(e->bytes, size, sizeof(size));
		total += e->bytes;
		dbg_info(tl->s, "%c %-4u %-10s %-10s %-12s %s", e->no == tl->current ? '*' : ' ',
			 e->no, when, size, e->full ? "full" : "incremental", e->stop);
		dbg_info(tl->s, "         handles %s", e->handles);
	}
	if (!shown) {
		dbg_info(tl->s, "no checkpoint in this session");
		return;
	}
	size_text(total, size, sizeof(size));
	dbg_info(tl->s, "%u checkpoint%s, %s; * the job's last checkpoint%s", shown,
		 shown == 1 ? "" : "s", size, tl->moved ? " (it ran on since)" : "");
}

/* ---- going back ---- */

static void restart_entry(struct dbg_timeline *tl, struct tl_entry *e, const char *what)
{
	unsigned int errors = tl->s->errors;

	dbg_ckpt_restart(tl->ck, e->handles);
	if (tl->s->errors != errors) {
		dbg_error(tl->s, "%s: the job did not come back to checkpoint %u (see above)",
			  what, e->no);
		return;
	}
	tl->current = e->no;
	tl->moved = false;
	tl->need_full = true;
	snprintf(tl->stop, sizeof(tl->stop), "%s", e->stop);
	dbg_info(tl->s, "%s: the job is at checkpoint %u: %s", what, e->no, e->stop);
}

void dbg_tl_restart(struct dbg_timeline *tl, const char *arg)
{
	const char *p = arg;
	unsigned long no;
	unsigned int errors = tl->s->errors;
	char *end;

	while (isdigit((unsigned char)*p))
		p++;
	if (!*arg || *p) {
		/* handles, or the last checkpoint: checkpoint.c's restart */
		dbg_ckpt_restart(tl->ck, arg);
		if (tl->s->errors != errors)
			return;
		tl->current = 0;
		tl->moved = false;
		tl->need_full = true;
		/* no handles: the last checkpoint taken, the newest entry */
		for (unsigned int i = 0; i < tl->n; i++) {
			struct tl_entry *e = &tl->e[i];

			if (!e->removed && (*arg ? !strcmp(arg, e->handles) : i + 1 == tl->n)) {
				tl->current = e->no;
				snprintf(tl->stop, sizeof(tl->stop), "%s", e->stop);
			}
		}
		return;
	}
	no = strtoul(arg, &end, 10);
	if (!entry(tl, no) || entry(tl, no)->removed) {
		dbg_error(tl->s, "restart: no checkpoint %.20s in this session (see checkpoints)", arg);
		return;
	}
	restart_entry(tl, entry(tl, no), "restart");
}

void dbg_tl_back(struct dbg_timeline *tl)
{
	struct tl_entry *e = entry(tl, tl->current);

	/* The job ran on from current: back is current itself. */
	if (e && !(tl->moved && !e->removed))
		for (e = entry(tl, e->prev); e && e->removed; e = entry(tl, e->prev))
			;
	if (!e) {
		dbg_error(tl->s, "back: no earlier checkpoint in this session");
		return;
	}
	restart_entry(tl, e, "back");
}
