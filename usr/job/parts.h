/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A part of a job checkpoint or restart as the coordinator sees it,
 * spoken to one message a line (<crdbg/job-part.h>), and reached
 * through its part ops (struct job_part_ops), one implementation per
 * way to a part:
 *
 *   part-proc.c       a `crdbg ... --part` process started here, or on
 *                     another node through ssh, srun or a launch template;
 *   part-join.c       a restart's part run by `crdbg restart JOB --join N`
 *                     on another terminal, over the join's socket;
 *   part-transport.c  a part run by whoever the caller's transport asks
 *                     (crs_job_opts.transport: a debug session's servers).
 *
 * The first two are streams: the part's stdout carries its steps (any
 * other line, the restored program's, is passed to our stdout); its
 * stderr is passed to the log, each line under the node's name except
 * the "MPIR debug info)" markers, which must reach the user unchanged.
 * A transport's reports fill the same fields.
 */
#ifndef CRDBG_CRS_JOB_PART_H
#define CRDBG_CRS_JOB_PART_H

#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include <crdbg/job.h>
#include <crdbg/job-part.h>

struct job_part;

struct job_part_ops {
	/*
	 * Start p (argv[0] is ignored: this crdbg) on node: 0, or -errno
	 * and err. NULL: another starts it (a join).
	 */
	int (*start)(struct job_part *p, const char *node, const char *launch,
		     char *const argv[], char *err, size_t errlen);
	/*
	 * The parts of one job, all reached the same way but for a
	 * restart's stream parts, of which some may be joins: ps[0]'s
	 * ops speak for the set (see job_parts_send() and the others).
	 */
	void (*send)(struct job_part *ps, size_t n, enum job_part_order order);
	int (*wait)(struct job_part *ps, size_t n, enum job_part_step step, int timeout_s,
		    FILE *log);
	void (*finish)(struct job_part *ps, size_t n, FILE *log, int grace_s);
	/* No more steps will come from p. */
	bool (*over)(const struct job_part *p);
	/* Its parts can take a terminal of ours, or wait for a join (restart.c). */
	bool terminals;
	/*
	 * One part of a stream set (job_stream_*()), or NULL:
	 * close_in: our side of its stdin is done;
	 * exited: it said how it ended (a join's exit step);
	 * lost: it fell silent after a beat, end it;
	 * end_lost: it is still there LOST_GRACE_MS after lost;
	 * end: it is still there after the grace of job_parts_finish();
	 * end_silent: it never said a word (job_parts_kill_silent());
	 * reap: its exit status, once its stdout and stderr are closed.
	 */
	void (*close_in)(struct job_part *p);
	void (*exited)(struct job_part *p, int status);
	void (*lost)(struct job_part *p);
	void (*end_lost)(struct job_part *p);
	void (*end)(struct job_part *p);
	void (*end_silent)(struct job_part *p);
	void (*reap)(struct job_part *p);
};

extern const struct job_part_ops job_part_proc_ops;
extern const struct job_part_ops job_part_join_ops;
extern const struct job_part_ops job_part_transport_ops;

struct job_part {
	size_t index;
	char node[CRS_NODE_MAX];	/* as shown: the host, "this host" */
	const char *ranks;
	pid_t pid;			/* the crdbg or launcher process */
	int in, out, err;		/* its stdin, stdout, stderr; -1 once closed */
	char obuf[1024], ebuf[1024];	/* partial lines */
	size_t olen, elen;
	struct job_part_msg msg;	/* its last step (no beat, no failure); UNSPEC: none */
	struct job_part_task *tasks;	/* every task step of it (malloc'd) */
	size_t nr_tasks;
	char last_err[JOB_PART_WHY_MAX];	/* why it failed, else its last stderr line */
	bool crdbg_said;		/* last_err is its own failure message */
	int status;			/* exit status once reaped, else -1 */
	/*
	 * A part whose tree comes back on a terminal: with pass_tty, the pty
	 * slave tty_fd is its fd 3 (crdbg restart --terminal-fd 3). A part
	 * run by `crdbg restart JOB --join N` on another terminal is
	 * awaiting until that join connects, then joined: in and out are the
	 * join's socket, and its exit status comes as an exit step.
	 */
	bool pass_tty;
	int tty_fd;
	/*
	 * A restart's part whose tree holds a launcher's agents: its stdin
	 * stays open past the release for the end-agents order, sent once
	 * every other part has ended (job_parts_finish()).
	 */
	bool holds_agents;
	bool awaiting, joined;
	const struct job_part_ops *ops;
	/*
	 * A part reached through a transport (part-transport.c): no fds
	 * of ours; over once it ended.
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
 * n parts, none started, reached through tp (NULL: processes, part-proc.c):
 * the caller sets each one's index and ranks.
 */
void job_parts_init(struct job_part *ps, size_t n, const struct crs_job_transport *tp);

/*
 * Start argv (argv[0] is ignored: this crdbg) for part p: for a process,
 * here when node is "" or this host, else through the template (NULL:
 * srun --overlap in $SLURM_JOB_ID, or an error saying what to pass).
 */
int job_part_start(struct job_part *p, const char *node, const char *launch,
		   char *const argv[], char *err, size_t errlen);

/*
 * argv for a part: "crdbg-part VERB ARG OPTS... --store ROOT --backend B
 * [--debug] [--full] [--no-pre-dump] [-v]" into argv (at least 16 slots,
 * 20 for a checkpoint); returns the count.
 */
int job_part_argv(char **argv, const char *verb, const char *arg, char *const opts[],
		  const char *root, const struct crs_job_opts *o);

/* The order to every part still there. */
void job_parts_send(struct job_part *ps, size_t n, enum job_part_order order);

/*
 * Until every part has sent step (msg holds it) or ended or was lost, or
 * timeout_s passed: 0, or -ETIMEDOUT.
 */
int job_parts_wait(struct job_part *ps, size_t n, enum job_part_step step, int timeout_s,
		   FILE *log);

/* The part reached step (its last step), or not. */
bool job_part_at(const struct job_part *p, enum job_part_step step);

/* The part ended, or cannot be reached, or was lost: no more steps will come. */
bool job_part_over(const struct job_part *p);

/*
 * Close every stdin, read every part to its end and reap it; with grace_s,
 * a part still there after it is killed (with its process group). A part
 * that holds agents keeps its stdin until every other part has ended,
 * and then gets end-agents with the highest exit code of theirs.
 */
void job_parts_finish(struct job_part *ps, size_t n, FILE *log, int grace_s);

/* End every part that never said a word (its launch hangs: a lost node). */
void job_parts_kill_silent(struct job_part *ps, size_t n);

/*
 * A restart's part that a join on another terminal will run (part-join.c):
 * awaiting until job_part_join_attach() gives it the join's connection,
 * in and out (each its own fd; both are ours to close).
 */
void job_part_join_await(struct job_part *p, const char *node);
void job_part_join_attach(struct job_part *p, int in, int out);

/*
 * The stream parts' set operations (part.c), for the ops of part-proc.c
 * and part-join.c: their fds are ours, read through the codec.
 */
void job_stream_send(struct job_part *ps, size_t n, enum job_part_order order);
int job_stream_wait(struct job_part *ps, size_t n, enum job_part_step step, int timeout_s,
		    FILE *log);
void job_stream_finish(struct job_part *ps, size_t n, FILE *log, int grace_s);

/* "node2 (ranks 4-5)" or "this host (pid 123)" for messages. */
const char *job_part_name(const struct job_part *p, char *buf, size_t len);

#endif /* CRDBG_CRS_JOB_PART_H */
