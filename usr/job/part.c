// SPDX-License-Identifier: GPL-2.0
/*
 * The coordinator's side of a job's parts (see parts.h): each call goes
 * to the part's ops; the stream parts' set operations, over their fds.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <crdbg/mpir-checkpoint.h>

#include "clock.h"
#include "parts.h"

/* How long a lost part's launcher has to pass our SIGTERM on before SIGKILL. */
#define LOST_GRACE_MS 5000

void job_parts_init(struct job_part *ps, size_t n, const struct crs_job_transport *tp)
{
	for (size_t i = 0; i < n; i++) {
		ps[i] = (struct job_part){
			.ops = tp ? &job_part_transport_ops : &job_part_proc_ops,
			.tp = tp, .in = -1, .out = -1, .err = -1, .status = -1,
			.tty_fd = -1,
		};
	}
}

int job_part_start(struct job_part *p, const char *node, const char *launch,
		   char *const argv[], char *err, size_t errlen)
{
	snprintf(p->node, sizeof(p->node), "%s", node[0] ? node : "this host");
	p->status = -1;
	p->in = p->out = p->err = -1;
	p->heard = crs_clock_ms();
	return p->ops->start(p, node, launch, argv, err, errlen);
}

int job_part_argv(char **argv, const char *verb, const char *arg, char *const opts[],
		  const char *root, const struct crs_job_opts *o)
{
	int a = 0;

	argv[a++] = JOB_PART_PROGRAM;	/* its path: the transport's */
	argv[a++] = (char *)verb;
	argv[a++] = (char *)arg;
	while (opts && *opts && a < 12)
		argv[a++] = *opts++;
	argv[a++] = "--store";
	argv[a++] = (char *)root;
	argv[a++] = "--backend";
	argv[a++] = o->backend == FREEZE_BACKEND_KMOD ? "kmod" :
		    o->backend == FREEZE_BACKEND_PTRACE ? "ptrace" : "auto";
	if (o->debug)
		argv[a++] = "--debug";
	if (o->full && !strcmp(verb, "checkpoint"))
		argv[a++] = "--full";
	if (o->no_pre_dump && !strcmp(verb, "checkpoint"))
		argv[a++] = "--no-pre-dump";
	if (o->verbose)
		argv[a++] = "-v";
	argv[a] = NULL;
	return a;
}

/* An order to the part's stdin; -EPIPE when it is gone. */
static int stream_send_one(struct job_part *p, enum job_part_order order)
{
	char buf[32];
	int len = job_part_order_format(order, buf, sizeof(buf) - 1);

	if (len < 0)
		return len;
	buf[len++] = '\n';
	if (p->in < 0)
		return -EPIPE;
	/* The coordinators ignore SIGPIPE: a part that is gone is EPIPE. */
	if (write(p->in, buf, (size_t)len) == len)
		return 0;
	p->ops->close_in(p);
	return -EPIPE;
}

void job_stream_send(struct job_part *ps, size_t n, enum job_part_order order)
{
	for (size_t i = 0; i < n; i++)
		stream_send_one(&ps[i], order);
}

void job_parts_send(struct job_part *ps, size_t n, enum job_part_order order)
{
	if (n)
		ps[0].ops->send(ps, n, order);
}

static void add_task(struct job_part *p, const struct job_part_task *t)
{
	struct job_part_task *nt = realloc(p->tasks, (p->nr_tasks + 1) * sizeof(*nt));

	if (!nt)
		return;
	nt[p->nr_tasks++] = *t;
	p->tasks = nt;
}

static void on_out_line(struct job_part *p, char *line)
{
	struct job_part_msg m;
	int r = job_part_msg_parse(line, strlen(line), &m);

	if (r == -ENOMSG) {	/* the restored program's */
		printf("%s\n", line);
		fflush(stdout);
		return;
	}
	if (r) {
		snprintf(p->last_err, sizeof(p->last_err), "sent a malformed message: %.400s",
			 line);
		p->crdbg_said = true;
		return;
	}
	switch (m.step) {
	case JOB_STEP_ALIVE:	/* its beat: no step */
		p->beats = true;
		break;
	case JOB_STEP_EXIT:	/* a join's word on how its part ended (not our child) */
		if (p->ops->exited)
			p->ops->exited(p, m.exit_status);
		break;
	case JOB_STEP_FAILED:
		snprintf(p->last_err, sizeof(p->last_err), "%s", m.failed.why);
		p->crdbg_said = true;
		break;
	case JOB_STEP_TASK:	/* a list: keep every one */
		add_task(p, &m.task);
		p->msg = m;
		break;
	default:
		p->msg = m;
		break;
	}
}

static void on_err_line(struct job_part *p, char *line, FILE *log)
{
	char host[CRS_NODE_MAX];
	pid_t pid;

	/*
	 * Its own failure message says why; a launcher's last words
	 * ("srun: error: node1: task 0: Exited with exit code 1") say
	 * less, and only stand in when it said nothing.
	 */
	if (!p->crdbg_said)
		snprintf(p->last_err, sizeof(p->last_err), "%s", line);
	if (!log)
		return;
	/* a restored rank's marker goes to its debugger as it is */
	if (!crs_parse_debug_info(line, host, sizeof(host), &pid))
		fprintf(log, "%s\n", line);
	else
		fprintf(log, "[%s] %s\n", p->node, line);
	fflush(log);
}

/* Take what fd has; returns false at its end. */
static bool drain(struct job_part *p, bool is_err, FILE *log)
{
	char *buf = is_err ? p->ebuf : p->obuf;
	size_t *len = is_err ? &p->elen : &p->olen, cap = sizeof(p->obuf) - 1;
	int *fd = is_err ? &p->err : &p->out;
	ssize_t n = read(*fd, buf + *len, cap - *len);
	char *nl;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		if (*len) {	/* a last line without its newline */
			buf[*len] = 0;
			is_err ? on_err_line(p, buf, log) : on_out_line(p, buf);
			*len = 0;
		}
		close(*fd);
		*fd = -1;
		return false;
	}
	p->heard = crs_clock_ms();
	*len += (size_t)n;
	while ((nl = memchr(buf, '\n', *len)) || *len == cap) {
		size_t ll = nl ? (size_t)(nl - buf) : *len;

		buf[ll] = 0;
		is_err ? on_err_line(p, buf, log) : on_out_line(p, buf);
		ll += nl ? 1 : 0;
		memmove(buf, buf + ll, *len - ll);
		*len -= ll;
	}
	return true;
}

/* What poll() found on each part's stderr and stdout (fds[2i + 1], fds[2i]). */
static void drain_ready(struct job_part *ps, size_t n, const struct pollfd *fds, FILE *log)
{
	for (size_t i = 0; i < n; i++) {
		if (fds[2 * i + 1].revents && ps[i].err >= 0)
			drain(&ps[i], true, log);
		if (fds[2 * i].revents && ps[i].out >= 0)
			drain(&ps[i], false, log);
	}
}

bool job_part_at(const struct job_part *p, enum job_part_step step)
{
	return p->msg.step == step;
}

bool job_part_over(const struct job_part *p)
{
	return p->ops->over(p);
}

/*
 * A part that beat and then fell silent: its node is gone, or hung, and
 * its launcher may not notice for minutes. It is over, and its ops end
 * it: a process's launcher is told to end it (srun passes SIGTERM on to
 * the part, whose end thaws or kills what it holds) and killed by
 * job_parts_finish() if it does not; a joined part is hung up on.
 */
static void part_lost(struct job_part *p)
{
	p->lost = true;
	snprintf(p->last_err, sizeof(p->last_err),
		 "no word from it for %d s: its node is lost or hung", CRS_PART_SILENCE_S);
	p->crdbg_said = true;
	p->ops->lost(p);
}

static bool part_silent(const struct job_part *p, double now_ms)
{
	return p->beats && !job_part_over(p) && now_ms - p->heard >= CRS_PART_SILENCE_S * 1000.0;
}

#define WATCH_MAX 16
static const struct job_parts_watch *watch;

void job_parts_set_watch(const struct job_parts_watch *w)
{
	watch = w;
}

int job_parts_wait(struct job_part *ps, size_t n, enum job_part_step step, int timeout_s,
		   FILE *log)
{
	return n ? ps[0].ops->wait(ps, n, step, timeout_s, log) : 0;
}

int job_stream_wait(struct job_part *ps, size_t n, enum job_part_step step, int timeout_s,
		    FILE *log)
{
	struct pollfd *fds = calloc(2 * n + WATCH_MAX, sizeof(*fds));
	time_t deadline = time(NULL) + timeout_s;
	size_t i, nf, nw = 0;
	int r = 0;

	if (!fds)
		return -ENOMEM;
	for (;;) {
		bool waiting = false;

		nf = 0;
		for (i = 0; i < n; i++) {
			if (!job_part_at(&ps[i], step) && part_silent(&ps[i], crs_clock_ms()))
				part_lost(&ps[i]);
			if (!job_part_over(&ps[i]) && !job_part_at(&ps[i], step))
				waiting = true;
			fds[2 * i] = (struct pollfd){ .fd = ps[i].out, .events = POLLIN };
			fds[2 * i + 1] = (struct pollfd){ .fd = ps[i].err, .events = POLLIN };
			nf += 2;
		}
		if (!waiting)
			break;
		if (time(NULL) >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		if (watch)
			nw = watch->fds(watch->arg, fds + nf, WATCH_MAX);
		if (poll(fds, nf + nw, 1000) < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		if (watch)
			watch->ready(watch->arg, fds + nf, nw);
		drain_ready(ps, n, fds, log);
	}
	free(fds);
	return r;
}

void job_parts_finish(struct job_part *ps, size_t n, FILE *log, int grace_s)
{
	if (n)
		ps[0].ops->finish(ps, n, log, grace_s);
}

/* A wait status as the exit code srun gives for its tasks'; -1 (unknown) as a failure. */
static int exit_code(int status)
{
	if (status < 0)
		return 1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

/*
 * Once every part without agents has ended: each part that holds agents
 * is told to end them with the highest exit code of the others (the
 * daemons the agents stood for), and its stdin is closed. True once done
 * (or nothing to do).
 */
static bool end_agents_when_due(struct job_part *ps, size_t n)
{
	char line[64];
	bool due = false;
	int code = 0, len;
	size_t i;

	for (i = 0; i < n; i++) {
		if (ps[i].holds_agents)
			due |= ps[i].in >= 0;
		else if (ps[i].out >= 0 || ps[i].err >= 0)
			return false;
	}
	if (!due)
		return true;
	for (i = 0; i < n; i++) {
		if (ps[i].holds_agents)
			continue;
		if (ps[i].ops->reap)
			ps[i].ops->reap(&ps[i]);
		if (exit_code(ps[i].status) > code)
			code = exit_code(ps[i].status);
	}
	len = job_part_end_agents_format(code, line, sizeof(line) - 1);
	for (i = 0; len > 0 && i < n; i++) {
		if (!ps[i].holds_agents || ps[i].in < 0)
			continue;
		line[len] = '\n';
		if (write(ps[i].in, line, (size_t)len + 1) != len + 1) {
			/* gone already: nothing more to tell it */
		}
		ps[i].ops->close_in(&ps[i]);
	}
	return true;
}

void job_stream_finish(struct job_part *ps, size_t n, FILE *log, int grace_s)
{
	struct pollfd *fds = calloc(2 * n, sizeof(*fds));
	time_t deadline = time(NULL) + grace_s;
	double lost_deadline = crs_clock_ms() + LOST_GRACE_MS;
	bool killed = false, lost_killed = false, agents_ended;
	size_t i;

	for (i = 0; i < n; i++)
		if (ps[i].in >= 0 && !(ps[i].holds_agents && !grace_s))
			ps[i].ops->close_in(&ps[i]);
	agents_ended = end_agents_when_due(ps, n);
	/* Every part at once: one that runs on must not hold back another's lines. */
	while (fds) {
		bool open_fds = false;

		for (i = 0; i < n; i++) {
			fds[2 * i] = (struct pollfd){ .fd = ps[i].out, .events = POLLIN };
			fds[2 * i + 1] = (struct pollfd){ .fd = ps[i].err, .events = POLLIN };
			open_fds |= ps[i].out >= 0 || ps[i].err >= 0;
		}
		if (!open_fds)
			break;
		if (!agents_ended)
			agents_ended = end_agents_when_due(ps, n);
		if (!lost_killed && crs_clock_ms() >= lost_deadline) {
			for (i = 0; i < n; i++)
				if (ps[i].ops->end_lost)
					ps[i].ops->end_lost(&ps[i]);
			lost_killed = true;
		}
		if (grace_s && !killed && time(NULL) >= deadline) {
			/* A part (or its launcher) that does not end: a lost node. */
			for (i = 0; i < n; i++)
				ps[i].ops->end(&ps[i]);
			killed = true;
		}
		if (poll(fds, 2 * n, grace_s || !lost_killed ? 1000 : -1) < 0 && errno != EINTR)
			break;
		drain_ready(ps, n, fds, log);
	}
	free(fds);
	for (i = 0; i < n; i++)
		if (ps[i].ops->reap)
			ps[i].ops->reap(&ps[i]);
}

void job_parts_kill_silent(struct job_part *ps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ps[i].ops->end_silent)
			ps[i].ops->end_silent(&ps[i]);
}

const char *job_part_name(const struct job_part *p, char *buf, size_t len)
{
	if (p->ranks && strcmp(p->ranks, "-"))
		snprintf(buf, len, "%s (part %zu, ranks %s)", p->node, p->index, p->ranks);
	else
		snprintf(buf, len, "%s (part %zu)", p->node, p->index);
	return buf;
}
