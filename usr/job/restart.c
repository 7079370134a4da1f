// SPDX-License-Identifier: GPL-2.0
/*
 * Restart of a job checkpoint with the restart barrier. Every part
 * runs `crdbg-part restart PART --expect-meta SHA --node-roots PIDS`
 * on its node (PIDS: the other parts' roots there, lineage.h):
 *
 *   part  -> verified                     images and chain intact, pids free
 *   coord -> restore                      (only once every part verified)
 *   part  -> restored                     restored, held: no instruction run;
 *                                         its CID, the count of parts, its index
 *   coord -> release | abort
 *
 * (the messages of <crdbg/job-part.h>).
 *
 * The coordinator adopts the first CID a restored part reports and
 * releases only when every counted part reported it; a foreign or missing
 * CID, a wrong count or a part that never comes aborts every part (a held
 * tree is killed). A part whose stdin closes (we died) aborts itself.
 *
 * Parts whose trees ran on other terminals than the first are not started
 * here: `crdbg restart JOB --join N` runs them on the terminal that should
 * take them and connects them to us through the door (join.h); they
 * count at the barrier like any other, and one that never joins times out.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "join.h"
#include "parts.h"
#include "sha256.h"
#include "tty-relay.h"

#define DEFAULT_TIMEOUT_S 180
/* How long an aborted part may take to kill its held tree and end. */
#define ABORT_GRACE_S 120

/* Name every part not at step (or the first that failed) into err. */
static int not_at(struct job_part *ps, size_t n, enum job_part_step step, int r,
		  const char *what, char *err, size_t errlen)
{
	char names[1024] = "", name[160];
	size_t len = 0, i, missing = 0;

	for (i = 0; i < n; i++) {
		if (job_part_at(&ps[i], step))
			continue;
		if (job_part_over(&ps[i]))	/* it ended: its own reason says most */
			return crs_fail(err, errlen, -EIO, "%s: %s: %s", what,
					job_part_name(&ps[i], name, sizeof(name)),
					ps[i].last_err[0] ? ps[i].last_err : "ended without a word");
		if (len < sizeof(names) - 2)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s%s",
						missing ? ", " : "",
						job_part_name(&ps[i], name, sizeof(name)),
						ps[i].awaiting ? ": its terminal never joined" : "");
		missing++;
	}
	return crs_fail(err, errlen, r ? r : -ETIMEDOUT, "%s: %zu part%s never reported (%s)",
			what, missing, missing == 1 ? "" : "s", names);
}

/* Every restored part carries the adopted CID, the count and its own index. */
static int check_barrier(const struct crs_job *j, struct job_part *ps, char *err, size_t errlen)
{
	struct job_part_restored first = { 0 }, r;
	char name[160];
	size_t i;

	for (i = 0; i < j->nr_parts; i++) {
		r = ps[i].msg.restored;
		if (!r.cid[0])
			return crs_fail(err, errlen, -EBADMSG,
					"%s has no computation id: it was not checkpointed as a part of this job",
					job_part_name(&ps[i], name, sizeof(name)));
		if (!first.cid[0])
			first = r;	/* the first CID seen is the computation's */
		if (strcmp(r.cid, first.cid))
			return crs_fail(err, errlen, -EBADMSG,
					"%s belongs to computation %s, not %s: a part of another job",
					job_part_name(&ps[i], name, sizeof(name)), r.cid, first.cid);
		if (r.parts != j->nr_parts || r.index != i)
			return crs_fail(err, errlen, -EBADMSG,
					"%s is part %u of %u, the job has %zu parts and expects it as part %zu",
					job_part_name(&ps[i], name, sizeof(name)), r.index, r.parts,
					j->nr_parts, i);
	}
	if (strcmp(first.cid, j->cid))
		return crs_fail(err, errlen, -EBADMSG,
				"the parts belong to computation %s, the job's manifest to %s",
				first.cid, j->cid);
	return 0;
}

/*
 * Part k's own restart: "crdbg-part restart PART --expect-meta SHA
 * --node-roots PIDS ..."; hex is its buffer, *roots its node's other
 * roots (crs_job_node_roots(): the caller frees them once argv is used).
 * 0 or -ENOMEM.
 */
static int part_argv(char **argv, char *hex, char **roots, const struct crs_job_opts *o,
		     const char *root, const struct crs_job *j, size_t k, bool terminal)
{
	char *opts[9] = { "--expect-meta", hex, "--node-roots", NULL };
	size_t n = 4;

	*roots = crs_job_node_roots(j, k);
	if (!*roots)
		return -ENOMEM;
	crs_sha256_hex(j->parts[k].meta_sha, hex);
	opts[3] = *roots;
	if (terminal) {
		opts[n++] = "--terminal-fd";
		opts[n++] = "3";
	}
	if (j->parts[k].agents[0]) {
		opts[n++] = "--agents";
		opts[n++] = (char *)j->parts[k].agents;
	}
	opts[n] = NULL;
	job_part_argv(argv, "restart", j->parts[k].handle, opts, root, o);
	return 0;
}

/*
 * The job's terminals (join.h): parts on ours start now, those of
 * every other terminal wait for `crdbg restart JOB --join N` there.
 */
struct terminals {
	const struct crs_job_opts *o;
	const char *root;
	const struct crs_job *j;
	struct job_part *ps;
	unsigned int *group, nr;	/* per part; how many other terminals */
	struct job_door door;
	struct crs_tty_relay tty;	/* ours, for our parts that had one here */
};

static bool this_host(const char *node)
{
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	return !node[0] || !strcmp(node, host);
}

static int start_parts(struct terminals *t, char *err, size_t errlen)
{
	const struct crs_job *j = t->j;
	char hex[CRS_SHA256_HEX], *roots;
	size_t i;
	int r;

	for (i = 0; i < j->nr_parts; i++) {
		const struct crs_job_part *jp = &j->parts[i];
		struct job_part *p = &t->ps[i];
		char *argv[20];

		p->index = i;
		p->ranks = jp->ranks;
		p->holds_agents = jp->agents[0];
		if (t->group[i]) {
			job_part_join_await(p, this_host(jp->node) ? "this host" : jp->node);
			continue;
		}
		/* our terminal for a part that had one, when it runs here */
		p->pass_tty = jp->tty[0] && t->tty.slave >= 0 && this_host(jp->node);
		p->tty_fd = t->tty.slave;
		if (part_argv(argv, hex, &roots, t->o, t->root, j, i, p->pass_tty))
			return crs_fail(err, errlen, -ENOMEM, "out of memory");
		r = job_part_start(p, jp->node, t->o->launch, argv, err, errlen);
		free(roots);
		if (r)
			return r;
	}
	crs_tty_relay_drop_slave(&t->tty);	/* the parts have it */
	return 0;
}

/* One line per other terminal: what to run there. */
static void announce_terminals(const struct terminals *t)
{
	/* the join must find the same store: named unless it is the default */
	const char *def = CRS_STORE_DEFAULT;

	for (unsigned int g = 1; t->o->log && g <= t->nr; g++) {
		const struct crs_job_part *first = NULL;
		char names[512] = "";
		size_t len = 0;

		for (size_t i = 0; i < t->j->nr_parts; i++) {
			if (t->group[i] != g)
				continue;
			if (!first)
				first = &t->j->parts[i];
			if (len < sizeof(names) - 2)
				len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%zu",
							len ? ", " : "", i);
		}
		fprintf(t->o->log,
			"crdbg: restart: part%s %s ran on %s of %s: run \"crdbg restart %s --join %u%s%s\" on the terminal that should take %s\n",
			strchr(names, ',') ? "s" : "", names, first->tty, first->node, t->j->handle,
			g, strcmp(t->root, def) ? " --store " : "", strcmp(t->root, def) ? t->root : "",
			strchr(names, ',') ? "them" : "it");
	}
	if (t->o->log)
		fflush(t->o->log);
}

/* "join N": which parts terminal N takes. */
static void answer_join(struct terminals *t, int fd, unsigned int g)
{
	char list[1024] = "parts";
	size_t len = 5;

	if (g < 1 || g > t->nr) {
		job_door_say(fd, "refused: %s has no terminal %u to join (its other terminals: 1 to %u)",
			     t->j->handle, g, t->nr);
		return;
	}
	for (size_t i = 0; i < t->j->nr_parts; i++) {
		if (t->group[i] != g)
			continue;
		if (!t->ps[i].awaiting) {
			job_door_say(fd, "refused: terminal %u of %s has joined already", g,
				     t->j->handle);
			return;
		}
		if (len < sizeof(list) - 12)
			len += (size_t)snprintf(list + len, sizeof(list) - len, " %zu", i);
	}
	job_door_say(fd, "%s", list);
}

/* "part N I": the connection becomes part I's stdin and stdout. */
static void answer_part(struct terminals *t, int fd, unsigned int g, unsigned int i)
{
	char hex[CRS_SHA256_HEX], *roots, line[2048] = "argv", *argv[20];
	struct job_part *p = &t->ps[i];
	size_t len = 4;
	int in;

	if (i >= t->j->nr_parts || t->group[i] != g || !g || !p->awaiting) {
		job_door_say(fd, "refused: part %u is not waiting for terminal %u", i, g);
		close(fd);
		return;
	}
	if (part_argv(argv, hex, &roots, t->o, t->root, t->j, i, false)) {
		job_door_say(fd, "refused: out of memory");
		close(fd);
		return;
	}
	for (char **a = argv; *a; a++) {
		/* the door's lines (join.h) are at most 2 KiB, tab-separated */
		if (strpbrk(*a, "\t\n") || len + strlen(*a) + 2 >= sizeof(line)) {
			job_door_say(fd, "refused: part %u's restart command cannot be sent (a tab or newline in the store's path, or longer than %zu bytes)",
				     i, sizeof(line) - 2);
			free(roots);
			close(fd);
			return;
		}
		len += (size_t)snprintf(line + len, sizeof(line) - len, "\t%s", *a);
	}
	free(roots);
	line[4] = ' ';
	in = dup(fd);
	if (in < 0 || job_door_say(fd, "%s", line)) {
		if (in >= 0)
			close(in);
		close(fd);
		return;
	}
	job_part_join_attach(p, in, fd);
}

static size_t door_fds(void *arg, struct pollfd *pfd, size_t max)
{
	struct terminals *t = arg;

	if (t->door.listen_fd < 0 || !max)
		return 0;
	pfd[0] = (struct pollfd){ .fd = t->door.listen_fd, .events = POLLIN };
	return 1;
}

static void door_ready(void *arg, const struct pollfd *pfd, size_t n)
{
	struct terminals *t = arg;
	struct job_door_req req;
	char line[128];
	int fd;

	if (!n || !pfd[0].revents)
		return;
	fd = job_door_accept(&t->door, line, sizeof(line));
	if (fd < 0)
		return;
	if (job_door_req_parse(line, &req)) {
		job_door_say(fd, "refused: not a request of crdbg restart --join");
		close(fd);
	} else if (req.kind == JOB_DOOR_JOIN) {
		answer_join(t, fd, req.group);
		close(fd);
	} else {
		answer_part(t, fd, req.group, req.part);
	}
}

/* The door and our own terminal's relay, before any part starts. */
static int open_terminals(struct terminals *t, char *err, size_t errlen)
{
	static struct job_parts_watch w;
	bool ours = false;
	int r;

	t->door = (struct job_door){ .dir_fd = -1, .listen_fd = -1 };
	t->tty = (struct crs_tty_relay)CRS_TTY_RELAY_INIT;
	/* Parts that take no terminal of ours (a transport's run where its servers are). */
	if (!t->j->nr_parts || !t->ps[0].ops->terminals)
		return 0;
	t->nr = job_terminal_groups(t->j, t->group);
	for (size_t i = 0; i < t->j->nr_parts; i++)
		ours |= !t->group[i] && t->j->parts[i].tty[0] && this_host(t->j->parts[i].node);
	if (ours) {
		r = crs_tty_relay_open(&t->tty, 0, 1, err, errlen);
		if (r)
			return r;
	}
	if (!t->nr)
		return 0;
	r = job_door_open(&t->door, t->root, t->j->handle, err, errlen);
	if (r)
		return r;
	w = (struct job_parts_watch){ .fds = door_fds, .ready = door_ready, .arg = t };
	job_parts_set_watch(&w);
	return 0;
}

/* No more joins: the barrier is passed or called off. */
static void close_door(struct terminals *t)
{
	job_parts_set_watch(NULL);
	job_door_close(&t->door);
}

static int part_status(struct job_part *ps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ps[i].status != 0)
			return ps[i].status;
	return 0;
}

int crs_job_restart(const struct crs_job_opts *o, int *ret_status, char *err, size_t errlen)
{
	const char *root = crs_store_root(o->store);
	int timeout = o->timeout_s > 0 ? o->timeout_s : DEFAULT_TIMEOUT_S;
	struct terminals t = { .o = o, .root = root };
	struct job_part *ps;
	struct crs_job j;
	size_t n;
	int r;

	r = crs_job_load(root, o->handle, &j, err, errlen);
	if (!r)
		r = crs_job_allocation_check(&j, o, err, errlen);
	if (r) {
		crs_job_free(&j);
		return r;
	}
	n = j.nr_parts;
	ps = calloc(n, sizeof(*ps));
	t.group = calloc(n, sizeof(*t.group));
	if (!ps || !t.group) {
		free(ps);
		free(t.group);
		crs_job_free(&j);
		return -ENOMEM;
	}
	t.j = &j;
	t.ps = ps;
	job_parts_init(ps, n, o->transport);
	signal(SIGPIPE, SIG_IGN);
	r = open_terminals(&t, err, errlen);
	if (!r)
		r = start_parts(&t, err, errlen);
	if (r)
		goto abort;
	announce_terminals(&t);

	r = job_parts_wait(ps, n, JOB_STEP_VERIFIED, timeout, o->log);
	for (size_t i = 0; !r && i < n; i++)
		if (!job_part_at(&ps[i], JOB_STEP_VERIFIED))
			r = -EIO;
	if (r) {
		r = not_at(ps, n, JOB_STEP_VERIFIED, r, "refused, nothing was restored", err, errlen);
		goto abort;
	}
	close_door(&t);	/* every part is here */
	job_parts_send(ps, n, JOB_ORDER_RESTORE);
	r = job_parts_wait(ps, n, JOB_STEP_RESTORED, timeout, o->log);
	for (size_t i = 0; !r && i < n; i++)
		if (!job_part_at(&ps[i], JOB_STEP_RESTORED))
			r = -EIO;
	if (r) {
		r = not_at(ps, n, JOB_STEP_RESTORED, r, "nothing was released", err, errlen);
		goto abort;
	}
	r = check_barrier(&j, ps, err, errlen);
	if (r)
		goto abort;
	if (o->log && o->verbose)
		fprintf(o->log, "crdbg: every part of %s is back (computation %s, %zu parts): releasing\n",
			j.handle, j.cid, n);
	job_parts_send(ps, n, JOB_ORDER_RELEASE);
	job_parts_finish(ps, n, o->log, 0);	/* the job runs as long as it runs */
	*ret_status = part_status(ps, n);
	goto out;
abort:
	close_door(&t);
	job_parts_send(ps, n, JOB_ORDER_ABORT);
	job_parts_kill_silent(ps, n);	/* not even verified: nothing restored */
	job_parts_finish(ps, n, o->log, ABORT_GRACE_S);
out:
	crs_tty_relay_finish(&t.tty);	/* what our terminal's parts wrote is out */
	free(ps);
	free(t.group);
	crs_job_free(&j);
	return r;
}
