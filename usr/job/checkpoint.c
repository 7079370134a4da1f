// SPDX-License-Identifier: GPL-2.0
/*
 * A job checkpoint at one coordinated cut. Every part runs `crdbg-part
 * checkpoint PID --part K/N --cid CID` on its node:
 *
 *   part  -> frozen                       every thread of its tree frozen
 *   coord -> dump                         (only once every part is frozen)
 *   part  -> dumped                       images written, the tree still frozen
 *   coord -> release                      (only once every part is dumped)
 *   part  -> stored                       its handle, metadata digest, parent, size
 *   coord -> commit | kill | abort        (abort: the part removes its handle)
 *
 * (the messages of <crdbg/job-part.h>; a part that fails says so in a
 * failed message with its errno and reason, and ends).
 *
 * Phase 1 freezes every part, phase 2 dumps them all, and no process of
 * the job runs again before every part is dumped (a rank released early
 * could send a message that lands in a peer's image but not in its own);
 * phase 3 keeps the parts (and ends the job with --kill) only when every
 * part is stored and the manifest is written; any failure calls every part off, so no handle
 * that looks valid is left on any node, and the job goes on.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "parts.h"

#define DEFAULT_TIMEOUT_S 300
/*
 * How long an aborted part may take to thaw or remove its part and end; a
 * silent part may be freezing, so it is given the same time.
 */
#define ABORT_GRACE_S 120

/* A part's stored step into its manifest record. */
static void stored_part(const struct job_part_stored *st, struct crs_job_part *p)
{
	memcpy(p->handle, st->handle, sizeof(p->handle));
	memcpy(p->meta_sha, st->meta_sha, sizeof(p->meta_sha));
	memcpy(p->parent, st->parent, sizeof(p->parent));
	p->bytes = st->bytes;
	memcpy(p->tty, st->tty, sizeof(p->tty));
	p->tty_rdev = st->tty_rdev;
	p->tty_dev = st->tty_dev;
}

static int failed_part(struct job_part *ps, size_t n, enum job_part_step step, int r,
		       char *err, size_t errlen)
{
	char name[160];

	for (size_t i = 0; i < n; i++) {
		if (job_part_at(&ps[i], step))
			continue;
		return crs_fail(err, errlen, r == -ETIMEDOUT ? r : -EIO, "failed on %s: %s",
				job_part_name(&ps[i], name, sizeof(name)),
				r == -ETIMEDOUT && !job_part_over(&ps[i]) ? "no answer in time" :
				ps[i].last_err[0] ? ps[i].last_err : "ended without a word");
	}
	return r;
}

static int start_parts(const struct crs_job_opts *o, const char *root, const char *cid,
		       const struct crs_job_target *t, size_t n, struct job_part *ps, char *err,
		       size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		char pid[16], part[32], *argv[20];
		char *opts[] = { "--part", part, "--cid", (char *)cid, NULL };
		int r;

		snprintf(pid, sizeof(pid), "%d", (int)t[i].pid);
		snprintf(part, sizeof(part), "%zu/%zu", i, n);
		job_part_argv(argv, "checkpoint", pid, opts, root, o);
		ps[i].index = i;
		ps[i].ranks = t[i].ranks;
		r = job_part_start(&ps[i], t[i].node, o->launch, argv, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

int crs_job_checkpoint(const struct crs_job_opts *o, const struct crs_job_target *t, size_t n,
		       char *ret_handle, size_t handle_len, char *err, size_t errlen)
{
	const char *root = crs_store_root(o->store);
	int timeout = o->timeout_s > 0 ? o->timeout_s : DEFAULT_TIMEOUT_S;
	struct crs_job j;
	struct job_part *ps;
	char host[CRS_NODE_MAX] = "";
	int r;

	if (!n || n > CRS_JOB_MAX_PARTS)
		return crs_fail(err, errlen, -EINVAL, "a job checkpoint needs 1 to %d parts",
				CRS_JOB_MAX_PARTS);
	r = crs_job_store_check(root, err, errlen);
	if (r)
		return r;
	crs_job_init(&j);
	r = crs_cid_new(j.cid, sizeof(j.cid));
	if (r)
		return crs_fail(err, errlen, r, "cannot make a computation id");
	snprintf(j.what, sizeof(j.what), "%s", o->what ? o->what : "-");
	j.has_owner = true;
	j.owner_uid = getuid();
	j.owner_gid = getgid();
	ps = calloc(n, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	job_parts_init(ps, n, o->transport);
	signal(SIGPIPE, SIG_IGN);
	gethostname(host, sizeof(host) - 1);

	r = start_parts(o, root, j.cid, t, n, ps, err, errlen);
	if (r)
		goto abort;
	r = job_parts_wait(ps, n, JOB_STEP_FROZEN, timeout, o->log);
	r = failed_part(ps, n, JOB_STEP_FROZEN, r, err, errlen);
	if (r)
		goto abort;
	job_parts_send(ps, n, JOB_ORDER_DUMP);
	r = job_parts_wait(ps, n, JOB_STEP_DUMPED, timeout, o->log);
	r = failed_part(ps, n, JOB_STEP_DUMPED, r, err, errlen);
	if (r)
		goto abort;
	if (o->log && o->verbose)
		fprintf(o->log, "crdbg: every part is dumped (%zu parts): releasing\n", n);
	job_parts_send(ps, n, JOB_ORDER_RELEASE);
	r = job_parts_wait(ps, n, JOB_STEP_STORED, timeout, o->log);
	r = failed_part(ps, n, JOB_STEP_STORED, r, err, errlen);
	if (r)
		goto abort;
	for (size_t i = 0; i < n; i++) {
		struct crs_job_part p = { 0 };
		stored_part(&ps[i].msg.stored, &p);
		snprintf(p.node, sizeof(p.node), "%s", t[i].node[0] ? t[i].node : host);
		snprintf(p.ranks, sizeof(p.ranks), "%s", t[i].ranks[0] ? t[i].ranks : "-");
		p.pid = (int)t[i].pid;
		snprintf(p.agents, sizeof(p.agents), "%s", t[i].agents);
		r = crs_job_add_part(&j, &p);
		if (r)
			goto abort;
	}
	r = crs_job_save(root, &j, err, errlen);
	if (r)
		goto abort;
	job_parts_send(ps, n, o->kill ? JOB_ORDER_KILL : JOB_ORDER_COMMIT);
	job_parts_finish(ps, n, o->log, timeout);
	snprintf(ret_handle, handle_len, "%s", j.handle);
	goto out;
abort:
	job_parts_send(ps, n, JOB_ORDER_ABORT);
	job_parts_finish(ps, n, o->log, ABORT_GRACE_S);
out:
	free(ps);
	crs_job_free(&j);
	return r;
}
