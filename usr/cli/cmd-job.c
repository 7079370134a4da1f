// SPDX-License-Identifier: GPL-2.0
/*
 * Job checkpoints on the command line (<crdbg/job.h>): the part side of
 * the coordinators' line protocol (checkpoint --part, restart --part),
 * the job targets of checkpoint --job, and the job rows of list.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli-job.h"

/*
 * The part's beat (<crdbg/job.h>, CRS_PART_BEAT_S): a thread that writes
 * "crdbg-part alive" until the part's last order. One write() of a few
 * bytes: a pipe never interleaves it with the step lines, each of which
 * stdout's fflush() writes whole.
 */
static pthread_mutex_t beat_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t beat_cond = PTHREAD_COND_INITIALIZER;
static pthread_t beat_thread;
static bool beating;

static void *beat_main(void *arg)
{
	static const char line[] = "crdbg-part alive\n";
	struct timespec at;

	(void)arg;
	pthread_mutex_lock(&beat_lock);
	clock_gettime(CLOCK_MONOTONIC, &at);
	while (beating && write(STDOUT_FILENO, line, sizeof(line) - 1) > 0) {
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

void cli_part_begin(void)
{
	sigset_t all, old;

	take_call_off_signals();

	/*
	 * Every signal blocked in the beat: the part's signals are the main
	 * thread's (libcrdbg's answer, CRDBG_RT_SIGNAL, is blocked there and
	 * waited for: delivered here it would kill the part).
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	beating = true;
	if (pthread_create(&beat_thread, NULL, beat_main, NULL))
		beating = false;	/* unheard: its coordinator waits as for an old part */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void cli_part_beat_stop(void)
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

/* The coordinator's orders: stdin, unless cli_part_orders_off_stdin() moved them. */
static FILE *orders;

int cli_part_orders_off_stdin(void)
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

/* One line from the coordinator; false at its end (it is gone). */
static bool read_order(char *buf, size_t len)
{
	if (called_off || !fgets(buf, (int)len, orders ? orders : stdin) || called_off)
		return false;
	buf[strcspn(buf, "\n")] = 0;
	return true;
}

int cli_part_frozen(void *arg)
{
	char order[64];

	(void)arg;
	printf("crdbg-part frozen\n");
	fflush(stdout);
	return read_order(order, sizeof(order)) && !strcmp(order, "dump") ? 0 : -1;
}

int cli_part_dumped(void *arg)
{
	char order[64];

	(void)arg;
	printf("crdbg-part dumped\n");
	fflush(stdout);
	return read_order(order, sizeof(order)) && !strcmp(order, "release") ? 0 : -1;
}

int cli_part_stored(const char *root, const char *handle, bool *kill_job)
{
	char order[64], hex[65], err[512];
	const struct crs_stdio *tty;
	unsigned long long bytes = 0;
	struct crs_meta m;
	uint8_t sha[32];
	int r;

	r = crs_job_part_digest(root, handle, sha, err, sizeof(err));
	if (r) {
		crs_store_remove(root, handle);
		cli_error("checkpoint: %s", err);
		return 1;
	}
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", sha[i]);
	/* Its chain link and size, for readers of the manifest on other nodes. */
	crs_meta_init(&m);
	if (!crs_store_load(root, handle, &m, err, sizeof(err)))
		for (size_t i = 0; i < m.nr_files; i++)
			bytes += m.files[i].size;
	printf("crdbg-part stored handle=%s meta=%s parent=%s bytes=%llu", handle, hex,
	       m.parent[0] ? m.parent : "-", bytes);
	/* the terminal its tree held its session on: parts of one come back on one */
	tty = crs_restart_terminal(&m);
	if (tty)
		printf(" tty=%" PRIx64 ":%" PRIx64 ":%s", tty->rdev, tty->dev, tty->link);
	printf("\n");
	crs_meta_free(&m);
	fflush(stdout);
	r = read_order(order, sizeof(order));
	cli_part_beat_stop();	/* the last order */
	if (r && (!strcmp(order, "commit") || !strcmp(order, "kill"))) {
		*kill_job = !strcmp(order, "kill");
		return 0;
	}
	crs_store_remove(root, handle);
	cli_error("checkpoint: the job's checkpoint was called off: part %s removed", handle);
	return 1;
}

int cli_part_hold(void *arg, const struct crs_meta *m, enum crs_hold_phase phase)
{
	static bool guarded;
	char order[64], err[512];
	int r;

	if (phase == CRS_HOLD_VERIFIED) {
		/* before any part of the job restores anything: see job-rstguard.c */
		if (crs_job_rst_guard(arg, m->handle, &guarded, err, sizeof(err)))
			cli_error("restart: warning: a connection to a peer restored later may be reset: %s",
				  err);
		printf("crdbg-part verified\n");
	}
	else
		printf("crdbg-part restored cid=%s parts=%u index=%u\n", m->cid[0] ? m->cid : "-",
		       m->cid_parts, m->cid_index);
	fflush(stdout);
	r = read_order(order, sizeof(order)) &&
	    !strcmp(order, phase == CRS_HOLD_VERIFIED ? "restore" : "release") ? 0 : -1;
	/* the last order: once released, the tree writes to this stdout too */
	if (r || phase == CRS_HOLD_RESTORED)
		cli_part_beat_stop();
	/* released (every part is back) or called off: resets may go again */
	if (guarded && (r || phase == CRS_HOLD_RESTORED)) {
		crs_job_rst_unguard();
		guarded = false;
	}
	return r;
}

/*
 * "PID", "NODE:PID" or "NODE:PID:RANKS", comma- or space-separated
 * ("4-5" in RANKS is a range; several ranks are "4-5+7").
 */
int cli_job_targets(const char *spec, struct crs_job_target **ret, size_t *ret_n)
{
	struct crs_job_target *t = NULL, *nt;
	char *copy = strdup(spec), *save = NULL, *tok;
	size_t n = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		char *pid = strchr(tok, ':'), *ranks = NULL, *end;
		long v;

		nt = realloc(t, (n + 1) * sizeof(*t));
		if (!nt)
			goto bad;
		t = nt;
		memset(&t[n], 0, sizeof(t[n]));
		if (pid) {
			*pid++ = 0;
			ranks = strchr(pid, ':');
			if (ranks)
				*ranks++ = 0;
			if (!crs_cid_valid(tok))
				goto bad;
			snprintf(t[n].node, sizeof(t[n].node), "%s", tok);
		} else {
			pid = tok;
		}
		errno = 0;
		v = strtol(pid, &end, 10);
		if (errno || *end || v <= 0 || v > 0x3fffffff)
			goto bad;
		t[n].pid = (pid_t)v;
		snprintf(t[n].ranks, sizeof(t[n].ranks), "%s", ranks && *ranks ? ranks : "-");
		for (char *c = t[n].ranks; *c; c++)
			if (*c == '+')
				*c = ',';
		n++;
	}
	free(copy);
	if (!n) {
		free(t);
		return -EINVAL;
	}
	*ret = t;
	*ret_n = n;
	return 0;
bad:
	free(copy);
	free(t);
	return -EINVAL;
}

struct job_list_ctx {
	const char *root;
	bool json;
	bool comma;	/* JSON: an element came before */
	int n;		/* rows so far */
};

/* The job checkpoint an incremental job checkpoint builds on, or "-". */
static void parent_job(const char *root, const struct crs_job *j, char *out, size_t len)
{
	snprintf(out, len, "-");
	for (size_t i = 0; i < j->nr_parts; i++)
		if (j->parts[i].parent[0] &&
		    !crs_job_owning(root, j->parts[i].parent, out, len) && out[0])
			return;
	snprintf(out, len, "-");
}

static void job_row(const char *handle, const struct crs_job *j, const char *problem, void *arg)
{
	struct job_list_ctx *c = arg;
	char when[32] = "-", nodes[256] = "", ranks[256] = "", parent[CRS_HANDLE_MAX] = "-";
	uint64_t bytes = 0;
	size_t i, nl = 0, rl = 0;

	if (j) {
		time_t t = (time_t)j->time;
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		for (i = 0; i < j->nr_parts; i++) {
			/* Each node once, in part order. */
			bool seen = false;

			for (size_t k = 0; k < i; k++)
				seen |= !strcmp(j->parts[k].node, j->parts[i].node);
			if (!seen && nl < sizeof(nodes) - 2)
				nl += (size_t)snprintf(nodes + nl, sizeof(nodes) - nl, "%s%s",
						       nl ? "," : "", j->parts[i].node);
			if (strcmp(j->parts[i].ranks, "-") && rl < sizeof(ranks) - 2)
				rl += (size_t)snprintf(ranks + rl, sizeof(ranks) - rl, "%s%s",
						       rl ? "," : "", j->parts[i].ranks);
			bytes += j->parts[i].bytes;
		}
		parent_job(c->root, j, parent, sizeof(parent));
	}
	if (c->json) {
		printf("%s\n  {\"job\": \"%s\", \"valid\": %s", c->comma ? "," : "", handle,
		       j ? "true" : "false");
		if (j) {
			printf(", \"time\": \"%s\", \"cid\": \"%s\", \"bytes\": %llu, \"parent\": ",
			       when, j->cid, (unsigned long long)bytes);
			printf(strcmp(parent, "-") ? "\"%s\"" : "null", parent);
			printf(", \"parts\": [");
			for (i = 0; i < j->nr_parts; i++)
				printf("%s{\"node\": \"%s\", \"ranks\": \"%s\", \"handle\": \"%s\", \"bytes\": %llu}",
				       i ? ", " : "", j->parts[i].node, j->parts[i].ranks,
				       j->parts[i].handle, (unsigned long long)j->parts[i].bytes);
			printf("]");
		}
		printf("}");
		c->comma = true;
	} else {
		if (!c->n)
			printf("\n%-32s %-20s %5s  %-24s %-12s %-40s %s\n", "JOB", "TIME", "PARTS",
			       "NODES", "RANKS", "CID", "PARENT");
		if (j)
			printf("%-32s %-20s %5zu  %-24s %-12s %-40s %s\n", handle, when, j->nr_parts,
			       nodes, rl ? ranks : "-", j->cid, parent);
		else
			printf("%-32s INVALID: %s\n", handle, problem);
	}
	c->n++;
}

int cli_list_jobs(const char *root, bool json, bool any_before)
{
	struct job_list_ctx c = { .root = root, .json = json, .comma = json && any_before };

	return crs_job_list(root, job_row, &c);
}
