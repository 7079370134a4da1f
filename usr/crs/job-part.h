/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A part of a job checkpoint or restart as the coordinator sees it: a
 * `crdbg ... --part` process on the part's node, spoken to one line at a
 * time. Its stdout carries "crdbg-part STEP [KEY=VALUE...]" lines (any
 * other line, the restored program's, is passed to our stdout); its
 * stderr is passed to the log, each line under the node's name except the
 * "MPIR debug info)" markers, which must reach the user unchanged.
 * With a transport (crs_job_opts.transport) the same calls go to it, and
 * its reports fill the same fields.
 */
#ifndef CRDBG_CRS_JOB_PART_H
#define CRDBG_CRS_JOB_PART_H

#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <crdbg/job.h>

struct job_part {
	size_t index;
	char node[CRS_NODE_MAX];	/* as shown: the host, "this host" */
	const char *ranks;
	pid_t pid;			/* the crdbg or launcher process */
	int in, out, err;		/* its stdin, stdout, stderr; -1 once closed */
	char obuf[1024], ebuf[1024];	/* partial lines */
	size_t olen, elen;
	char step[512];			/* its last "crdbg-part" line, without the prefix */
	char *tasks;			/* every "task ..." line of it (malloc'd) */
	char last_err[512];		/* crdbg's last error line, else its last stderr line */
	bool crdbg_said;		/* last_err is crdbg's own */
	int status;			/* exit status once reaped, else -1 */
	/*
	 * A part whose tree comes back on a terminal: with pass_tty, the pty
	 * slave tty_fd is its fd 3 (crdbg restart --terminal-fd 3). A part
	 * run by `crdbg restart JOB --join N` on another terminal is
	 * awaiting until that join connects, then joined: in and out are the
	 * join's socket, and its exit status comes as "crdbg-part exit S".
	 */
	bool pass_tty;
	int tty_fd;
	bool awaiting, joined;
	/*
	 * A part reached through a transport (crs_job_opts.transport, set
	 * before job_part_start): no fds of ours; over once it ended.
	 */
	const struct crs_job_transport *tp;
	bool over;
	/*
	 * Its beat (CRS_PART_BEAT_S): heard is when it last wrote anything
	 * (crs_clock_ms()); beats once it said "alive"; lost once
	 * it then fell silent for CRS_PART_SILENCE_S (its launcher is ended).
	 */
	double heard;
	bool beats, lost;
};

/*
 * More to watch while job_parts_wait() waits: fds() fills up to max
 * pollfds, ready() gets them back after poll (the joins' socket).
 */
struct job_parts_watch {
	size_t (*fds)(void *arg, struct pollfd *pfd, size_t max);
	void (*ready)(void *arg, const struct pollfd *pfd, size_t n);
	void *arg;
};
void job_parts_set_watch(const struct job_parts_watch *w);

/*
 * Start argv (argv[0] is ignored: this crdbg) for part p: here when node
 * is "" or this host, else through the template (NULL: srun --overlap in
 * $SLURM_JOB_ID, or an error saying what to pass).
 */
int job_part_start(struct job_part *p, const char *node, const char *launch,
		   char *const argv[], char *err, size_t errlen);

/*
 * argv for a part: "crdbg VERB ARG OPTS... --store ROOT --backend B
 * [--debug] [--full] [--no-pre-dump] [-v]" into argv (at least 16 slots,
 * 20 for a checkpoint); returns the count.
 */
int job_part_argv(char **argv, const char *verb, const char *arg, char *const opts[],
		  const char *root, const struct crs_job_opts *o);

/* One line to the part's stdin; -EPIPE when it is gone. */
int job_part_send(struct job_part *p, const char *line);

/* The line to every part still there. */
void job_parts_send(struct job_part *ps, size_t n, const char *line);

/*
 * Until every part has sent "crdbg-part STEP" (step holds the rest) or
 * ended or was lost, or timeout_s passed: 0, or -ETIMEDOUT.
 */
int job_parts_wait(struct job_part *ps, size_t n, const char *step, int timeout_s, FILE *log);

/* The part reached step (its last line), or not. */
bool job_part_at(const struct job_part *p, const char *step);

/* The part ended, or cannot be reached, or was lost: no more steps will come. */
bool job_part_over(const struct job_part *p);

/*
 * Close every stdin, read every part to its end and reap it; with grace_s,
 * a part still there after it is killed (with its process group).
 */
void job_parts_finish(struct job_part *ps, size_t n, FILE *log, int grace_s);

/* End every part that never said a word (its launch hangs: a lost node). */
void job_parts_kill_silent(struct job_part *ps, size_t n);

/* "node2 (ranks 4-5)" or "this host (pid 123)" for messages. */
const char *job_part_name(const struct job_part *p, char *buf, size_t len);

#endif /* CRDBG_CRS_JOB_PART_H */
