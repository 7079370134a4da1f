// SPDX-License-Identifier: GPL-2.0
/*
 * A rank's job checkpoint parts (part-run.h). A part is the part program
 * next to this server (crdbg-part, <crdbg/job-part.h>) run with the
 * arguments the console sent, which must name a part operation.
 * It speaks the part protocol (<crdbg/job-part.h>, through its codec):
 * orders on its stdin, its steps on its stdout, messages on its stderr.
 * A restart part stands in for the restored program's stdout and stderr
 * where those were a launcher's pipes: their other lines go upstream as
 * the rank's output, and the restored ranks' "MPIR debug info)" markers
 * (<crdbg/mpir-checkpoint.h>) name the processes they parked. A part
 * that fails says why in its failed step.
 *
 * The newest part of the rank is the one orders and waits go to; an
 * older one whose orders were closed (a released restart) runs on
 * beside it until it ends, its output still forwarded.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crdbg/dbgproto.h>
#include <crdbg/job-part.h>
#include <crdbg/mpir-checkpoint.h>

#include "part-run.h"

#define PART_LINE_MAX	(JOB_PART_LINE_MAX + 1)
#define REAP_POLL_MS	50

struct part_proc {
	struct part_rank *pr;
	pid_t pid;
	int in, out, err;
	char obuf[PART_LINE_MAX], ebuf[PART_LINE_MAX];
	size_t olen, elen;
	bool restart;		/* a restart: its other lines are the restored program's */
	struct job_part_msg msg;	/* its last step (no beat, no failure); UNSPEC: none */
	char why[JOB_PART_WHY_MAX];	/* its failure's reason, else its last stderr line */
	bool crdbg_said;		/* why is its own failure's */
	pid_t *marker;		/* pids of its "MPIR debug info)" lines, one per process */
	unsigned int nmarker, marker_cap;
	int status;		/* exit status once reaped, else -1 */
	int reap_timer;
	struct part_proc *next;	/* the rank's older parts */
};

/* A request answered later: its id (0: none) and its timer (0: none). */
struct pending {
	uint32_t req;
	int timer;
};

struct part_rank {
	struct sdm_backend_host host;
	const struct sdm_idset *me;
	struct part_proc *cur;		/* orders and waits go here */
	struct part_proc *old;		/* released, running on */
	/* the wait under way and what it waits for; the finish, the drain */
	struct pending wait, fin, drain;
	char wait_step[DBGP_PART_STEP_MAX];
	int wait_pid[DBGP_PART_PIDS_MAX];	/* a wait for these to be parked */
	unsigned int wait_npid;			/* 0: a wait for wait_step */
	int wait_ms;
};

static void reply(struct part_rank *pr, uint32_t req, int error, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void reply(struct part_rank *pr, uint32_t req, int error, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* a reply is one line of the protocol */
	for (char *c = buf; *c; c++)
		if (*c == '\n')
			*c = ' ';
	pr->host.reply(pr->host.arg, req, pr->me, error, buf, strlen(buf));
}

static bool proc_over(const struct part_proc *p)
{
	return p->status >= 0;
}

static bool at_step(const struct part_proc *p, const char *step)
{
	const char *name = job_part_step_name(p->msg.step);

	return name && !strcmp(name, step);
}

static bool has_marker(const struct part_proc *p, pid_t pid)
{
	for (unsigned int i = 0; i < p->nmarker; i++)
		if (p->marker[i] == pid)
			return true;
	return false;
}

/* Every process the wait under way names is parked. */
static bool all_marked(const struct part_rank *pr, const struct part_proc *p)
{
	for (unsigned int i = 0; i < pr->wait_npid; i++)
		if (!has_marker(p, pr->wait_pid[i]))
			return false;
	return true;
}

/* A restored process said it is parked; the set grows as a tree's does. */
static void add_marker(struct part_proc *p, pid_t pid)
{
	if (has_marker(p, pid))
		return;
	if (p->nmarker == p->marker_cap) {
		unsigned int cap = p->marker_cap ? 2 * p->marker_cap : 16;
		pid_t *m = realloc(p->marker, cap * sizeof(*m));

		if (!m)
			return;	/* its wait times out and says so */
		p->marker = m;
		p->marker_cap = cap;
	}
	p->marker[p->nmarker++] = pid;
}

/* The request of p, now no longer pending (its timer cancelled); 0 if none. */
static uint32_t take(struct part_rank *pr, struct pending *p)
{
	uint32_t req = p->req;

	if (p->timer > 0)
		sdm_transport_cancel_timer(pr->host.engine, p->timer);
	*p = (struct pending){ 0 };
	return req;
}

/* The part's step, as the codec writes it, for the console to parse. */
static void reply_step(struct part_rank *pr, uint32_t req, const struct part_proc *p)
{
	char line[PART_LINE_MAX];

	if (job_part_msg_format(&p->msg, line, sizeof(line)) < 0)
		reply(pr, req, 1, DBGP_ERROR "ended: its step cannot be passed on");
	else
		reply(pr, req, 0, "%s", line);
}

/* Answer the wait under way if the current part settled it. */
static void check_wait(struct part_rank *pr)
{
	struct part_proc *p = pr->cur;

	if (!pr->wait.req || !p)
		return;
	if (pr->wait_npid && all_marked(pr, p))
		reply(pr, take(pr, &pr->wait), 0, "debug %u", pr->wait_npid);
	else if (!pr->wait_npid && at_step(p, pr->wait_step))
		reply_step(pr, take(pr, &pr->wait), p);
	else if (proc_over(p))
		reply(pr, take(pr, &pr->wait), 1, DBGP_ERROR "ended: %s", p->why[0] ? p->why : "it ended without a word");
}

static void wait_expired(void *arg)
{
	struct part_rank *pr = arg;
	uint32_t req;

	pr->wait.timer = 0;	/* it ran */
	req = take(pr, &pr->wait);
	if (req)
		reply(pr, req, 1, DBGP_ERROR "no answer in %d s", (pr->wait_ms + 999) / 1000);
}

/* A line the part relays for the restored program: the rank's output. */
static void relay(struct part_proc *p, int stream, const char *line)
{
	struct part_rank *pr = p->pr;
	char out[PART_LINE_MAX + 1];
	size_t len = strlen(line);

	memcpy(out, line, len);
	out[len++] = '\n';
	pr->host.output(pr->host.arg, pr->host.id, stream, out, len);
}

static void on_out_line(struct part_proc *p, const char *line)
{
	struct job_part_msg m;
	int r = job_part_msg_parse(line, strlen(line), &m);

	if (r == -ENOMSG) {
		/* a verify's or rm's report: the steps and the exit say it all */
		if (p->restart)
			relay(p, SDM_IOF_STDOUT, line);
		return;
	}
	if (r) {
		snprintf(p->why, sizeof(p->why), "sent a malformed message: %.400s", line);
		p->crdbg_said = true;
		return;
	}
	if (m.step == JOB_STEP_FAILED) {
		snprintf(p->why, sizeof(p->why), "%s", m.failed.why);
		p->crdbg_said = true;
	} else if (m.step != JOB_STEP_ALIVE) {
		/* its beat is for a coordinator across a launcher; this one is local */
		p->msg = m;
	}
}

static void on_err_line(struct part_proc *p, const char *line)
{
	char host[256];
	pid_t pid;

	if (!crs_parse_debug_info(line, host, sizeof(host), &pid)) {
		add_marker(p, pid);
		return;
	}
	if (p->restart)	/* the restored program's stderr, which the part stands in for */
		relay(p, SDM_IOF_STDERR, line);
	else if (!p->crdbg_said && *line)
		snprintf(p->why, sizeof(p->why), "%.500s", line);
}

static void proc_free(struct part_proc *p)
{
	struct part_rank *pr = p->pr;

	if (p->reap_timer > 0)
		sdm_transport_cancel_timer(pr->host.engine, p->reap_timer);
	if (p->in >= 0)
		close(p->in);
	for (int *fd = &p->out; fd <= &p->err; fd++)
		if (*fd >= 0) {
			sdm_transport_unwatch_fd(pr->host.engine, *fd);
			close(*fd);
		}
	free(p->marker);
	free(p);
}

/* An older part that ended: forget it. */
static void drop_old(struct part_rank *pr, struct part_proc *p)
{
	for (struct part_proc **pp = &pr->old; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			proc_free(p);
			return;
		}
}

/* "exit 0", or "exit S: WHY" for a part that failed (dbgp_part_end_format()). */
static void reply_exit(struct part_rank *pr, uint32_t req, const struct part_proc *p)
{
	struct dbgp_part_end e = { .status = p->status > 255 ? 255 : p->status, .why = p->why };
	char text[JOB_PART_WHY_MAX + 32];

	if (dbgp_part_end_format(text, sizeof(text), &e) < 0)
		reply(pr, req, 1, DBGP_ERROR "ended: its end cannot be passed on");
	else
		reply(pr, req, 0, "%s", text);
}

/* No part of the rank runs any more (its output is all forwarded). */
static bool all_ended(const struct part_rank *pr)
{
	return !pr->old && (!pr->cur || proc_over(pr->cur));
}

static void check_drain(struct part_rank *pr)
{
	if (pr->drain.req && all_ended(pr))
		reply(pr, take(pr, &pr->drain), 0, "drained");
}

static void reaped(struct part_proc *p, int st)
{
	struct part_rank *pr = p->pr;

	p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (!p->why[0] && p->status)
		snprintf(p->why, sizeof(p->why), "it ended with status %d", p->status);
	if (p != pr->cur) {
		drop_old(pr, p);
		check_drain(pr);
		return;
	}
	check_drain(pr);
	check_wait(pr);
	if (pr->fin.req)
		reply_exit(pr, take(pr, &pr->fin), p);
}

/* Both its pipes ended: the part is ending; reap it without blocking. */
static void try_reap(void *arg)
{
	struct part_proc *p = arg;
	int st;
	pid_t r;

	p->reap_timer = 0;
	do
		r = waitpid(p->pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == p->pid) {
		reaped(p, st);
	} else if (r < 0) {
		reaped(p, 127 << 8);	/* not ours any more: nothing to wait for */
	} else {
		p->reap_timer = sdm_transport_add_timer(p->pr->host.engine, REAP_POLL_MS,
							try_reap, p);
	}
}

/* Take what fd has; lines go to the handlers. */
static void on_readable(void *arg, int fd, uint32_t events)
{
	struct part_proc *p = arg;
	bool is_err = fd == p->err;
	char *buf = is_err ? p->ebuf : p->obuf;
	size_t *len = is_err ? &p->elen : &p->olen;
	size_t cap = sizeof(p->obuf) - 1;	/* room for a NUL after the longest line */
	ssize_t n = read(fd, buf + *len, cap - *len);
	char *nl;

	(void)events;
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n > 0)
		*len += (size_t)n;
	while ((nl = memchr(buf, '\n', *len)) || *len == cap || (n <= 0 && *len)) {
		size_t ll = nl ? (size_t)(nl - buf) : *len;

		buf[ll] = 0;
		is_err ? on_err_line(p, buf) : on_out_line(p, buf);
		ll += nl ? 1 : 0;
		memmove(buf, buf + ll, *len - ll);
		*len -= ll;
	}
	if (n <= 0) {
		sdm_transport_unwatch_fd(p->pr->host.engine, fd);
		close(fd);
		*(is_err ? &p->err : &p->out) = -1;
		if (p->out < 0 && p->err < 0)
			try_reap(p);
		return;
	}
	check_wait(p->pr);
}

static void child_exec(const char *prog, char **argv, int in, int out, int err)
{
	sigset_t none;

	setpgid(0, 0);	/* a part that does not end is killed whole */
	dup2(in, 0);
	dup2(out, 1);
	dup2(err, 2);
	signal(SIGPIPE, SIG_DFL);	/* the server ignores it */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execv(prog, argv);
	dprintf(2, "crdbg: cannot run %s: %s\n", prog, strerror(errno));
	_exit(127);
}

static void do_start(struct part_rank *pr, uint32_t req, struct dbgp_part_cmd *c)
{
	char prog[PATH_MAX], **argv = c->argv;
	int in[2], out[2], er[2];
	struct part_proc *p;

	if (pr->cur && !proc_over(pr->cur) && pr->cur->in >= 0) {
		reply(pr, req, 1, DBGP_ERROR "the rank's last part is still taking orders");
		return;
	}
	if (job_part_program(prog, sizeof(prog))) {
		reply(pr, req, 1, DBGP_ERROR "no " JOB_PART_PROGRAM " program next to this server");
		return;
	}
	argv[0] = prog;
	p = calloc(1, sizeof(*p));
	if (!p || pipe2(in, O_CLOEXEC)) {
		free(p);
		reply(pr, req, 1, DBGP_ERROR "cannot start a part: %s", strerror(errno));
		return;
	}
	if (pipe2(out, O_CLOEXEC) || pipe2(er, O_CLOEXEC)) {
		reply(pr, req, 1, DBGP_ERROR "cannot start a part: %s", strerror(errno));
		close(in[0]);
		close(in[1]);
		free(p);
		return;
	}
	p->pr = pr;
	p->status = -1;
	p->restart = !strcmp(argv[1], "restart");
	p->pid = fork();
	if (p->pid == 0)
		child_exec(prog, argv, in[0], out[1], er[1]);
	close(in[0]);
	close(out[1]);
	close(er[1]);
	p->in = in[1];
	p->out = out[0];
	p->err = er[0];
	if (p->pid < 0 ||
	    sdm_transport_watch_fd(pr->host.engine, p->out, EPOLLIN, on_readable, p) ||
	    sdm_transport_watch_fd(pr->host.engine, p->err, EPOLLIN, on_readable, p)) {
		if (p->pid > 0) {
			kill(-p->pid, SIGKILL);
			waitpid(p->pid, NULL, 0);
		}
		proc_free(p);
		reply(pr, req, 1, DBGP_ERROR "cannot start a part: %s", strerror(errno));
		return;
	}
	/* the last part ran on (released) or ended: it gives way */
	if (pr->cur) {
		if (proc_over(pr->cur)) {
			proc_free(pr->cur);
		} else {
			pr->cur->next = pr->old;
			pr->old = pr->cur;
		}
	}
	pr->cur = p;
	reply(pr, req, 0, "started");
}

static void do_order(struct part_rank *pr, uint32_t req, const char *line)
{
	struct part_proc *p = pr->cur;
	size_t len = strlen(line);
	char buf[PART_LINE_MAX];

	if (!p || p->in < 0 || proc_over(p)) {
		reply(pr, req, 1, DBGP_ERROR "ended: %s", p && p->why[0] ? p->why : "no part takes orders");
		return;
	}
	memcpy(buf, line, len);
	buf[len++] = '\n';
	/* an order is far below PIPE_BUF: one write, whole or not at all */
	if (write(p->in, buf, len) != (ssize_t)len) {
		close(p->in);
		p->in = -1;
		reply(pr, req, 1, DBGP_ERROR "ended: %s", p->why[0] ? p->why : "it no longer takes orders");
		return;
	}
	reply(pr, req, 0, "sent");
}

static void do_wait(struct part_rank *pr, uint32_t req, const struct dbgp_part_cmd *c)
{
	if (!pr->cur) {
		reply(pr, req, 1, DBGP_ERROR "ended: no part was started");
		return;
	}
	take(pr, &pr->wait);	/* a newer wait replaces one nobody waits for */
	pr->wait.req = req;
	memcpy(pr->wait_pid, c->pid, c->npid * sizeof(c->pid[0]));
	pr->wait_npid = c->npid;
	pr->wait_ms = (int)c->ms;
	snprintf(pr->wait_step, sizeof(pr->wait_step), "%s", c->step);
	check_wait(pr);
	if (pr->wait.req == req)
		pr->wait.timer = sdm_transport_add_timer(pr->host.engine, (int)c->ms,
							 wait_expired, pr);
}

static void finish_expired(void *arg)
{
	struct part_rank *pr = arg;

	pr->fin.timer = 0;	/* it ran; the reap answers the finish */
	if (pr->cur && !proc_over(pr->cur) && pr->cur->pid > 0) {
		/* it does not end: a hung freeze or launch; its group goes */
		kill(-pr->cur->pid, SIGKILL);
		kill(pr->cur->pid, SIGKILL);
	}
}

static void do_finish(struct part_rank *pr, uint32_t req, unsigned long ms)
{
	struct part_proc *p = pr->cur;

	if (!p) {
		reply(pr, req, 1, DBGP_ERROR "ended: no part was started");
		return;
	}
	if (p->in >= 0) {
		close(p->in);
		p->in = -1;
	}
	if (proc_over(p)) {
		reply_exit(pr, req, p);
	} else if (!ms) {
		reply(pr, req, 0, "running");
	} else {
		take(pr, &pr->fin);
		pr->fin.req = req;
		pr->fin.timer = sdm_transport_add_timer(pr->host.engine, (int)ms, finish_expired,
							pr);
	}
}

static void drain_expired(void *arg)
{
	struct part_rank *pr = arg;
	uint32_t req;

	pr->drain.timer = 0;	/* it ran */
	req = take(pr, &pr->drain);
	if (req)
		reply(pr, req, 0, "running");
}

/* Until every part of the rank ended, all it wrote forwarded: "drained". */
static void do_drain(struct part_rank *pr, uint32_t req, unsigned long ms)
{
	take(pr, &pr->drain);
	pr->drain.req = req;
	check_drain(pr);
	if (pr->drain.req == req)
		pr->drain.timer = sdm_transport_add_timer(pr->host.engine, (int)ms, drain_expired,
							  pr);
}

void part_rank_command(struct part_rank *pr, uint32_t req, const char *arg)
{
	char buf[DBGP_CMD_MAX + 1];
	struct dbgp_part_cmd c;
	const char *why;

	snprintf(buf, sizeof(buf), "%s", arg);
	if (dbgp_part_parse(buf, &c, &why)) {
		reply(pr, req, 1, DBGP_ERROR "%s", why);
		return;
	}
	switch (c.op) {
	case DBGP_PART_START:
		do_start(pr, req, &c);
		break;
	case DBGP_PART_ORDER:
		do_order(pr, req, c.line);
		break;
	case DBGP_PART_WAIT:
		do_wait(pr, req, &c);
		break;
	case DBGP_PART_FINISH:
		do_finish(pr, req, c.ms);
		break;
	case DBGP_PART_DRAIN:
		do_drain(pr, req, c.ms);
		break;
	}
}

struct part_rank *part_rank_new(const struct sdm_backend_host *host,
				const struct sdm_idset *me)
{
	struct part_rank *pr = calloc(1, sizeof(*pr));

	if (!pr)
		return NULL;
	pr->host = *host;
	pr->me = me;
	return pr;
}

void part_rank_free(struct part_rank *pr)
{
	struct part_proc *p, *next;

	if (!pr)
		return;
	take(pr, &pr->wait);
	take(pr, &pr->fin);
	take(pr, &pr->drain);
	if (pr->cur)
		proc_free(pr->cur);
	for (p = pr->old; p; p = next) {
		next = p->next;
		proc_free(p);
	}
	free(pr);
}
