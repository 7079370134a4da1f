// SPDX-License-Identifier: GPL-2.0
/*
 * The SDM front end library (sdm/frontend.h): launch, startup protocol,
 * commands and event collection. Every wait is a bounded wait on the
 * engine (epoll), never a sleep loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>


#include "sdm/auth.h"
#include "sdm/frontend.h"
#include "sdm/message.h"
#include "sdm/iof.h"
#include "sdm/route.h"
#include "node.h"
#include "startup.h"
#include "transport.h"

#define FE_GRACE_MS	1000
#define FE_STOP_MS	3000
#define FE_LAUNCH_POLL_MS 250	/* a look at the launchers while servers start */

struct fe_req {
	struct fe_req *next;
	uint32_t id;
	struct sdm_idset *dest, *got;
	struct sdm_fe_result res;
	uint64_t deadline;
	bool done;
};

struct fe_out {
	struct fe_out *next;
	sdm_id id;
	int stream;
	size_t len;
	uint8_t data[];
};

struct sdm_fe {
	struct sdm_fe_config cfg;
	uint32_t n;			/* servers */
	struct sdm_idset **sranks;	/* each server's ranks */
	struct sdm_idset *all;		/* every rank */
	struct sdm_transport *t;
	struct sdm_auth_secret secret;
	char dir[64], secret_path[96], bad_path[96];
	char launch_log[96];		/* remote launchers' stderr */
	int port;			/* where the master connects */
	int base_port;
	pid_t master_pid;
	pid_t *pids;			/* local servers, or launchers */
	int *launch_in;			/* launchers' stdin, held open */
	unsigned int npids;
	pid_t *server_pid;		/* by id, local mode */
	int ready_fd;
	char line[256];
	size_t linelen;
	struct sdm_table table;
	bool *ready;
	uint32_t nready;
	int master_peer;
	int *star_peer;
	uint32_t nstar_up, nstar_failed;
	uint32_t next_req;
	struct fe_req *reqs;
	struct fe_out *out_head, **out_tail;
	uint64_t frames0, bytes0;
	struct sdm_fe_result init_res;
	char *err;
	size_t errlen;
};

static void fe_err(struct sdm_fe *fe, const char *fmt, ...)
{
	va_list ap;

	if (!fe->err || !fe->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(fe->err, fe->errlen, fmt, ap);
	va_end(ap);
}

static struct fe_req *req_find(struct sdm_fe *fe, uint32_t id)
{
	for (struct fe_req *r = fe->reqs; r; r = r->next)
		if (r->id == id)
			return r;
	return NULL;
}

static void req_add_event(struct fe_req *r, uint8_t type,
			  const struct sdm_idset *src, const void *payload,
			  size_t len)
{
	struct sdm_fe_event *ev, *v;

	v = realloc(r->res.ev, (r->res.nev + 1) * sizeof(*v));
	if (!v)
		return;
	r->res.ev = v;
	ev = &v[r->res.nev];
	ev->type = type;
	ev->src = sdm_set_copy(src);
	ev->payload = malloc(len + 1);
	if (!ev->src || !ev->payload) {
		sdm_set_free(ev->src);
		free(ev->payload);
		return;
	}
	if (len)
		memcpy(ev->payload, payload, len);
	ev->payload[len] = 0;	/* convenient for text payloads */
	ev->len = len;
	r->res.nev++;
	sdm_set_union(r->got, src);
	if (sdm_set_is_subset(r->dest, r->got)) {
		r->done = true;
		r->res.complete = true;
	}
}

/* Answer every still-missing id of r (in ids) with an error event. */
static void req_fail(struct fe_req *r, const struct sdm_idset *ids,
		     const char *why)
{
	struct sdm_idset *miss;

	if (r->done)
		return;
	miss = sdm_set_copy(r->dest);
	if (!miss)
		return;
	sdm_set_diff(miss, r->got);
	if (ids)
		sdm_set_intersect(miss, ids);
	if (!sdm_set_is_empty(miss))
		req_add_event(r, SDM_MSG_ERROR, miss, why, strlen(why));
	sdm_set_free(miss);
}

static void fail_all(struct sdm_fe *fe, const struct sdm_idset *ids,
		     const char *why)
{
	for (struct fe_req *r = fe->reqs; r; r = r->next)
		req_fail(r, ids, why);
}

static void on_frame(void *arg, int peer, const void *buf, size_t len)
{
	struct sdm_fe *fe = arg;
	struct sdm_message *m;
	struct fe_req *r;
	sdm_id id;

	(void)peer;
	if (sdm_message_decode(buf, len, &m) < 0) {
		fprintf(stderr, "sdm-frontend: dropping a malformed frame\n");
		return;
	}
	switch (m->type) {
	case SDM_MSG_REPLY:
	case SDM_MSG_ERROR:
		r = req_find(fe, m->agg.id);
		if (r && !r->done)
			req_add_event(r, m->type, m->src, m->payload, m->len);
		break;
	case SDM_MSG_IOF:
		if (m->len >= 1 && sdm_set_find_next(m->src, 0, &id)) {
			struct fe_out *o = malloc(sizeof(*o) + m->len);

			if (!o)
				break;
			o->next = NULL;
			o->id = id;
			o->stream = m->payload[0];
			o->len = m->len - 1;
			memcpy(o->data, m->payload + 1, o->len);
			*fe->out_tail = o;
			fe->out_tail = &o->next;
		}
		break;
	default:
		break;
	}
	sdm_message_free(m);
}

static int star_index(struct sdm_fe *fe, int peer)
{
	if (!fe->star_peer)
		return -1;
	for (uint32_t i = 0; i < fe->n; i++)
		if (fe->star_peer[i] == peer)
			return i;
	return -1;
}

static void on_connected(void *arg, int peer, int peer_id, bool incoming)
{
	struct sdm_fe *fe = arg;

	if (incoming) {
		if (peer_id == SDM_TRANSPORT_ID_MASTER && fe->master_peer < 0)
			fe->master_peer = peer;
		else
			sdm_transport_close_peer(fe->t, peer);
	} else if (star_index(fe, peer) >= 0) {
		fe->nstar_up++;
	}
}

static void on_closed(void *arg, int peer, int err)
{
	struct sdm_fe *fe = arg;
	const char *reason = sdm_transport_close_reason(fe->t, peer);
	char why[224];
	int i;

	(void)err;
	if (peer == fe->master_peer) {
		fe->master_peer = -2;	/* lost: never reused */
		if (reason) {
			snprintf(why, sizeof(why), "front end: link to the master: %s",
				 reason);
			fprintf(stderr, "sdm-frontend: %s\n", why + strlen("front end: "));
		}
		fail_all(fe, NULL, reason ? why : "front end: master connection lost");
		return;
	}
	i = star_index(fe, peer);
	if (i < 0)
		return;
	fe->star_peer[i] = -1;
	fe->nstar_failed++;
	fail_all(fe, fe->sranks[i], "front end: server connection lost");
}

static void on_ready_line(struct sdm_fe *fe, const char *line)
{
	char host[SDM_STARTUP_HOST_MAX];
	unsigned int id;
	int port;

	if (sscanf(line, SDM_STARTUP_READY_SCAN, &id, host, &port) != 3)
		return;	/* other output of a launcher */
	if (id >= fe->n || fe->ready[id])
		return;
	snprintf(fe->table.e[id].host, sizeof(fe->table.e[id].host), "%s",
		 host);
	fe->table.e[id].port = port;
	fe->ready[id] = true;
	fe->nready++;
}

static void ready_cb(void *arg, int fd, uint32_t events)
{
	struct sdm_fe *fe = arg;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	(void)events;
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			sdm_transport_unwatch_fd(fe->t, fd);
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			fe->line[fe->linelen] = 0;
			on_ready_line(fe, fe->line);
			fe->linelen = 0;
		} else if (fe->linelen < sizeof(fe->line) - 1) {
			fe->line[fe->linelen++] = buf[i];
		}
	}
}

/* Run the engine until done() or the deadline; true if done. */
static bool wait_until(struct sdm_fe *fe, bool (*done)(struct sdm_fe *, void *),
		       void *arg, uint64_t deadline)
{
	while (!done(fe, arg)) {
		uint64_t now = sdm_now_ms();

		if (now >= deadline)
			return false;
		if (sdm_transport_progress(fe->t, (int)(deadline - now)) < 0)
			return false;
	}
	return true;
}

/* prog in bindir, or prog itself when it is a path. */
static char *path_of(struct sdm_fe *fe, const char *prog, char *buf,
		     size_t size)
{
	if (strchr(prog, '/'))
		snprintf(buf, size, "%s", prog);
	else
		snprintf(buf, size, "%s/%s",
			 fe->cfg.bindir ? fe->cfg.bindir : "build/sdm", prog);
	return buf;
}

static const char *server_prog(struct sdm_fe *fe)
{
	return fe->cfg.server ? fe->cfg.server : "sdm-server";
}

static void child_setup(struct sdm_fe *fe, int out_fd)
{
	const char *log = fe->cfg.log_path;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_DFL);
	if (out_fd >= 0)
		dup2(out_fd, STDOUT_FILENO);
	/*
	 * A launcher (srun) reports each step it ends and each task that
	 * dies: kept in the session's directory, and quoted when a server
	 * does not come up.
	 */
	if (!log && fe->cfg.launcher && fe->launch_log[0])
		log = fe->launch_log;
	if (log) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
	}
	/* The ready pipe stays only on stdout. */
	if (out_fd > STDERR_FILENO)
		close(out_fd);
}

/*
 * execv, but a binary being relinked right now (by a concurrent make) is
 * briefly busy, absent or not yet executable: try again for about a second.
 */
static void exec_retry(const char *path, char *const argv[])
{
	for (int i = 0; i < 20; i++) {
		execv(path, argv);
		if (errno != ETXTBSY && errno != EACCES && errno != ENOENT &&
		    errno != ENOEXEC)
			return;
		usleep(50000);
	}
}

static pid_t spawn_master(struct sdm_fe *fe)
{
	char path[PATH_MAX], addr[32];
	pid_t pid;

	path_of(fe, "sdm-master", path, sizeof(path));
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", fe->port);
	pid = fork();
	if (pid == 0) {
		child_setup(fe, -1);
		char *argv[] = { "sdm-master", addr, NULL };

		setenv(SDM_AUTH_ENV_FILE, fe->secret_path, 1);
		exec_retry(path, argv);
		fprintf(stderr, "sdm-frontend: cannot run %s: %s\n", path,
			strerror(errno));
		_exit(127);
	}
	return pid;
}

static const char *secret_for(struct sdm_fe *fe, sdm_id id)
{
	if (fe->cfg.bad_secret && fe->cfg.bad_secret_id == id)
		return fe->bad_path;
	return fe->secret_path;
}

static pid_t spawn_server(struct sdm_fe *fe, sdm_id id, int out_fd)
{
	char path[PATH_MAX], port[16], ids[16];
	pid_t pid;

	path_of(fe, server_prog(fe), path, sizeof(path));
	snprintf(port, sizeof(port), "%d", fe->base_port + (int)id);
	snprintf(ids, sizeof(ids), "%u", id);
	pid = fork();
	if (pid == 0) {
		child_setup(fe, out_fd);
		setenv(SDM_AUTH_ENV_FILE, secret_for(fe, id), 1);
		setenv("SDM_ID", ids, 1);
		char *argv[] = {
			"sdm-server", "--advertise", "127.0.0.1", "--backend",
			(char *)(fe->cfg.backend ? fe->cfg.backend : "echo"),
			"--backend-args",
			(char *)(fe->cfg.backend_args ? fe->cfg.backend_args : ""),
			port, NULL,
		};

		exec_retry(path, argv);
		fprintf(stderr, "sdm-frontend: cannot run %s: %s\n", path,
			strerror(errno));
		_exit(127);
	}
	return pid;
}

/* Replace every {key} in tmpl; returns a malloc'd string. */
static char *expand(const char *tmpl, const char *const *keys,
		    const char *const *vals)
{
	size_t cap = strlen(tmpl) + 1, len = 0;
	char *out;

	for (int k = 0; keys[k]; k++)
		cap += 4 * strlen(vals[k]) + 16;	/* a few uses each */
	out = malloc(cap);
	if (!out)
		return NULL;
	for (const char *p = tmpl; *p;) {
		int k;

		for (k = 0; keys[k]; k++)
			if (!strncmp(p, keys[k], strlen(keys[k])))
				break;
		if (keys[k] && len + strlen(vals[k]) < cap) {
			len += snprintf(out + len, cap - len, "%s", vals[k]);
			p += strlen(keys[k]);
		} else if (len + 1 < cap) {
			out[len++] = *p++;
		} else {
			break;
		}
	}
	out[len] = 0;
	return out;
}

/* sh -c cmd; with in_fd >= 0 that is its stdin. */
static pid_t spawn_shell(struct sdm_fe *fe, const char *cmd, int out_fd, int in_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		child_setup(fe, out_fd);
		/*
		 * A group of its own: sh may fork the launcher rather than
		 * exec it, and stopping it must reach the launcher itself.
		 */
		setpgid(0, 0);
		if (in_fd >= 0 && in_fd != STDIN_FILENO) {
			dup2(in_fd, STDIN_FILENO);
			close(in_fd);
		}
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/*
 * A pipe holding the secret line, for a launcher's stdin: small enough to
 * sit in the pipe whole, so nothing waits for the launcher to read it.
 * Its write end stays open in *ret_keep for the session: the server
 * quits when it sees its stdin end (the front end gone, or done).
 */
static int secret_pipe(struct sdm_fe *fe, int *ret_keep)
{
	char line[2 * SDM_AUTH_SECRET_LEN + 2];
	int p[2], rc = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	sdm_auth_secret_to_hex(&fe->secret, line);
	strcat(line, "\n");
	if (write(p[1], line, strlen(line)) != (ssize_t)strlen(line))
		rc = -EIO;
	explicit_bzero(line, sizeof(line));
	if (rc) {
		close(p[0]);
		close(p[1]);
		return rc;
	}
	*ret_keep = p[1];
	return p[0];
}

static const char *nth_host(const char *hosts, uint32_t i, char *buf,
			    size_t size)
{
	uint32_t count = 1, k = 0;
	const char *p;

	if (!hosts || !*hosts)
		return "localhost";
	for (p = hosts; *p; p++)
		count += *p == ',';
	i %= count;
	for (p = hosts; k < i; p++)
		k += *p == ',';
	snprintf(buf, size, "%.*s", (int)strcspn(p, ","), p);
	return buf;
}

/* Run the launcher template with its placeholders filled in; keep its pid. */
static int spawn_template(struct sdm_fe *fe, const char *tmpl, const char *const *keys,
			  const char *const *vals, int out_fd)
{
	char *line = expand(tmpl, keys, vals);
	int in_fd = -1;
	pid_t pid;

	if (!line)
		return -ENOMEM;
	if (fe->cfg.secret_stdin) {
		in_fd = secret_pipe(fe, &fe->launch_in[fe->npids]);
		if (in_fd < 0) {
			free(line);
			return in_fd;
		}
	}
	pid = spawn_shell(fe, line, out_fd, in_fd);
	free(line);
	if (in_fd >= 0)
		close(in_fd);
	if (pid < 0)
		return -errno;
	fe->pids[fe->npids++] = pid;
	return 0;
}

static int launch_servers(struct sdm_fe *fe, int out_fd)
{
	char path[PATH_MAX], cmd[PATH_MAX + 512], nbuf[16], idbuf[16];
	char hbuf[SDM_STARTUP_HOST_MAX], bargs[512] = "", secret[160];
	const char *tmpl = fe->cfg.launcher;
	int rc;

	path_of(fe, server_prog(fe), path, sizeof(path));
	if (fe->cfg.backend_args) {
		if (strchr(fe->cfg.backend_args, '\''))
			return -EINVAL;	/* it goes inside '...' below */
		snprintf(bargs, sizeof(bargs), " --backend-args '%.480s'",
			 fe->cfg.backend_args);
	}
	if (!tmpl) {
		for (uint32_t i = 0; i < fe->n; i++) {
			pid_t pid = spawn_server(fe, i, out_fd);

			if (pid < 0)
				return -errno;
			fe->server_pid[i] = pid;
			fe->pids[fe->npids++] = pid;
		}
		return 0;
	}
	snprintf(nbuf, sizeof(nbuf), "%u", fe->n);
	if (strstr(tmpl, "{id}") || strstr(tmpl, "{host}")) {
		for (uint32_t i = 0; i < fe->n; i++) {
			const char *keys[] = { "{cmd}", "{id}", "{host}", "{n}",
					       NULL };
			const char *vals[4];

			snprintf(idbuf, sizeof(idbuf), "%u", i);
			if (fe->cfg.secret_stdin)
				snprintf(secret, sizeof(secret), "%s=1",
					 SDM_AUTH_ENV_STDIN);
			else
				snprintf(secret, sizeof(secret), "%s=%s",
					 SDM_AUTH_ENV_FILE, secret_for(fe, i));
			snprintf(cmd, sizeof(cmd),
				 "env %s SDM_ID=%u %s --backend %s%s %d",
				 secret, i, path,
				 fe->cfg.backend ? fe->cfg.backend : "echo",
				 bargs, fe->base_port);
			vals[0] = cmd;
			vals[1] = idbuf;
			vals[2] = nth_host(fe->cfg.hosts, i, hbuf, sizeof(hbuf));
			vals[3] = nbuf;
			rc = spawn_template(fe, tmpl, keys, vals, out_fd);
			if (rc)
				return rc;
		}
	} else {
		const char *keys[] = { "{cmd}", "{n}", NULL };

		if (fe->cfg.secret_stdin)
			return -EINVAL;	/* whose stdin would it reach? */
		const char *vals[2];

		snprintf(cmd, sizeof(cmd), "env %s=%s %s --backend %s%s %d",
			 SDM_AUTH_ENV_FILE, fe->secret_path, path,
			 fe->cfg.backend ? fe->cfg.backend : "echo", bargs,
			 fe->base_port);
		vals[0] = cmd;
		vals[1] = nbuf;
		return spawn_template(fe, tmpl, keys, vals, out_fd);
	}
	return 0;
}

/* The last line a remote launcher wrote, as "; launcher: LINE". */
static void last_launch_error(struct sdm_fe *fe, char *why, size_t size)
{
	char line[256], last[256] = "";
	FILE *f;

	if (!fe->cfg.launcher || !fe->launch_log[0])
		return;
	f = fopen(fe->launch_log, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (line[strspn(line, " \t\n")])
			snprintf(last, sizeof(last), "%s", line);
	fclose(f);
	last[strcspn(last, "\n")] = 0;
	if (last[0])
		snprintf(why, size, "; launcher: %.200s", last);
}

/* " on a, b": the distinct hosts servers miss were started on, or "". */
static void missing_hosts(struct sdm_fe *fe, const struct sdm_idset *miss,
			  char *buf, size_t size)
{
	char host[SDM_STARTUP_HOST_MAX];
	size_t len = 0;
	sdm_id id;

	buf[0] = 0;
	if (!fe->cfg.launcher || !fe->cfg.hosts || !*fe->cfg.hosts || !miss)
		return;
	sdm_set_for_each(id, miss) {
		nth_host(fe->cfg.hosts, id, host, sizeof(host));
		/* Ranks of one node usually come together: name it once. */
		if (len && strstr(buf, host))
			continue;
		if (len + strlen(host) + 8 >= size)
			break;
		len += snprintf(buf + len, size - len, "%s%s",
				len ? ", " : " on ", host);
	}
}

/* Name the servers that never announced themselves, and why if known. */
static void report_missing(struct sdm_fe *fe)
{
	struct sdm_idset *miss = sdm_set_new(), *ranks = sdm_set_new();
	char *names = NULL, why[240] = "", where[200];

	for (uint32_t i = 0; miss && ranks && i < fe->n; i++) {
		int status;

		if (fe->ready[i])
			continue;
		sdm_set_add_element(miss, i);
		sdm_set_union(ranks, fe->sranks[i]);
		if (!why[0] && fe->server_pid[i] > 0 &&
		    waitpid(fe->server_pid[i], &status, WNOHANG) ==
		    fe->server_pid[i]) {
			fe->server_pid[i] = 0;
			snprintf(why, sizeof(why), "; server %u %s %d", i,
				 WIFEXITED(status) ? "exited with status" :
				 "was killed by signal",
				 WIFEXITED(status) ? WEXITSTATUS(status) :
				 WTERMSIG(status));
		}
	}
	if (!why[0])
		last_launch_error(fe, why, sizeof(why));
	/* The ranks they would have driven: what the user knows. */
	names = ranks ? sdm_set_to_string(ranks) : NULL;
	missing_hosts(fe, miss, where, sizeof(where));
	fe_err(fe, "only %u of %u servers announced themselves (missing: %s%s%s)",
	       fe->nready, fe->n, names ? names : "?", where, why);
	free(names);
	sdm_set_free(miss);
	sdm_set_free(ranks);
}

static bool all_ready(struct sdm_fe *fe, void *arg)
{
	(void)arg;
	return fe->nready == fe->n &&
	       (fe->cfg.star || fe->master_peer >= 0 || fe->master_peer == -2);
}

/* pid exited with a failure (not reaped: report_missing() and the stop do that). */
static bool failed(pid_t pid)
{
	siginfo_t si = { 0 };

	if (pid <= 0 || waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
	    si.si_pid != pid)
		return false;
	return si.si_code != CLD_EXITED || si.si_status != 0;
}

/*
 * Server i, not announced yet, never will: its launcher (one per server,
 * or the one for all) or, forked here, the server itself failed. A
 * launcher that exits with success may have left its server running.
 */
static bool doomed(struct sdm_fe *fe, uint32_t i)
{
	if (fe->ready[i])
		return false;
	if (fe->npids == fe->n)
		return failed(fe->pids[i]);
	for (unsigned int k = 0; fe->pids && k < fe->npids; k++)
		if (failed(fe->pids[k]))
			return true;
	return false;
}

/* Every server announced itself or never will: nothing more to wait for. */
static bool servers_settled(struct sdm_fe *fe)
{
	for (uint32_t i = 0; i < fe->n; i++)
		if (!fe->ready[i] && !doomed(fe, i))
			return false;
	return true;
}

/*
 * Wait for every server, but not the whole timeout for one that cannot
 * come (Documentation/sdm.md, Startup): the others still can, and only
 * the missing are named. False if any is missing.
 */
static bool wait_servers(struct sdm_fe *fe, uint64_t deadline)
{
	while (!all_ready(fe, NULL)) {
		uint64_t now = sdm_now_ms();
		uint64_t slice = deadline - now;

		if (now >= deadline || (fe->nready < fe->n && servers_settled(fe)))
			return false;
		if (slice > FE_LAUNCH_POLL_MS)
			slice = FE_LAUNCH_POLL_MS;
		if (sdm_transport_progress(fe->t, (int)slice) < 0)
			return false;
	}
	return true;
}

static bool req_done(struct sdm_fe *fe, void *arg)
{
	(void)fe;
	return ((struct fe_req *)arg)->done;
}

static struct fe_req *req_new(struct sdm_fe *fe, const struct sdm_idset *dest,
			      uint32_t timeout_ms)
{
	struct fe_req *r = calloc(1, sizeof(*r));
	uint32_t grace = timeout_ms / 4 > FE_GRACE_MS ? timeout_ms / 4 :
			 FE_GRACE_MS;

	if (!r)
		return NULL;
	r->dest = sdm_set_copy(dest);
	r->got = sdm_set_new();
	if (!r->dest || !r->got) {
		sdm_set_free(r->dest);
		sdm_set_free(r->got);
		free(r);
		return NULL;
	}
	r->id = ++fe->next_req;
	r->deadline = sdm_now_ms() + timeout_ms + grace;
	r->next = fe->reqs;
	fe->reqs = r;
	if (sdm_set_is_empty(dest))
		r->done = r->res.complete = true;
	return r;
}

/* Send m to the master, or in star mode to every server in its dest. */
static int send_down(struct sdm_fe *fe, const struct sdm_message *m)
{
	void *buf;
	size_t len;
	int rc;

	rc = sdm_message_encode_alloc(m, &buf, &len);
	if (rc < 0)
		return rc;
	if (!fe->cfg.star) {
		rc = fe->master_peer >= 0 ?
		     sdm_transport_send(fe->t, fe->master_peer, buf, len) :
		     -ENOTCONN;
	} else {
		rc = 0;
		for (uint32_t i = 0; i < fe->n; i++) {
			if (!sdm_set_intersects(m->dest, fe->sranks[i]))
				continue;
			if (fe->star_peer[i] < 0 ||
			    sdm_transport_send(fe->t, fe->star_peer[i], buf,
					       len) < 0)
				fail_all(fe, fe->sranks[i],
					 "front end: server not connected");
		}
	}
	free(buf);
	return rc;
}

/* Every id of dest is a rank of this session. */
static bool valid_dest(struct sdm_fe *fe, const struct sdm_idset *dest)
{
	return sdm_set_is_subset(dest, fe->all);
}

static int submit(struct sdm_fe *fe, unsigned int type,
		  const struct sdm_idset *dest, const void *payload,
		  size_t len, uint32_t timeout_ms, struct fe_req **ret)
{
	struct sdm_message *m;
	struct fe_req *r;
	int rc;

	if (!valid_dest(fe, dest))
		return -EINVAL;
	m = sdm_message_new(type, payload, len);
	if (!m)
		return -ENOMEM;
	r = req_new(fe, dest, timeout_ms);
	if (!r) {
		sdm_message_free(m);
		return -ENOMEM;
	}
	m->agg.id = r->id;
	m->agg.timeout_ms = timeout_ms;
	rc = sdm_set_assign(m->dest, dest);
	if (rc == 0)
		rc = send_down(fe, m);
	sdm_message_free(m);
	if (rc < 0)
		req_fail(r, NULL, "front end: cannot send");
	*ret = r;
	return 0;
}

static void req_unlink(struct sdm_fe *fe, struct fe_req *r)
{
	for (struct fe_req **pp = &fe->reqs; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	}
	sdm_set_free(r->dest);
	sdm_set_free(r->got);
	free(r);
}

static int collect(struct sdm_fe *fe, struct fe_req *r,
		   struct sdm_fe_result *ret)
{
	if (!wait_until(fe, req_done, r, r->deadline))
		req_fail(r, NULL, "front end: no answer within the timeout");
	r->done = true;
	*ret = r->res;
	req_unlink(fe, r);
	return 0;
}

void sdm_fe_result_free(struct sdm_fe_result *r)
{
	if (!r)
		return;
	for (unsigned int i = 0; i < r->nev; i++) {
		sdm_set_free(r->ev[i].src);
		free(r->ev[i].payload);
	}
	free(r->ev);
	r->ev = NULL;
	r->nev = 0;
}

static int make_secrets(struct sdm_fe *fe)
{
	struct sdm_auth_secret bad;
	int rc;

	snprintf(fe->dir, sizeof(fe->dir), "/tmp/sdm-fe-XXXXXX");
	if (!mkdtemp(fe->dir))
		return -errno;
	snprintf(fe->secret_path, sizeof(fe->secret_path), "%s/secret",
		 fe->dir);
	snprintf(fe->bad_path, sizeof(fe->bad_path), "%s/bad-secret",
		 fe->dir);
	snprintf(fe->launch_log, sizeof(fe->launch_log), "%s/launch.log",
		 fe->dir);
	rc = sdm_auth_secret_generate(&fe->secret);
	if (rc == 0)
		rc = sdm_auth_secret_save(&fe->secret, fe->secret_path);
	if (rc == 0 && fe->cfg.bad_secret) {
		rc = sdm_auth_secret_generate(&bad);
		if (rc == 0)
			rc = sdm_auth_secret_save(&bad, fe->bad_path);
	}
	return rc;
}

static bool star_all_up(struct sdm_fe *fe, void *arg)
{
	(void)arg;
	return fe->nstar_up + fe->nstar_failed >= fe->n;
}

static int init_tree(struct sdm_fe *fe)
{
	struct fe_req *r = NULL;
	char *payload;
	size_t len;
	int rc;

	fe->table.star = fe->cfg.star;
	rc = sdm_table_encode(&fe->table, &payload, &len);
	if (rc < 0)
		return rc;
	if (fe->cfg.star) {
		/* Star: connect to every server ourselves. */
		for (uint32_t i = 0; i < fe->n; i++)
			fe->star_peer[i] = sdm_transport_connect(
				fe->t, fe->table.e[i].host,
				fe->table.e[i].port, i);
		/* Wait for the connections before sending INIT. */
		wait_until(fe, star_all_up, NULL,
			   sdm_now_ms() + fe->cfg.init_timeout_ms);
	}
	rc = submit(fe, SDM_MSG_INIT, fe->all, payload, len,
		    fe->cfg.init_timeout_ms, &r);
	free(payload);
	if (rc == 0)
		rc = collect(fe, r, &fe->init_res);
	return rc;
}

static bool init_ok(struct sdm_fe *fe)
{
	const struct sdm_fe_result *r = &fe->init_res;

	if (!r->complete || !r->nev)
		return false;
	for (unsigned int i = 0; i < r->nev; i++)
		if (r->ev[i].type != SDM_MSG_REPLY)
			return false;
	return true;
}

/* Each server's ranks, from the configuration or its own id. */
static int map_ranks(struct sdm_fe *fe)
{
	struct sdm_rank_route check;
	int rc;

	fe->sranks = calloc(fe->n, sizeof(*fe->sranks));
	fe->all = sdm_set_new();
	if (!fe->sranks || !fe->all)
		return -ENOMEM;
	if (fe->cfg.ranks && fe->cfg.star)
		return -EINVAL;
	for (uint32_t i = 0; i < fe->n; i++) {
		fe->sranks[i] = sdm_set_new();
		if (!fe->sranks[i])
			return -ENOMEM;
		if (!fe->cfg.ranks)
			rc = sdm_set_add_element(fe->sranks[i], i);
		else if (!fe->cfg.ranks[i])
			rc = -EINVAL;
		else
			rc = sdm_set_parse(fe->sranks[i], fe->cfg.ranks[i], NULL);
		if (rc == 0 && fe->cfg.ranks)
			rc = sdm_table_set_ranks(&fe->table, i, fe->sranks[i]);
		if (rc == 0)
			rc = sdm_set_union(fe->all, fe->sranks[i]);
		if (rc < 0)
			return rc == -ENOMEM ? rc : -EINVAL;
	}
	/* Non-empty and disjoint, as every node will check. */
	rc = sdm_rank_route_init(&check, SDM_MASTER, fe->n,
				 (const struct sdm_idset *const *)fe->table.ranks);
	sdm_rank_route_free(&check);
	return rc;
}

int sdm_fe_start(const struct sdm_fe_config *cfg, struct sdm_fe **ret,
		 char *err, size_t errlen)
{
	struct sdm_transport_config tc = { 0 };
	struct sdm_fe *fe;
	int pfd[2] = { -1, -1 };
	int rc;

	if (!cfg->nservers || cfg->nservers > SDM_SET_MAX_ID)
		return -EINVAL;
	fe = calloc(1, sizeof(*fe));
	if (!fe)
		return -ENOMEM;
	fe->cfg = *cfg;
	if (!fe->cfg.init_timeout_ms)
		fe->cfg.init_timeout_ms = 30000;
	fe->err = err;
	fe->errlen = errlen;
	fe->n = cfg->nservers;
	fe->master_peer = -1;
	fe->ready_fd = -1;
	fe->out_tail = &fe->out_head;
	fe->base_port = cfg->base_port ? cfg->base_port :
			10000 + (getpid() % 20) * 1100;
	fe->pids = calloc(fe->n + 1, sizeof(*fe->pids));
	fe->launch_in = malloc((fe->n + 1) * sizeof(*fe->launch_in));
	for (uint32_t i = 0; fe->launch_in && i <= fe->n; i++)
		fe->launch_in[i] = -1;
	fe->server_pid = calloc(fe->n, sizeof(*fe->server_pid));
	fe->ready = calloc(fe->n, sizeof(*fe->ready));
	fe->star_peer = calloc(fe->n, sizeof(*fe->star_peer));
	rc = sdm_table_alloc(&fe->table, fe->n);
	if (rc < 0 || !fe->pids || !fe->launch_in || !fe->server_pid || !fe->ready ||
	    !fe->star_peer) {
		rc = -ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < fe->n; i++)
		fe->star_peer[i] = -1;
	rc = map_ranks(fe);
	if (rc < 0) {
		fe_err(fe, "bad rank sets: %s", rc == -ENOMEM ? "out of memory" :
		       "each server needs a set of its own (\"0-3,7\")");
		goto fail;
	}
	rc = make_secrets(fe);
	if (rc < 0) {
		fe_err(fe, "cannot create the session secret: %s", strerror(-rc));
		goto fail;
	}
	/* Checked here, where a person reads the error: the tree inherits it. */
	{
		char why[96];

		rc = sdm_startup_transport_defaults(&tc, why, sizeof(why));
		if (rc < 0) {
			fe_err(fe, "%s", why);
			goto fail;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	tc.my_id = SDM_TRANSPORT_ID_FRONTEND;
	tc.secret = &fe->secret;
	tc.arg = fe;
	tc.connected = on_connected;
	tc.frame = on_frame;
	tc.closed = on_closed;
	fe->t = sdm_transport_new(NULL, &tc);
	if (!fe->t) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = sdm_transport_listen(fe->t, "127.0.0.1", 0, 1, &fe->port);
	if (rc < 0) {
		fe_err(fe, "cannot listen: %s", strerror(-rc));
		goto fail;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		rc = -errno;
		goto fail;
	}
	fe->ready_fd = pfd[0];
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	sdm_transport_watch_fd(fe->t, pfd[0], EPOLLIN, ready_cb, fe);
	/* The master first, then the servers (Documentation/sdm.md, Startup). */
	if (!cfg->star) {
		fe->master_pid = spawn_master(fe);
		if (fe->master_pid < 0) {
			rc = -errno;
			goto fail;
		}
	}
	rc = launch_servers(fe, pfd[1]);
	close(pfd[1]);
	pfd[1] = -1;
	if (rc < 0) {
		fe_err(fe, "cannot launch the servers: %s", strerror(-rc));
		goto fail;
	}
	if (!wait_servers(fe, sdm_now_ms() + fe->cfg.init_timeout_ms) ||
	    fe->master_peer == -2) {
		rc = -ETIMEDOUT;
		if (fe->nready < fe->n)
			report_missing(fe);
		else
			fe_err(fe, "the master did not connect");
		goto fail;
	}
	rc = init_tree(fe);
	if (rc < 0) {
		fe_err(fe, "initialization failed: %s", strerror(-rc));
		goto fail;
	}
	*ret = fe;
	if (!init_ok(fe)) {
		char *names = NULL;

		for (unsigned int i = 0; i < fe->init_res.nev; i++) {
			if (fe->init_res.ev[i].type != SDM_MSG_ERROR)
				continue;
			names = sdm_set_to_string(fe->init_res.ev[i].src);
			fe_err(fe, "servers %s failed to initialise: %s",
			       names ? names : "?",
			       (char *)fe->init_res.ev[i].payload);
			free(names);
			break;
		}
		return -EHOSTDOWN;
	}
	return 0;

fail:
	if (pfd[1] >= 0)
		close(pfd[1]);
	sdm_fe_stop(fe);
	return rc;
}

/*
 * Reap the launchers that exit before deadline. A reaped one's pid stays,
 * negated: it names a process group that may live on (sdm_fe_stop).
 */
static void launchers_wait(struct sdm_fe *fe, uint64_t deadline)
{
	for (;;) {
		unsigned int left = 0;

		for (unsigned int i = 0; fe->pids && i < fe->npids; i++) {
			if (fe->pids[i] <= 0)
				continue;
			if (waitpid(fe->pids[i], NULL, WNOHANG) == fe->pids[i])
				fe->pids[i] = -fe->pids[i];
			else
				left++;
		}
		if (!left || sdm_now_ms() >= deadline)
			return;
		usleep(20000);
	}
}

static bool master_gone(struct sdm_fe *fe, void *arg)
{
	(void)arg;
	return fe->master_peer < 0;
}

void sdm_fe_stop(struct sdm_fe *fe)
{
	struct sdm_message *m;

	if (!fe)
		return;
	if (fe->t) {
		m = sdm_message_new(SDM_MSG_CONTROL, "shutdown", 8);
		if (m && sdm_set_assign(m->dest, fe->all) == 0)
			send_down(fe, m);
		sdm_message_free(m);
		if (!fe->cfg.star)
			wait_until(fe, master_gone, NULL,
				   sdm_now_ms() + FE_STOP_MS);
	}
	/* Whatever did not exit by now is killed; nothing is left behind. */
	if (fe->master_pid > 0) {
		kill(fe->master_pid, SIGKILL);
		waitpid(fe->master_pid, NULL, 0);
	}
	/*
	 * A remote launcher (srun) ends by itself once its server has: give
	 * it a moment, so that it is not killed in the middle of reporting
	 * a clean exit (and the job's step is not marked cancelled).
	 */
	/* Servers that never got INIT see their stdin end and quit. */
	for (unsigned int i = 0; fe->launch_in && i < fe->npids; i++) {
		if (fe->launch_in[i] >= 0)
			close(fe->launch_in[i]);
		fe->launch_in[i] = -1;
	}
	if (fe->cfg.launcher && fe->t)
		launchers_wait(fe, sdm_now_ms() + FE_STOP_MS);
	/*
	 * One still running (its server never got INIT, or the tree is
	 * gone): SIGTERM first, which srun passes to its step, so that the
	 * server on the other node goes too; SIGKILL would leave it there.
	 */
	if (fe->cfg.launcher) {
		for (unsigned int i = 0; fe->pids && i < fe->npids; i++)
			if (fe->pids[i])
				kill(-abs(fe->pids[i]), SIGTERM);
		launchers_wait(fe, sdm_now_ms() + FE_STOP_MS);
	}
	for (unsigned int i = 0; fe->pids && i < fe->npids; i++) {
		/*
		 * A launcher's whole group (spawn_shell): sh may be gone
		 * while the srun it forked still tries to reach a lost node.
		 */
		if (fe->cfg.launcher && fe->pids[i])
			kill(-abs(fe->pids[i]), SIGKILL);
		if (fe->pids[i] <= 0)
			continue;
		kill(fe->pids[i], SIGKILL);
		waitpid(fe->pids[i], NULL, 0);
	}
	while (fe->reqs) {
		sdm_fe_result_free(&fe->reqs->res);
		req_unlink(fe, fe->reqs);
	}
	while (fe->out_head) {
		struct fe_out *o = fe->out_head;

		fe->out_head = o->next;
		free(o);
	}
	sdm_fe_result_free(&fe->init_res);
	sdm_transport_free(fe->t);
	if (fe->ready_fd >= 0)
		close(fe->ready_fd);
	if (fe->dir[0]) {
		unlink(fe->secret_path);
		unlink(fe->bad_path);
		unlink(fe->launch_log);
		rmdir(fe->dir);
	}
	sdm_auth_secret_wipe(&fe->secret);
	sdm_table_free(&fe->table);
	free(fe->pids);
	free(fe->launch_in);
	free(fe->server_pid);
	free(fe->ready);
	free(fe->star_peer);
	for (uint32_t i = 0; fe->sranks && i < fe->n; i++)
		sdm_set_free(fe->sranks[i]);
	free(fe->sranks);
	sdm_set_free(fe->all);
	free(fe);
}

const struct sdm_fe_result *sdm_fe_init_result(struct sdm_fe *fe)
{
	return &fe->init_res;
}

int sdm_fe_submit(struct sdm_fe *fe, const struct sdm_idset *dest,
		  const void *cmd, size_t len, uint32_t timeout_ms,
		  uint32_t *ret_req)
{
	struct fe_req *r;
	int rc = submit(fe, SDM_MSG_COMMAND, dest, cmd, len, timeout_ms, &r);

	if (rc == 0)
		*ret_req = r->id;
	return rc;
}

int sdm_fe_collect(struct sdm_fe *fe, uint32_t req, struct sdm_fe_result *ret)
{
	struct fe_req *r = req_find(fe, req);

	if (!r)
		return -ENOENT;
	return collect(fe, r, ret);
}

int sdm_fe_command(struct sdm_fe *fe, const struct sdm_idset *dest,
		   const char *cmd, uint32_t timeout_ms,
		   struct sdm_fe_result *ret)
{
	uint32_t req = 0;
	int rc = sdm_fe_submit(fe, dest, cmd, strlen(cmd), timeout_ms, &req);

	return rc < 0 ? rc : sdm_fe_collect(fe, req, ret);
}

int sdm_fe_stdin(struct sdm_fe *fe, const struct sdm_idset *dest,
		 const void *buf, size_t len)
{
	struct sdm_message *m = sdm_message_new(SDM_MSG_IOF, NULL, 0);
	uint8_t *p = malloc(len + 1);
	int rc = -ENOMEM;

	if (!valid_dest(fe, dest))
		rc = -EINVAL;
	else if (m && p) {
		p[0] = SDM_IOF_STDIN;
		memcpy(p + 1, buf, len);
		rc = sdm_message_set_payload(m, p, len + 1);
		if (rc == 0)
			rc = sdm_set_assign(m->dest, dest);
		if (rc == 0)
			rc = send_down(fe, m);
	}
	free(p);
	sdm_message_free(m);
	return rc;
}

static bool have_output(struct sdm_fe *fe, void *arg)
{
	(void)arg;
	return fe->out_head != NULL;
}

ssize_t sdm_fe_read_output(struct sdm_fe *fe, int timeout_ms, sdm_id *ret_id,
			   int *ret_stream, void *buf, size_t size)
{
	struct fe_out *o;
	size_t n;

	/* What already arrived is taken in even without waiting. */
	if (!timeout_ms && !have_output(fe, NULL))
		sdm_transport_progress(fe->t, 0);
	if (!wait_until(fe, have_output, NULL, sdm_now_ms() + timeout_ms))
		return 0;
	o = fe->out_head;
	fe->out_head = o->next;
	if (!fe->out_head)
		fe->out_tail = &fe->out_head;
	n = o->len < size ? o->len : size;
	memcpy(buf, o->data, n);
	*ret_id = o->id;
	*ret_stream = o->stream;
	free(o);
	return n;
}

int sdm_fe_poll_fd(struct sdm_fe *fe)
{
	return sdm_transport_poll_fd(fe->t);
}

pid_t sdm_fe_server_pid(struct sdm_fe *fe, sdm_id id)
{
	return id < fe->n ? fe->server_pid[id] : -1;
}

int sdm_fe_server_port(struct sdm_fe *fe, sdm_id id)
{
	return id < fe->n ? fe->table.e[id].port : -1;
}

const char *sdm_fe_secret_path(struct sdm_fe *fe)
{
	return fe->secret_path;
}

void sdm_fe_counters(struct sdm_fe *fe, uint64_t *ret_frames,
		     uint64_t *ret_bytes)
{
	const struct sdm_transport_stats *s = sdm_transport_stats(fe->t);

	*ret_frames = s->frames_in - fe->frames0;
	*ret_bytes = s->bytes_in - fe->bytes0;
}

void sdm_fe_counters_reset(struct sdm_fe *fe)
{
	const struct sdm_transport_stats *s = sdm_transport_stats(fe->t);

	fe->frames0 = s->frames_in;
	fe->bytes0 = s->bytes_in;
}
