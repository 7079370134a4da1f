// SPDX-License-Identifier: GPL-2.0
/*
 * The part worker (<crdbg/job-part.h>): the part's side of the protocol,
 * which the part program (crdbg-part) runs on the part's node. Its
 * stdout carries only the codec's messages, one write() each, so the
 * beat's thread never interleaves with a step; its orders come on stdin.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <crdbg/job.h>
#include <crdbg/job-part.h>

#include "agent.h"
#include "proc.h"

/* One message on stdout, whole: 0 or -errno. */
static int say(const struct job_part_msg *m)
{
	char line[JOB_PART_LINE_MAX + 1];
	int n = job_part_msg_format(m, line, sizeof(line) - 1);

	if (n < 0)
		return n;
	line[n++] = '\n';
	fflush(stdout);
	return write(STDOUT_FILENO, line, (size_t)n) == n ? 0 : -EPIPE;
}

static int say_step(enum job_part_step step)
{
	struct job_part_msg m = { .step = step };

	return say(&m);
}

void job_worker_failed(int err, const char *fmt, ...)
{
	struct job_part_msg m;
	char why[JOB_PART_WHY_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	job_part_msg_failed(&m, err, "%s", why);
	say(&m);
}

/*
 * The part's beat (<crdbg/job.h>, CRS_PART_BEAT_S): a thread that writes
 * the alive step until the part's last order. One write() of a few
 * bytes: a pipe never interleaves it with the other steps, each written
 * whole by say().
 */
static pthread_mutex_t beat_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t beat_cond = PTHREAD_COND_INITIALIZER;
static pthread_t beat_thread;
static bool beating;

static void *beat_main(void *arg)
{
	const char *line = arg;
	struct timespec at;

	pthread_mutex_lock(&beat_lock);
	clock_gettime(CLOCK_MONOTONIC, &at);
	while (beating && write(STDOUT_FILENO, line, strlen(line)) > 0) {
		at.tv_sec += CRS_PART_BEAT_S;
		while (beating &&
		       pthread_cond_clockwait(&beat_cond, &beat_lock, CLOCK_MONOTONIC, &at) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&beat_lock);
	return NULL;
}

/*
 * SIGTERM, SIGHUP or SIGINT (a coordinator that took this part's node as
 * lost has its launcher pass SIGTERM on) call the part off like an
 * "abort" or a closed stdin: no SA_RESTART, so that a wait for an order
 * ends at once, and read_order() says no order from then on. The abort
 * paths thaw what the part froze, or kill what it restored and holds.
 */
static volatile sig_atomic_t called_off;

static void on_call_off(int sig)
{
	(void)sig;
	called_off = 1;
}

static void take_call_off_signals(void)
{
	struct sigaction sa = { .sa_handler = on_call_off };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

void job_worker_begin(void)
{
	static char alive[64];
	struct job_part_msg m = { .step = JOB_STEP_ALIVE };
	sigset_t all, old;
	int n;

	take_call_off_signals();
	n = job_part_msg_format(&m, alive, sizeof(alive) - 1);
	if (n < 0)
		return;
	alive[n] = '\n';

	/*
	 * Every signal blocked in the beat: the part's signals are the main
	 * thread's (libcrdbg's answer, CRDBG_RT_SIGNAL, is blocked there and
	 * waited for: delivered here it would kill the part).
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	beating = true;
	if (pthread_create(&beat_thread, NULL, beat_main, alive))
		beating = false;	/* unheard: its coordinator waits as for an old part */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void job_worker_beat_stop(void)
{
	pthread_mutex_lock(&beat_lock);
	if (!beating) {
		pthread_mutex_unlock(&beat_lock);
		return;
	}
	beating = false;
	pthread_cond_signal(&beat_cond);
	pthread_mutex_unlock(&beat_lock);
	pthread_join(beat_thread, NULL);
}

/* The coordinator's orders: stdin, unless job_worker_orders_off_stdin() moved them. */
static FILE *orders;

int job_worker_orders_off_stdin(void)
{
	int fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 10), null;

	if (fd < 0)
		return -errno;
	null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0) {
		int e = errno;

		if (null >= 0)
			close(null);
		close(fd);
		return -e;
	}
	if (null != STDIN_FILENO)
		close(null);
	orders = fdopen(fd, "r");
	if (!orders) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

/*
 * The coordinator's next order: false at its end (it is gone), when the
 * part is called off, or for a line that is no order.
 */
static bool read_order(enum job_part_order *ret)
{
	char buf[64];

	if (called_off || !fgets(buf, (int)sizeof(buf), orders ? orders : stdin) || called_off)
		return false;
	return !job_part_order_parse(buf, strlen(buf), ret);
}

/* step said, then the order that goes on: 0, else -1 (called off). */
static int step_then(enum job_part_step step, enum job_part_order go_on)
{
	enum job_part_order o;

	say_step(step);
	return read_order(&o) && o == go_on ? 0 : -1;
}

int job_worker_frozen(void *arg)
{
	(void)arg;
	return step_then(JOB_STEP_FROZEN, JOB_ORDER_DUMP);
}

int job_worker_dumped(void *arg)
{
	(void)arg;
	return step_then(JOB_STEP_DUMPED, JOB_ORDER_RELEASE);
}

int job_worker_stored(const char *root, const char *handle, bool *kill_job)
{
	struct job_part_msg m = { .step = JOB_STEP_STORED };
	struct job_part_stored *st = &m.stored;
	const struct crs_stdio *tty;
	enum job_part_order o;
	char err[512];
	struct crs_meta meta;
	bool ordered;
	int r;

	r = crs_store_meta_digest(root, handle, st->meta_sha, err, sizeof(err));
	if (r) {
		crs_store_remove(root, handle);
		job_worker_failed(r, "%s", err);
		return r;
	}
	snprintf(st->handle, sizeof(st->handle), "%s", handle);
	/* Its chain link and size, for readers of the manifest on other nodes. */
	crs_meta_init(&meta);
	if (!crs_store_load(root, handle, &meta, err, sizeof(err))) {
		for (size_t i = 0; i < meta.nr_files; i++)
			st->bytes += meta.files[i].size;
		snprintf(st->parent, sizeof(st->parent), "%s", meta.parent);
	}
	/* the terminal its tree held its session on: parts of one come back on one */
	tty = crs_restart_terminal(&meta);
	if (tty) {
		/* a path too long for a manifest is refused below */
		snprintf(st->tty, sizeof(st->tty), "%.*s", (int)sizeof(st->tty) - 1, tty->link);
		if (strlen(tty->link) >= sizeof(st->tty))
			st->tty[0] = '!';
		st->tty_rdev = tty->rdev;
		st->tty_dev = tty->dev;
	}
	crs_meta_free(&meta);
	r = say(&m);
	if (r) {
		crs_store_remove(root, handle);
		job_worker_failed(r, "part %s cannot be reported%s: %s", handle,
				  tty ? " (its terminal's path is no manifest's)" : "",
				  strerror(-r));
		job_worker_beat_stop();
		return r;
	}
	ordered = read_order(&o);
	job_worker_beat_stop();	/* the last order */
	if (ordered && (o == JOB_ORDER_COMMIT || o == JOB_ORDER_KILL)) {
		*kill_job = o == JOB_ORDER_KILL;
		return 0;
	}
	crs_store_remove(root, handle);
	job_worker_failed(ECANCELED, "the job's checkpoint was called off: part %s removed",
			  handle);
	return -ECANCELED;
}

/*
 * A launcher's agents in the restored tree (crs_restart_opts.agents): the
 * release leaves them in their group stop; a thread of their own (their
 * tracer) traps them there and waits for the coordinator's end-agents,
 * sent once the job's other parts, the daemons the agents stood for,
 * have ended. An end of file instead (the coordinator gone, the restart
 * called off) kills them: the launcher sees its daemons lost.
 */
#define AGENTS_MAX 16
#define AGENT_STOP_WAIT_MS 60000

static const char *part_agents;
static pthread_t agents_thread;

static size_t parse_agents(const char *list, pid_t *pids)
{
	size_t n = 0;

	for (const char *p = list; p && *p && n < AGENTS_MAX; p += strcspn(p, ","), p += *p == ',')
		pids[n++] = (pid_t)atoi(p);
	return n;
}

/* The release put pid in its group stop (CRIU detached it with SIGSTOP). */
static bool wait_stopped(pid_t pid)
{
	struct timespec nap = { .tv_nsec = 5 * 1000 * 1000 };

	for (int waited = 0; waited < AGENT_STOP_WAIT_MS; waited += 5) {
		if (crs_proc_stopped(pid))
			return true;
		nanosleep(&nap, NULL);
	}
	return false;
}

static void *agents_main(void *arg)
{
	struct crs_agent agents[AGENTS_MAX];
	pid_t pids[AGENTS_MAX];
	size_t n = parse_agents(arg, pids), held = 0, i;
	char line[64], err[256];
	int code = -1;

	for (i = 0; i < n; i++) {
		if (!wait_stopped(pids[i])) {
			fprintf(stderr, "crdbg: restart: agent %d never stopped at the release: killed\n",
				pids[i]);
			kill(pids[i], SIGKILL);
			continue;
		}
		if (crs_agent_seize(&agents[held], pids[i], err, sizeof(err))) {
			fprintf(stderr, "crdbg: restart: %s: killed\n", err);
			kill(pids[i], SIGKILL);
			continue;
		}
		held++;
	}
	while (code < 0 && fgets(line, (int)sizeof(line), orders ? orders : stdin))
		if (job_part_end_agents_parse(line, strlen(line), &code))
			code = -1;	/* no order of this time: wait for the one */
	for (i = 0; i < held; i++) {
		if (code < 0) {
			crs_agent_kill(&agents[i]);
		} else if (crs_agent_end(&agents[i], code, AGENT_STOP_WAIT_MS, err, sizeof(err))) {
			fprintf(stderr, "crdbg: restart: %s\n", err);
		}
	}
	return NULL;
}

void job_worker_set_agents(const char *agents)
{
	part_agents = agents;
}

/* After the release: the agents' thread, every signal blocked in it. */
static void start_agents(void)
{
	sigset_t all, old;

	if (!part_agents || !*part_agents)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&agents_thread, NULL, agents_main, (void *)part_agents))
		fprintf(stderr, "crdbg: restart: no thread for the launcher's agents: they stay stopped\n");
	else
		pthread_detach(agents_thread);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int job_worker_hold(void *arg, const struct crs_meta *m, enum crs_hold_phase phase)
{
	struct job_part_msg msg = { .step = JOB_STEP_VERIFIED };
	static bool guarded;
	enum job_part_order o;
	char err[512];
	int r;

	if (phase == CRS_HOLD_VERIFIED) {
		/* before any part of the job restores anything: see rstguard.c */
		if (crs_job_rst_guard(arg, m->handle, &guarded, err, sizeof(err)))
			fprintf(stderr, "crdbg: restart: warning: a connection to a peer restored later may be reset: %s\n",
				err);
	} else {
		msg.step = JOB_STEP_RESTORED;
		snprintf(msg.restored.cid, sizeof(msg.restored.cid), "%s", m->cid);
		msg.restored.parts = m->cid_parts;
		msg.restored.index = m->cid_index;
	}
	say(&msg);
	r = read_order(&o) &&
	    o == (phase == CRS_HOLD_VERIFIED ? JOB_ORDER_RESTORE : JOB_ORDER_RELEASE) ? 0 : -1;
	/* the last order: once released, the tree writes to this stdout too */
	if (r || phase == CRS_HOLD_RESTORED)
		job_worker_beat_stop();
	/* released (every part is back) or called off: resets may go again */
	if (guarded && (r || phase == CRS_HOLD_RESTORED)) {
		crs_job_rst_unguard();
		guarded = false;
	}
	if (!r && phase == CRS_HOLD_RESTORED)
		start_agents();
	return r;
}


