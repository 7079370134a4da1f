// SPDX-License-Identifier: GPL-2.0
/*
 * The console's session: the SDM tree with the GDB backend, rank states,
 * reply and output printing.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crdbg/dbgproto.h"
#include "crdbg/merge.h"
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "session.h"

#define DBG_LINE_MAX	4096	/* a longer output line is printed in pieces */
#define DBG_INIT_TIMEOUT	30000	/* servers up and connected */
/*
 * ...when a launcher starts them on the job's nodes: a Slurm step is
 * seconds on an idle cluster, but 25 s was measured in the loaded TCG
 * guest, and a busy controller is slower still. A launcher that fails
 * ends the wait at once (Documentation/sdm.md, Startup).
 */
#define DBG_REMOTE_INIT_TIMEOUT	120000
#define DBG_START_TRIES		3

/*
 * Where sdm-master and crdbg-server are: $CRDBG_SDM_BINDIR, else next to
 * the crdbg program itself: build/crdbg -> build/sdm in the build tree,
 * PREFIX/bin/crdbg -> PREFIX/libexec/crdbg once installed (or copied).
 */
static void default_bindir(char *buf, size_t size)
{
	static const char *const rel[] = { "sdm", "../libexec/crdbg" };
	const size_t nr_rel = sizeof(rel) / sizeof(rel[0]);
	char exe[PATH_MAX], probe[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	size_t i;

	if (getenv("CRDBG_SDM_BINDIR")) {
		snprintf(buf, size, "%s", getenv("CRDBG_SDM_BINDIR"));
		return;
	}
	if (n <= 0) {
		snprintf(buf, size, "build/sdm");
		return;
	}
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	for (i = 0; i < nr_rel; i++) {
		snprintf(probe, sizeof(probe), "%s/%s/crdbg-server", exe, rel[i]);
		if (access(probe, X_OK) == 0)
			break;
	}
	if (i == nr_rel)
		i = 0;	/* none there: the error names the build-tree place */
	snprintf(buf, size, "%.4000s/%s", exe, rel[i]);
}

int dbg_session_listen(struct dbg_session *s, const struct dbg_listener *ops,
		       void *priv)
{
	if (s->nlisteners == DBG_MAX_LISTENERS)
		return -ENOSPC;
	s->listener[s->nlisteners].ops = ops;
	s->listener[s->nlisteners].priv = priv;
	s->nlisteners++;
	return 0;
}

int dbg_session_start(struct dbg_session *s, uint32_t n, const char *bindir,
		      const struct dbg_placement *where, char *err, size_t errlen)
{
	struct sdm_fe_config cfg = { 0 };
	char dir[PATH_MAX];
	int rc;

	s->n = n;
	s->state = calloc(n, sizeof(*s->state));
	s->line = calloc(n, sizeof(*s->line));
	s->focus = sdm_set_new();
	s->exit_held = sdm_set_new();
	if (!s->state || !s->line || !s->focus || !s->exit_held ||
	    sdm_set_add_range(s->focus, 0, n - 1) < 0) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (bindir)
		snprintf(dir, sizeof(dir), "%s", bindir);
	else
		default_bindir(dir, sizeof(dir));
	cfg.nservers = n;
	cfg.bindir = dir;
	cfg.server = "crdbg-server";	/* the gdb backend's server */
	cfg.backend = "gdb";
	cfg.init_timeout_ms = DBG_INIT_TIMEOUT;
	snprintf(s->server_args, sizeof(s->server_args), DBGP_SERVER_ATTACH_ARG "%u",
		 dbg_attach_ms(s));
	cfg.backend_args = s->server_args;
	cfg.log_path = getenv("CRDBG_SDM_LOG");
	if (where && where->nservers) {
		cfg.nservers = where->nservers;
		cfg.ranks = where->ranks;
	}
	if (where && where->launcher) {
		cfg.launcher = where->launcher;
		cfg.hosts = where->hosts;
		cfg.secret_stdin = true;
		cfg.init_timeout_ms = DBG_REMOTE_INIT_TIMEOUT;
	}
	srand(getpid() ^ time(NULL));
	/*
	 * Servers bind from base_port upwards; a random base keeps sessions
	 * (and other SDM users) on one host apart. Once more elsewhere if a
	 * crowded range made the start fail. Servers a launcher starts on
	 * other nodes that did not come in time are not launched again:
	 * the same wait would come again, and the user waits for every one.
	 */
	for (int tries = 0; tries < DBG_START_TRIES; tries++) {
		cfg.base_port = 20000 + rand() % 30000;
		rc = sdm_fe_start(&cfg, &s->fe, err, errlen);
		if (rc == -EHOSTDOWN) {
			sdm_fe_stop(s->fe);
			s->fe = NULL;
		}
		if ((rc != -ETIMEDOUT || cfg.launcher) && rc != -EHOSTDOWN)
			break;
	}
	return rc;
}

void dbg_placement_free(struct dbg_placement *where)
{
	for (uint32_t i = 0; where->ranks && i < where->nservers; i++)
		free((char *)where->ranks[i]);
	free((void *)where->ranks);
	free((char *)where->launcher);
	free((char *)where->hosts);
	memset(where, 0, sizeof(*where));
}

int dbg_session_set_hosts(struct dbg_session *s, char *const *host)
{
	s->host = calloc(s->n, sizeof(*s->host));
	if (!s->host)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n; i++) {
		s->host[i] = strdup(host[i]);
		if (!s->host[i])
			return -ENOMEM;
	}
	return 0;
}

/* " (node a, b)": the distinct nodes of the ranks in src, or "". */
static void nodes_of(const struct dbg_session *s, const struct sdm_idset *src,
		     char *buf, size_t size)
{
	size_t len = 0;
	sdm_id id;

	buf[0] = 0;
	if (!s->host)
		return;
	sdm_set_for_each(id, src) {
		if (id >= s->n || !s->host[id])
			continue;
		/* Already named (ranks of a node are usually together). */
		if (len && strstr(buf, s->host[id]))
			continue;
		len += snprintf(buf + len, len < size ? size - len : 0, "%s%s",
				len ? ", " : " (node ", s->host[id]);
		if (len >= size - 2)
			break;
	}
	if (len && len < size - 1)
		strcat(buf, ")");
}

void dbg_session_stop(struct dbg_session *s)
{
	if (s->fe)
		dbg_release_exits(s, NULL);
	for (unsigned int i = s->nlisteners; i-- > 0;)
		if (s->listener[i].ops->stop)
			s->listener[i].ops->stop(s->listener[i].priv);
	if (s->fe)
		sdm_fe_stop(s->fe);
	s->fe = NULL;
	for (unsigned int i = s->nlisteners; i-- > 0;)
		if (s->listener[i].ops->stopped)
			s->listener[i].ops->stopped(s->listener[i].priv);
	for (uint32_t i = 0; s->line && i < s->n; i++)
		free(s->line[i].buf);
	free(s->line);
	free(s->launcher_line.buf);
	for (uint32_t i = 0; s->host && i < s->n; i++)
		free(s->host[i]);
	free(s->host);
	s->host = NULL;
	free(s->state);
	sdm_set_free(s->focus);
	sdm_set_free(s->exit_held);
}

struct sdm_idset *dbg_live(struct dbg_session *s, const struct sdm_idset *set)
{
	struct sdm_idset *live = sdm_set_copy(set);
	sdm_id id;

	if (!live)
		return NULL;
	sdm_set_for_each(id, set) {
		if (id >= s->n)
			break;
		if (s->state[id] == DBG_LOST || s->state[id] == DBG_EXITED)
			sdm_set_remove_element(live, id);
	}
	sdm_set_intersect_range(live, 0, s->n - 1);
	return live;
}

int dbg_send(struct dbg_session *s, const struct sdm_idset *set,
	     const struct dbgp_cmd *cmd, uint32_t timeout_ms,
	     struct sdm_fe_result *ret)
{
	char buf[DBGP_CMD_MAX + 1];
	int len;

	memset(ret, 0, sizeof(*ret));
	len = dbgp_encode(buf, sizeof(buf), cmd);
	if (len < 0)
		return len;
	if (sdm_set_is_empty(set))
		return 0;
	return sdm_fe_command(s->fe, set, buf, timeout_ms, ret);
}

int dbg_ranks_sort(struct dbg_session *s, const struct sdm_idset *set,
		   const struct dbgp_cmd *cmd, uint32_t timeout_ms,
		   const char *const needles[], struct sdm_idset *out[],
		   unsigned int n)
{
	struct sdm_fe_result r;
	unsigned int i, k;

	for (k = 0; k < n; k++) {
		out[k] = sdm_set_new();
		if (!out[k]) {
			while (k--) {
				sdm_set_free(out[k]);
				out[k] = NULL;
			}
			return -ENOMEM;
		}
	}
	if (sdm_set_is_empty(set) || dbg_send(s, set, cmd, timeout_ms, &r))
		return 0;
	for (i = 0; i < r.nev; i++) {
		bool error;
		const char *t = dbg_event_text(s, r.ev[i].type, r.ev[i].src,
					       (const char *)r.ev[i].payload, &error);

		/* gdb's own errors count ("No symbol ..."), a lost server's not */
		if (error && dbgp_reply_kind(t) != DBGP_REPLY_ERROR)
			continue;
		for (k = 0; k < n; k++)
			if (strstr(t, needles[k]))
				sdm_set_union(out[k], r.ev[i].src);
	}
	sdm_fe_result_free(&r);
	return 0;
}

struct sdm_idset *dbg_ranks_replying(struct dbg_session *s,
				     const struct sdm_idset *set,
				     const struct dbgp_cmd *cmd, uint32_t timeout_ms,
				     const char *needle)
{
	struct sdm_idset *yes;

	return dbg_ranks_sort(s, set, cmd, timeout_ms, &needle, &yes, 1) ? NULL : yes;
}

void dbg_release_exits(struct dbg_session *s, const struct sdm_idset *set)
{
	struct dbgp_cmd go = { .verb = DBGP_EXEC, .exec = DBGP_EXEC_CONTINUE,
			       .wait_ms = DBG_SLICE_MS };
	struct sdm_idset *go_set = s->exit_held ? sdm_set_copy(s->exit_held) : NULL;
	struct sdm_fe_result r;

	if (!go_set)
		return;
	if (set)
		sdm_set_intersect(go_set, set);
	if (!sdm_set_is_empty(go_set) &&
	    dbg_send(s, go_set, &go, DBG_SLICE_MS + DBG_CMD_TIMEOUT, &r) == 0)
		sdm_fe_result_free(&r);
	sdm_set_diff(s->exit_held, go_set);
	sdm_set_free(go_set);
}

void dbg_pass_launcher_signals(struct dbg_session *s, const struct sdm_idset *set)
{
	static const char *const handle[] = {
		"handle SIGCONT nostop noprint pass",
		"handle SIGTERM nostop noprint pass",
	};
	struct sdm_fe_result r;

	for (size_t i = 0; i < sizeof(handle) / sizeof(handle[0]); i++) {
		struct dbgp_cmd c = { .verb = DBGP_CLI, .arg = handle[i] };

		if (dbg_send(s, set, &c, DBG_CMD_TIMEOUT, &r) == 0)
			sdm_fe_result_free(&r);
	}
}

void dbg_set_state(struct dbg_session *s, const struct sdm_idset *src,
		   enum dbg_rank_state st)
{
	sdm_id id;

	sdm_set_for_each(id, src) {
		if (id >= s->n)
			break;
		if (s->state[id] != DBG_LOST)
			s->state[id] = st;
	}
}

const char *dbg_event_text(struct dbg_session *s, uint8_t type,
			   const struct sdm_idset *src, const char *payload,
			   bool *ret_error)
{
	static char buf[512];

	enum dbgp_reply_kind kind = dbgp_reply_kind(payload);

	*ret_error = type == SDM_MSG_ERROR;
	if (type != SDM_MSG_ERROR || kind == DBGP_REPLY_ERROR ||
	    kind == DBGP_REPLY_LOST)
		return payload;
	/* Made by the SDM: the server (and so its gdb) is gone. */
	char nodes[256];

	dbg_set_state(s, src, DBG_LOST);
	nodes_of(s, src, nodes, sizeof(nodes));
	snprintf(buf, sizeof(buf), DBGP_LOST "%s%s", payload, nodes);
	return buf;
}

/* Update rank states from a reply ("stopped: ...", "running", ...). */
static void note_state(struct dbg_session *s, const struct sdm_idset *src,
		    const char *text, bool error)
{
	switch (dbgp_reply_kind(text)) {
	case DBGP_REPLY_LOST:
		dbg_set_state(s, src, DBG_LOST);
		break;
	case DBGP_REPLY_STOPPED:
		if (!error)
			dbg_set_state(s, src, DBG_STOPPED);
		break;
	case DBGP_REPLY_RUNNING:
		if (!error)
			dbg_set_state(s, src, DBG_RUNNING);
		break;
	case DBGP_REPLY_EXITED:
		if (!error)
			dbg_set_state(s, src, DBG_EXITED);
		break;
	default:
		break;
	}
}

void dbg_json_str(FILE *f, const char *str)
{
	/* Valid JSON whatever bytes gdb or the program sent. */
	merge_json_string(f, str, strlen(str));
}

static void message(struct dbg_session *s, const char *type,
		    const char *fmt, va_list ap)
{
	char *buf;

	if (vasprintf(&buf, fmt, ap) < 0)
		return;
	if (s->json) {
		fprintf(s->out, "{\"type\":\"%s\",\"text\":", type);
		dbg_json_str(s->out, buf);
		fputs("}\n", s->out);
	} else {
		fprintf(s->out, "%s\n", buf);
	}
	fflush(s->out);
	free(buf);
}

void dbg_info(struct dbg_session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	message(s, "info", fmt, ap);
	va_end(ap);
}

void dbg_error(struct dbg_session *s, const char *fmt, ...)
{
	va_list ap;

	s->errors++;
	va_start(ap, fmt);
	message(s, "error", fmt, ap);
	va_end(ap);
}

static bool json_number(const char *key, size_t klen, const char *v,
			size_t vlen)
{
	static const char *const keys[] = { "bkptno", "line", "code" };
	size_t i = v[0] == '-';
	bool known = false;

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		known |= strlen(keys[k]) == klen && !memcmp(key, keys[k], klen);
	if (!known || i >= vlen || vlen > 10)
		return false;
	for (; i < vlen; i++)
		if (v[i] < '0' || v[i] > '9')
			return false;
	return true;
}

/* {"type":"stop"|"exit","ranks":...,KEY:VALUE...} from a stop's fields. */
static void json_stop(struct dbg_session *s, const char *ranks, bool exited,
		      const char *fields)
{
	struct dbgp_field f;

	fprintf(s->out, "{\"type\":\"%s\",\"ranks\":", exited ? "exit" : "stop");
	dbg_json_str(s->out, ranks);
	while (dbgp_next_field(&fields, &f)) {
		/* The backend's word to the console alone (dbg_release_exits()). */
		if (dbgp_field_is(&f, "held"))
			continue;
		fputc(',', s->out);
		merge_json_string(s->out, f.key, f.klen);
		fputc(':', s->out);
		if (json_number(f.key, f.klen, f.value, f.vlen))
			fwrite(f.value, 1, f.vlen, s->out);
		else
			merge_json_string(s->out, f.value, f.vlen);
	}
	fputs("}\n", s->out);
}

static void json_event(struct dbg_session *s, const char *cmd,
		       const struct sdm_fe_event *ev)
{
	char *ranks = sdm_set_to_string(ev->src);
	const char *text, *fields;
	bool error;

	text = dbg_event_text(s, ev->type, ev->src, (const char *)ev->payload,
			      &error);
	fields = dbgp_reply_fields(text);
	if (!error && fields) {
		json_stop(s, ranks ? ranks : "",
			  dbgp_reply_kind(text) == DBGP_REPLY_EXITED, fields);
	} else {
		fputs("{\"type\":\"reply\",\"cmd\":", s->out);
		dbg_json_str(s->out, cmd);
		fputs(",\"ranks\":", s->out);
		dbg_json_str(s->out, ranks ? ranks : "");
		fprintf(s->out, ",\"error\":%s,\"text\":",
			error ? "true" : "false");
		dbg_json_str(s->out, text);
		fputs("}\n", s->out);
	}
	free(ranks);
}

static sdm_id lowest(const struct sdm_idset *set)
{
	sdm_id id = 0;

	sdm_set_find_next(set, 0, &id);
	return id;
}

/* JSON: one object per distinct reply, ordered by lowest rank as text is. */
static void json_result(struct dbg_session *s, const char *cmd,
			const struct sdm_fe_result *r)
{
	bool *done = calloc(r->nev + 1, sizeof(*done));

	for (unsigned int k = 0; k < r->nev; k++) {
		unsigned int best = k;

		for (unsigned int i = 0; done && i < r->nev; i++) {
			if (!done[i] && (done[best] ||
			    lowest(r->ev[i].src) < lowest(r->ev[best].src)))
				best = i;
		}
		if (done)
			done[best] = true;
		json_event(s, cmd, &r->ev[best]);
	}
	free(done);
}

void dbg_print_merge(struct dbg_session *s, const char *cmd,
		     const struct merge *m, const struct sdm_fe_result *r)
{
	if (s->json)
		json_result(s, cmd, r);
	else
		merge_print(m, s->out);
	fflush(s->out);
}

/* Stops merge on their text alone: ranks may stop at different pcs. */
static void merge_human(struct merge *m, const struct sdm_idset *src,
			const char *text)
{
	char *t;

	if (!dbgp_reply_fields(text)) {
		merge_add_set(m, src, text);
		return;
	}
	t = strndup(text, dbgp_reply_text_len(text));
	if (t)
		merge_add_set(m, src, t);
	free(t);
}

void dbg_print_result(struct dbg_session *s, const char *cmd,
		      const struct sdm_fe_result *r)
{
	struct merge *m = merge_new();
	bool failed = false;

	for (unsigned int i = 0; i < r->nev; i++) {
		const struct sdm_fe_event *ev = &r->ev[i];
		const char *text;
		bool error;

		text = dbg_event_text(s, ev->type, ev->src,
				      (const char *)ev->payload, &error);
		note_state(s, ev->src, text, error);
		failed |= error;
		/* A command that prints nothing (set var) shows nothing. */
		if (m && !s->json && (error || *text))
			merge_human(m, ev->src, text);
	}
	if (failed)
		s->errors++;
	if (m)
		dbg_print_merge(s, cmd, m, r);
	merge_free(m);
}

static void emit_line(struct dbg_session *s, sdm_id id, int stream,
		      const char *text, size_t len)
{
	if (s->json) {
		char *t = strndup(text, len);

		if (!t)
			return;
		if (id == DBG_MPIRUN) {
			fputs("{\"type\":\"output\",\"rank\":", s->out);
			dbg_json_str(s->out, s->launcher_name[0] ?
				     s->launcher_name : "mpirun");
			fputc(',', s->out);
		} else {
			fprintf(s->out, "{\"type\":\"output\",\"rank\":%u,", id);
		}
		fprintf(s->out, "\"stream\":\"%s\",\"text\":", stream == 2 ? "stderr" : "stdout");
		dbg_json_str(s->out, t);
		fputs("}\n", s->out);
		free(t);
	} else if (id == DBG_MPIRUN) {
		fprintf(s->out, "[%s] %.*s\n",
			s->launcher_name[0] ? s->launcher_name : "mpirun",
			(int)len, text);
	} else {
		fprintf(s->out, "[%u] %.*s\n", id, (int)len, text);
	}
}

/*
 * gdb says this on the program's terminal when it is a FIFO (a
 * checkpointable session): not the program's output.
 */
static bool gdb_tty_warning(const char *line, size_t len)
{
	static const char w[] = "&\"warning: GDB: Failed to set controlling terminal";

	return len >= sizeof(w) - 1 && !memcmp(line, w, sizeof(w) - 1);
}

/* Every listener hears the line; whether one of them took it as its own. */
static bool tell_line(struct dbg_session *s, sdm_id id, const char *line,
		      size_t len)
{
	bool taken = false;

	for (unsigned int i = 0; i < s->nlisteners; i++)
		if (s->listener[i].ops->line)
			taken |= s->listener[i].ops->line(s->listener[i].priv, id, line, len);
	return taken;
}

static void take_output(struct dbg_session *s, sdm_id id, int stream,
			const char *buf, size_t len)
{
	struct dbg_linebuf *lb;

	if (id >= s->n && id != DBG_MPIRUN)
		return;
	lb = id == DBG_MPIRUN ? &s->launcher_line : &s->line[id];
	if (!lb->buf) {
		lb->buf = malloc(DBG_LINE_MAX);
		if (!lb->buf)
			return;
	}
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\r')
			continue;
		if (buf[i] == '\n' || lb->len == DBG_LINE_MAX) {
			if (!tell_line(s, id, lb->buf, lb->len) &&
			    !gdb_tty_warning(lb->buf, lb->len))
				emit_line(s, id, stream, lb->buf, lb->len);
			lb->len = 0;
			if (buf[i] == '\n')
				continue;
		}
		lb->buf[lb->len++] = buf[i];
	}
}

void dbg_pump_output(struct dbg_session *s, int ms)
{
	char buf[8192];
	sdm_id id;
	int stream;
	ssize_t n;

	for (unsigned int i = 0; i < s->nlisteners; i++)
		if (s->listener[i].ops->pump)
			s->listener[i].ops->pump(s->listener[i].priv);
	if (!s->fe)
		return;
	while ((n = sdm_fe_read_output(s->fe, ms, &id, &stream, buf,
				       sizeof(buf))) > 0) {
		take_output(s, id, stream, buf, n);
		ms = 0;
	}
	fflush(s->out);
}

void dbg_rank_output(struct dbg_session *s, uint32_t id, const char *buf, size_t len)
{
	take_output(s, id, 1, buf, len);
}

void dbg_flush_lines(struct dbg_session *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		if (s->line[i].len) {
			emit_line(s, i, 1, s->line[i].buf, s->line[i].len);
			s->line[i].len = 0;
		}
	}
	if (s->launcher_line.len) {
		emit_line(s, DBG_MPIRUN, 1, s->launcher_line.buf, s->launcher_line.len);
		s->launcher_line.len = 0;
	}
	fflush(s->out);
}

int dbg_result_add(struct sdm_fe_result *acc, uint8_t type,
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
