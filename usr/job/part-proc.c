// SPDX-License-Identifier: GPL-2.0
/*
 * A part as a process (parts.h): `crdbg-part ...` started here, or on
 * its node through srun --overlap or a launch template ("ssh {host}
 * {cmd}"), in a process group of its own; its stdin, stdout and stderr
 * are pipes of ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "parts.h"

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

static int proc_start(struct job_part *p, const char *node, const char *launch,
		      char *const argv[], char *err, size_t errlen)
{
	char prog[PATH_MAX], tmpl[256], **args;
	int in[2], out[2], er[2];
	char *cmd = NULL, *sh = NULL;
	bool local = this_host(node);
	size_t nr;
	int r;

	/* the same install on every node: its path here is its path there */
	r = job_part_program(prog, sizeof(prog));
	if (r)
		return crs_fail(err, errlen, r, "cannot find crdbg's %s program: %s",
				JOB_PART_PROGRAM, strerror(-r));
	for (nr = 0; argv[nr]; nr++)
		;
	args = calloc(nr + 1, sizeof(*args));
	if (!args)
		return -ENOMEM;
	memcpy(args, argv, nr * sizeof(*args));
	args[0] = prog;
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
			execv(prog, args);
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

static void proc_close_in(struct job_part *p)
{
	close(p->in);
	p->in = -1;
}

static bool proc_running(const struct job_part *p)
{
	return p->pid > 0 && (p->out >= 0 || p->err >= 0);
}

/* Its launcher is told to end it: srun passes SIGTERM on to the part. */
static void proc_lost(struct job_part *p)
{
	if (p->pid > 0)
		signal_launcher(p, SIGTERM);
}

/* A launcher that does not pass SIGTERM on, or a part that does not end. */
static void proc_kill(struct job_part *p)
{
	if (proc_running(p))
		signal_launcher(p, SIGKILL);
}

static void proc_end_lost(struct job_part *p)
{
	if (p->lost)
		proc_kill(p);
}

static void proc_end_silent(struct job_part *p)
{
	if (p->msg.step == JOB_STEP_UNSPEC)
		proc_kill(p);
}

static void proc_reap(struct job_part *p)
{
	if (p->pid > 0 && p->status < 0)
		while (waitpid(p->pid, &p->status, 0) < 0 && errno == EINTR)
			;
}

static bool proc_over(const struct job_part *p)
{
	return p->lost || p->out < 0;
}

const struct job_part_ops job_part_proc_ops = {
	.start = proc_start,
	.send = job_stream_send,
	.wait = job_stream_wait,
	.finish = job_stream_finish,
	.over = proc_over,
	.terminals = true,
	.close_in = proc_close_in,
	.lost = proc_lost,
	.end_lost = proc_end_lost,
	.end = proc_kill,
	.end_silent = proc_end_silent,
	.reap = proc_reap,
};
