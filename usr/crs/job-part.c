// SPDX-License-Identifier: GPL-2.0
/* The coordinator's side of a job's part processes (see job-part.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "job-part.h"

#define PART_PREFIX "crdbg-part "
/* How long a lost part's launcher has to pass our SIGTERM on before SIGKILL. */
#define LOST_GRACE_MS 5000

/* The part's launcher and its process group (job_part_start() made one). */
static void signal_launcher(const struct job_part *p, int sig)
{
	kill(-p->pid, sig);
	kill(p->pid, sig);
}

static bool this_host(const char *node)
{
	char host[256] = "";

	if (!node[0])
		return true;
	gethostname(host, sizeof(host) - 1);
	return !strcmp(node, host);
}

/* argv as one /bin/sh word list: every word in single quotes. */
static char *shell_words(char *const argv[])
{
	size_t len = 0;
	char *buf = NULL, *const *a;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (a = argv; *a; a++) {
		fputs(a == argv ? "'" : " '", f);
		for (const char *c = *a; *c; c++)
			if (*c == '\'')
				fputs("'\\''", f);
			else
				fputc(*c, f);
		fputc('\'', f);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The template with {host} and {cmd} replaced. */
static char *expand(const char *tmpl, const char *host, const char *cmd)
{
	size_t len = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	while (*tmpl) {
		if (!strncmp(tmpl, "{host}", 6)) {
			fputs(host, f);
			tmpl += 6;
		} else if (!strncmp(tmpl, "{cmd}", 5)) {
			fputs(cmd, f);
			tmpl += 5;
		} else {
			fputc(*tmpl++, f);
		}
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int job_part_start(struct job_part *p, const char *node, const char *launch,
		   char *const argv[], char *err, size_t errlen)
{
	char self[PATH_MAX], tmpl[256], **args;
	int in[2], out[2], er[2];
	char *cmd = NULL, *sh = NULL;
	bool local = this_host(node);
	ssize_t n;
	size_t nr;

	snprintf(p->node, sizeof(p->node), "%s", node[0] ? node : "this host");
	p->status = -1;
	p->in = p->out = p->err = -1;
	p->heard = crs_clock_ms();
	if (p->tp)
		return p->tp->start(p->tp->arg, p->index, node, p->ranks ? p->ranks : "-", argv,
				    err, errlen);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return crs_fail(err, errlen, -errno, "cannot find crdbg's own path: %s",
				strerror(errno));
	self[n] = 0;
	for (nr = 0; argv[nr]; nr++)
		;
	args = calloc(nr + 1, sizeof(*args));
	if (!args)
		return -ENOMEM;
	memcpy(args, argv, nr * sizeof(*args));
	args[0] = self;
	if (!local) {
		const char *job = getenv("SLURM_JOB_ID");

		if (!launch && job && *job) {
			/* crdbg is no MPI task: no PMIx server in its step */
			snprintf(tmpl, sizeof(tmpl),
				 "exec srun --overlap --jobid=%s -w {host} -N1 -n1 --mpi=none --quiet {cmd}",
				 job);
			launch = tmpl;
		}
		if (!launch) {
			free(args);
			return crs_fail(err, errlen, -EHOSTUNREACH,
					"part %zu is on %s: run crdbg inside a Slurm allocation of that node or give --launch 'ssh {host} {cmd}'",
					p->index, node);
		}
		cmd = shell_words(args);
		sh = cmd ? expand(launch, node, cmd) : NULL;
		if (!sh) {
			free(cmd);
			free(args);
			return -ENOMEM;
		}
	}
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(er, O_CLOEXEC)) {
		free(sh);
		free(cmd);
		free(args);
		return crs_fail(err, errlen, -errno, "cannot make pipes: %s", strerror(errno));
	}
	p->pid = fork();
	if (p->pid == 0) {
		setpgid(0, 0);	/* job_parts_finish() may have to end it whole */
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(er[1], 2);
		if (p->pass_tty && p->tty_fd == 3)
			fcntl(3, F_SETFD, 0);
		else if (p->pass_tty)
			dup2(p->tty_fd, 3);
		if (local)
			execv(self, args);
		else
			execl("/bin/sh", "sh", "-c", sh, (char *)NULL);
		dprintf(2, "crdbg: cannot start part %zu on %s: %s\n", p->index, p->node,
			strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(er[1]);
	free(sh);
	free(cmd);
	free(args);
	if (p->pid < 0) {
		close(in[1]);
		close(out[0]);
		close(er[0]);
		return crs_fail(err, errlen, -errno, "cannot fork: %s", strerror(errno));
	}
	p->in = in[1];
	p->out = out[0];
	p->err = er[0];
	return 0;
}

int job_part_argv(char **argv, const char *verb, const char *arg, char *const opts[],
		  const char *root, const struct crs_job_opts *o)
{
	int a = 0;

	argv[a++] = "crdbg";
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

/* Our side of the part's stdin is done: a join's socket is half-closed. */
static void close_in(struct job_part *p)
{
	if (p->joined)
		shutdown(p->in, SHUT_WR);
	close(p->in);
	p->in = -1;
}

int job_part_send(struct job_part *p, const char *line)
{
	char buf[256];
	int len = snprintf(buf, sizeof(buf), "%s\n", line);

	if (p->in < 0)
		return -EPIPE;
	/* The coordinators ignore SIGPIPE: a part that is gone is EPIPE. */
	if (write(p->in, buf, (size_t)len) == len)
		return 0;
	close_in(p);
	return -EPIPE;
}

void job_parts_send(struct job_part *ps, size_t n, const char *line)
{
	if (n && ps[0].tp) {
		ps[0].tp->send(ps[0].tp->arg, line);
		return;
	}
	for (size_t i = 0; i < n; i++)
		job_part_send(&ps[i], line);
}

static void on_out_line(struct job_part *p, char *line)
{
	if (!strncmp(line, PART_PREFIX, strlen(PART_PREFIX))) {
		const char *step = line + strlen(PART_PREFIX);

		/* a join's word on how its part ended (it is not our child) */
		if (p->joined && sscanf(step, "exit %d", &p->status) == 1)
			return;
		if (!strcmp(step, "alive")) {	/* its beat: no step */
			p->beats = true;
			return;
		}
		snprintf(p->step, sizeof(p->step), "%s", step);
		if (!strncmp(step, "task ", 5)) {	/* a list: keep every line */
			size_t old = p->tasks ? strlen(p->tasks) : 0;
			char *n = realloc(p->tasks, old + strlen(step) + 2);

			if (n) {
				sprintf(n + old, "%s\n", step);
				p->tasks = n;
			}
		}
		return;
	}
	printf("%s\n", line);
	fflush(stdout);
}

static void on_err_line(struct job_part *p, char *line, FILE *log)
{
	static const char *const cmds[] = { "checkpoint: ", "restart: ", "verify: ", "rm: " };
	const char *why = line;

	/*
	 * "crdbg: restart: WHY" says WHY: the coordinator names the part.
	 * The launcher's own last words after it ("srun: error: node1:
	 * task 0: Exited with exit code 1") say less: crdbg's line stays.
	 */
	if (!strncmp(why, "crdbg: ", 7)) {
		why += 7;
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strncmp(why, cmds[i], strlen(cmds[i])))
				why += strlen(cmds[i]);
		snprintf(p->last_err, sizeof(p->last_err), "%s", why);
		p->crdbg_said = true;
	} else if (!p->crdbg_said) {
		snprintf(p->last_err, sizeof(p->last_err), "%s", why);
	}
	if (!log)
		return;
	if (!strncmp(line, "MPIR debug info)", 16))
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

bool job_part_at(const struct job_part *p, const char *step)
{
	size_t n = strlen(step);

	return !strncmp(p->step, step, n) && (p->step[n] == 0 || p->step[n] == ' ');
}

bool job_part_over(const struct job_part *p)
{
	if (p->tp)
		return p->over;
	return p->lost || (!p->awaiting && p->out < 0);
}

/*
 * A part that beat and then fell silent: its node is gone, or hung, and
 * its launcher may not notice for minutes. It is over: its launcher is
 * told to end it (srun passes SIGTERM on to the part, whose end thaws
 * or kills what it holds) and killed by job_parts_finish() if it does
 * not; a joined part's socket is hung up on.
 */
static void part_lost(struct job_part *p)
{
	p->lost = true;
	snprintf(p->last_err, sizeof(p->last_err),
		 "no word from it for %d s: its node is lost or hung", CRS_PART_SILENCE_S);
	p->crdbg_said = true;
	if (p->joined) {
		if (p->out >= 0)
			close(p->out);
		p->out = -1;
	} else if (p->pid > 0) {
		signal_launcher(p, SIGTERM);
	}
}

static bool part_silent(const struct job_part *p, double now_ms)
{
	return p->beats && !job_part_over(p) && now_ms - p->heard >= CRS_PART_SILENCE_S * 1000.0;
}

/*
 * A transport's wait or finish: it reports on every part in rep, which
 * starts as what we know.
 */
static int through_transport(struct job_part *ps, size_t n, const char *step, int timeout_s,
			     int grace_s)
{
	const struct crs_job_transport *tp = ps[0].tp;
	struct crs_part_report *rep = calloc(n, sizeof(*rep));
	int r = 0;

	if (!rep)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		snprintf(rep[i].step, sizeof(rep[i].step), "%s", ps[i].step);
		snprintf(rep[i].why, sizeof(rep[i].why), "%s", ps[i].last_err);
		rep[i].over = ps[i].over;
		rep[i].status = ps[i].status;
	}
	if (step)
		r = tp->wait(tp->arg, step, timeout_s, rep, n);
	else
		tp->finish(tp->arg, grace_s, rep, n);
	for (size_t i = 0; i < n; i++) {
		snprintf(ps[i].step, sizeof(ps[i].step), "%s", rep[i].step);
		snprintf(ps[i].last_err, sizeof(ps[i].last_err), "%s", rep[i].why);
		ps[i].over = rep[i].over;
		ps[i].status = rep[i].status;
	}
	free(rep);
	return r;
}

#define WATCH_MAX 16
static const struct job_parts_watch *watch;

void job_parts_set_watch(const struct job_parts_watch *w)
{
	watch = w;
}

int job_parts_wait(struct job_part *ps, size_t n, const char *step, int timeout_s, FILE *log)
{
	struct pollfd *fds = calloc(2 * n + WATCH_MAX, sizeof(*fds));
	time_t deadline = time(NULL) + timeout_s;
	size_t i, nf, nw = 0;
	int r = 0;

	if (n && ps[0].tp) {
		free(fds);
		return through_transport(ps, n, step, timeout_s, 0);
	}
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
		for (i = 0; i < n; i++) {
			if (fds[2 * i + 1].revents && ps[i].err >= 0)
				drain(&ps[i], true, log);
			if (fds[2 * i].revents && ps[i].out >= 0)
				drain(&ps[i], false, log);
		}
	}
	free(fds);
	return r;
}

void job_parts_finish(struct job_part *ps, size_t n, FILE *log, int grace_s)
{
	struct pollfd *fds = calloc(2 * n, sizeof(*fds));
	time_t deadline = time(NULL) + grace_s;
	double lost_deadline = crs_clock_ms() + LOST_GRACE_MS;
	bool killed = false, lost_killed = false;
	size_t i;

	if (n && ps[0].tp) {
		free(fds);
		through_transport(ps, n, NULL, 0, grace_s);
		return;
	}
	for (i = 0; i < n; i++)
		if (ps[i].in >= 0)
			close_in(&ps[i]);
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
		if (!lost_killed && crs_clock_ms() >= lost_deadline) {
			for (i = 0; i < n; i++)
				if (ps[i].lost && ps[i].pid > 0 && !ps[i].joined &&
				    (ps[i].out >= 0 || ps[i].err >= 0))
					signal_launcher(&ps[i], SIGKILL);
			lost_killed = true;
		}
		if (grace_s && !killed && time(NULL) >= deadline) {
			/* A part (or its launcher) that does not end: a lost node. */
			for (i = 0; i < n; i++)
				if (ps[i].pid > 0 && (ps[i].out >= 0 || ps[i].err >= 0)) {
					signal_launcher(&ps[i], SIGKILL);
				} else if (ps[i].joined && ps[i].out >= 0) {
					/* not ours to kill: hang up on it */
					close(ps[i].out);
					ps[i].out = -1;
				}
			killed = true;
		}
		if (poll(fds, 2 * n, grace_s || !lost_killed ? 1000 : -1) < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			if (fds[2 * i + 1].revents && ps[i].err >= 0)
				drain(&ps[i], true, log);
			if (fds[2 * i].revents && ps[i].out >= 0)
				drain(&ps[i], false, log);
		}
	}
	free(fds);
	for (i = 0; i < n; i++)
		if (ps[i].pid > 0 && ps[i].status < 0)
			while (waitpid(ps[i].pid, &ps[i].status, 0) < 0 && errno == EINTR)
				;
}

void job_parts_kill_silent(struct job_part *ps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!ps[i].step[0] && ps[i].pid > 0 && (ps[i].out >= 0 || ps[i].err >= 0))
			signal_launcher(&ps[i], SIGKILL);
}

const char *job_part_name(const struct job_part *p, char *buf, size_t len)
{
	if (p->ranks && strcmp(p->ranks, "-"))
		snprintf(buf, len, "%s (part %zu, ranks %s)", p->node, p->index, p->ranks);
	else
		snprintf(buf, len, "%s (part %zu)", p->node, p->index);
	return buf;
}
