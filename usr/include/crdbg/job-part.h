/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part protocol of a job checkpoint or restart (<crdbg/job.h>): what a
 * part worker on a node says to its coordinator, and what it is told. One
 * message a line, in both directions, whatever carries it (a pipe to a
 * process started here or through srun or ssh, the socket of a
 * `crdbg restart JOB --join N`, a debug session's servers). This header
 * and its codec (usr/job/part-msg.c) are the protocol's one definition:
 * every end formats and parses through them.
 *
 * A part's messages ("steps"), each line "crdbg-part STEP [KEY=VALUE...]":
 *
 *   alive                                    its beat, every CRS_PART_BEAT_S
 *   frozen                                   checkpoint: every thread frozen
 *   dumped                                   checkpoint: images written, still frozen
 *   stored handle=H meta=SHA256 parent=P|- bytes=N [tty=RDEV:DEV:PATH]
 *                                            checkpoint: the part is in its store
 *   verified                                 restart: images and chain intact
 *   restored cid=C|- parts=N index=K         restart: restored and held
 *   task pid=P rank=R|-                      a Slurm node's task (one line each)
 *   exit status=S                            a joined part ended with wait status S
 *   failed errno=E why=TEXT                  it failed (E a positive errno) and why;
 *                                            TEXT is the rest of the line
 *
 * The coordinator's orders, one word a line:
 *
 *   checkpoint: frozen -> dump, dumped -> release, stored -> commit | kill | abort
 *   restart:    verified -> restore, restored -> release | abort
 *
 * and, to a restart part that holds a launcher's agents (--agents, the
 * srun or ssh mpirun started for its daemons: usr/crs/agent.h), once
 * every other part has ended:
 *
 *   end-agents code=C                        C (0-255): the highest exit
 *                                            code of the other parts
 *
 * A line without the "crdbg-part " prefix is none of the protocol's (a
 * restored program's output, which a restart part stands in for).
 */
#ifndef CRDBG_JOB_PART_H
#define CRDBG_JOB_PART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <crdbg/crs.h>

#define JOB_PART_VERSION	1
#define JOB_PART_PREFIX		"crdbg-part "
/* The longest line either side sends or accepts, without its newline. */
#define JOB_PART_LINE_MAX	1024
#define JOB_PART_WHY_MAX	512
#define JOB_PART_RANK_MAX	32
#define JOB_PART_TTY_MAX	32	/* a manifest's CRS_TTY_MAX */

enum job_part_step {
	JOB_STEP_UNSPEC,
	JOB_STEP_ALIVE,
	JOB_STEP_FROZEN,
	JOB_STEP_DUMPED,
	JOB_STEP_STORED,
	JOB_STEP_VERIFIED,
	JOB_STEP_RESTORED,
	JOB_STEP_TASK,
	JOB_STEP_EXIT,
	JOB_STEP_FAILED,
	__JOB_STEP_LAST
};
#define JOB_STEP_MAX (__JOB_STEP_LAST - 1)

enum job_part_order {
	JOB_ORDER_UNSPEC,
	JOB_ORDER_DUMP,
	JOB_ORDER_RELEASE,
	JOB_ORDER_COMMIT,
	JOB_ORDER_KILL,
	JOB_ORDER_ABORT,
	JOB_ORDER_RESTORE,
	__JOB_ORDER_LAST
};
#define JOB_ORDER_MAX (__JOB_ORDER_LAST - 1)

struct job_part_stored {
	char handle[CRS_HANDLE_MAX];
	uint8_t meta_sha[32];		/* SHA-256 of its metadata file */
	char parent[CRS_HANDLE_MAX];	/* "" for a full image */
	uint64_t bytes;
	char tty[JOB_PART_TTY_MAX];	/* "" for none */
	uint64_t tty_rdev, tty_dev;
};

struct job_part_restored {
	char cid[CRS_CID_MAX];		/* "" when its checkpoint has none */
	unsigned int parts, index;
};

struct job_part_task {
	pid_t pid;
	char rank[JOB_PART_RANK_MAX];	/* "-" if not known */
};

struct job_part_failed {
	int err;			/* a positive errno */
	char why[JOB_PART_WHY_MAX];	/* one line */
};

/* One message of a part; the member of the union its step names. */
struct job_part_msg {
	enum job_part_step step;
	union {
		struct job_part_stored stored;
		struct job_part_restored restored;
		struct job_part_task task;
		int exit_status;	/* a wait status */
		struct job_part_failed failed;
	};
};

/* "frozen", ...; NULL for a step out of range. */
const char *job_part_step_name(enum job_part_step step);
const char *job_part_order_name(enum job_part_order order);

/*
 * m as its line, with the prefix, without a newline, into buf: its
 * length, or -EINVAL for a message that cannot be sent (an invalid
 * handle, a step out of range), -ENOSPC when buf is too short. A failure's
 * reason has its control characters turned into spaces and is cut to
 * JOB_PART_WHY_MAX - 1 bytes.
 */
int job_part_msg_format(const struct job_part_msg *m, char *buf, size_t len);

/*
 * A line (its newline, if any, is ignored) into *ret: 0; -ENOMSG for a
 * line that is none of the protocol's (no prefix); -EBADMSG for a
 * malformed one. Accepts any bytes; *ret is untouched on failure.
 */
int job_part_msg_parse(const char *line, size_t len, struct job_part_msg *ret);

/* An order's line (no newline) into buf: its length, -EINVAL or -ENOSPC. */
int job_part_order_format(enum job_part_order order, char *buf, size_t len);

/* An order's line (newline ignored): 0 and *ret, or -EBADMSG. */
int job_part_order_parse(const char *line, size_t len, enum job_part_order *ret);

/* The end-agents order's line for code (0-255): its length, -EINVAL or -ENOSPC. */
int job_part_end_agents_format(int code, char *buf, size_t len);

/* An end-agents order (newline ignored): 0 and *code, or -EBADMSG. */
int job_part_end_agents_parse(const char *line, size_t len, int *code);

/* Whether s is a restart part's --node-roots or --agents: "PID,PID..." or "-". */
bool job_part_roots_valid(const char *s);

/* A failure message: err a positive or negative errno, why as printf. */
void job_part_msg_failed(struct job_part_msg *m, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The part program, crdbg-part (usr/part/), which every transport runs on
 * the part's node, one process a part:
 *
 *   crdbg-part checkpoint PID --part K/N --cid CID [--debug] [--full]
 *                         [--no-pre-dump]
 *   crdbg-part restart PART --expect-meta SHA --node-roots PID,...|-
 *                      [--agents PID,...] [--terminal-fd FD] [--debug]
 *   crdbg-part verify PART [--expect-meta SHA]
 *   crdbg-part rm PART
 *   crdbg-part tasks JOBID     (this node's tasks of a Slurm job)
 *
 * each with [--store ROOT] [--backend kmod|ptrace|auto] [-v]. Its stdout
 * carries only the messages above; a bad command line is a failed step
 * (EINVAL) too, and exit status 2.
 */
#define JOB_PART_PROGRAM	"crdbg-part"

/*
 * Its path, into buf: in $CRDBG_SDM_BINDIR, else beside this program's
 * own (crdbg-server's directory, build/sdm from build/crdbg,
 * PREFIX/libexec/crdbg from PREFIX/bin/crdbg). 0, or -errno (-ENOENT:
 * none there).
 */
int job_part_program(char *buf, size_t len);

/*
 * The part worker (usr/job/worker.c): the part's end of the protocol on
 * its node, in crdbg-part. It writes only the messages above on stdout
 * and reads its orders on stdin.
 */

/*
 * Before the part's first step: its beat starts, and SIGTERM, SIGHUP and
 * SIGINT call it off as an abort would. The beat stops at its last order
 * (job_worker_stored(), and job_worker_hold() once restored or called
 * off).
 */
void job_worker_begin(void);
void job_worker_beat_stop(void);

/* The failed step: err a positive or negative errno, the reason as printf. */
void job_worker_failed(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A checkpoint part: crs_checkpoint_opts.frozen and .dumped (arg unused). */
int job_worker_frozen(void *arg);
int job_worker_dumped(void *arg);

/*
 * Once stored: the stored step, then the last order. 0 with *kill_job
 * (commit or kill), else the part is removed, its failure said, -errno.
 */
int job_worker_stored(const char *root, const char *handle, bool *kill_job);

/*
 * A restart part's fd 0 is its coordinator's order channel, and a
 * restart hands its own stdio down (criu inherits it; an outside stdin
 * pipe of the tree is stood in for by fd 0, tree-stdio.h): the orders
 * move to a close-on-exec fd above 9 and fd 0 becomes /dev/null, so a
 * restored rank reads end of file, never the orders. 0 or -errno.
 */
int job_worker_orders_off_stdin(void);

/*
 * A restart part whose tree holds a launcher's agents ("PID,PID", or
 * NULL): once released, they are trapped and ended on the end-agents
 * order (usr/crs/agent.h). Before job_worker_hold() is first called.
 */
void job_worker_set_agents(const char *agents);

/* A restart part: crs_restart_opts.hold, arg the store's root. */
int job_worker_hold(void *arg, const struct crs_meta *m, enum crs_hold_phase phase);

/*
 * A whole checkpoint part of o->pid's tree, in crdbg-part or in the
 * node's service for a user: its beat, o's frozen and dumped (set here),
 * the stored step and its last order; on kill, the tree ended. The exit
 * status of the part: 0, or 1 with its failure said. The handle kept
 * (on 0) into handle.
 */
int job_worker_checkpoint(struct crs_checkpoint_opts *o, char *handle, size_t len);

/*
 * A whole restart part (o's hold and hold_arg set here, its orders moved
 * off stdin): the exit status of the part, the restored tree's (128 + a
 * signal's number), or 1 with its failure said.
 */
int job_worker_restart(struct crs_restart_opts *o);

#endif /* CRDBG_JOB_PART_H */
