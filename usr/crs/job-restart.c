// SPDX-License-Identifier: GPL-2.0
/*
 * Restart of a job checkpoint with the barrier of seed 003. Every part
 * runs `crdbg restart PART --part --expect-meta SHA` on its node:
 *
 *   part  -> "crdbg-part verified"        images and chain intact, pids free
 *   coord -> "restore"                    (only once every part verified)
 *   part  -> "crdbg-part restored cid=C parts=N index=K"
 *                                         restored, held: no instruction run
 *   coord -> "release" | "abort"
 *
 * The coordinator adopts the first CID a restored part reports and
 * releases only when every counted part reported it; a foreign or missing
 * CID, a wrong count or a part that never comes aborts every part (a held
 * tree is killed). A part whose stdin closes (we died) aborts itself.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "error.h"
#include "job-part.h"
#include "sha256.h"

#define DEFAULT_TIMEOUT_S 180
/* How long an aborted part may take to kill its held tree and end. */
#define ABORT_GRACE_S 120

struct reported {
	char cid[CRS_CID_MAX];
	unsigned int parts, index;
};

static bool parse_restored(const char *step, struct reported *r)
{
	char cid[CRS_CID_MAX + 1];

	if (sscanf(step, "restored cid=%64s parts=%u index=%u", cid, &r->parts, &r->index) != 3)
		return false;
	r->cid[0] = 0;
	if (!strcmp(cid, "-"))
		return true;	/* no CID: the caller says so */
	if (!crs_cid_valid(cid))
		return false;
	memcpy(r->cid, cid, strlen(cid) + 1);
	return true;
}

/* Name every part not at step (or the first that failed) into err. */
static int not_at(struct job_part *ps, size_t n, const char *step, int r, const char *what,
		  char *err, size_t errlen)
{
	char names[1024] = "", name[160];
	size_t len = 0, i, missing = 0;

	for (i = 0; i < n; i++) {
		if (job_part_at(&ps[i], step))
			continue;
		if (ps[i].out < 0)	/* it ended: its own reason says most */
			return crs_fail(err, errlen, -EIO, "%s: %s: %s", what,
					job_part_name(&ps[i], name, sizeof(name)),
					ps[i].last_err[0] ? ps[i].last_err : "ended without a word");
		if (len < sizeof(names) - 2)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						missing ? ", " : "",
						job_part_name(&ps[i], name, sizeof(name)));
		missing++;
	}
	return crs_fail(err, errlen, r ? r : -ETIMEDOUT, "%s: %zu part%s never reported (%s)",
			what, missing, missing == 1 ? "" : "s", names);
}

/* Every restored part carries the adopted CID, the count and its own index. */
static int check_barrier(const struct crs_job *j, struct job_part *ps, char *err, size_t errlen)
{
	struct reported first = { 0 }, r;
	char name[160];
	size_t i;

	for (i = 0; i < j->nr_parts; i++) {
		if (!parse_restored(ps[i].step, &r))
			return crs_fail(err, errlen, -EBADMSG, "%s sent a malformed report",
					job_part_name(&ps[i], name, sizeof(name)));
		if (!r.cid[0])
			return crs_fail(err, errlen, -EBADMSG,
					"%s has no computation id: it was not checkpointed as a part of this job",
					job_part_name(&ps[i], name, sizeof(name)));
		if (!first.cid[0])
			first = r;	/* the first CID seen is the computation's */
		if (strcmp(r.cid, first.cid))
			return crs_fail(err, errlen, -EBADMSG,
					"%s belongs to computation %s, not %s: a part of another job",
					job_part_name(&ps[i], name, sizeof(name)), r.cid, first.cid);
		if (r.parts != j->nr_parts || r.index != i)
			return crs_fail(err, errlen, -EBADMSG,
					"%s is part %u of %u, the job has %zu parts and expects it as part %zu",
					job_part_name(&ps[i], name, sizeof(name)), r.index, r.parts,
					j->nr_parts, i);
	}
	if (strcmp(first.cid, j->cid))
		return crs_fail(err, errlen, -EBADMSG,
				"the parts belong to computation %s, the job's manifest to %s",
				first.cid, j->cid);
	return 0;
}

static void send_all(struct job_part *ps, size_t n, const char *line)
{
	for (size_t i = 0; i < n; i++)
		job_part_send(&ps[i], line);
}

static int start_parts(const struct crs_job_opts *o, const char *root, const struct crs_job *j,
		       struct job_part *ps, char *err, size_t errlen)
{
	char hex[CRS_SHA256_HEX];
	size_t i;
	int r;

	for (i = 0; i < j->nr_parts; i++) {
		char *argv[16], *opts[] = { "--part", "--expect-meta", hex, NULL };

		crs_sha256_hex(j->parts[i].meta_sha, hex);
		job_part_argv(argv, "restart", j->parts[i].handle, opts, root, o);
		ps[i].index = i;
		ps[i].ranks = j->parts[i].ranks;
		r = job_part_start(&ps[i], j->parts[i].node, o->launch, argv, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

static int part_status(struct job_part *ps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ps[i].status != 0)
			return ps[i].status;
	return 0;
}

int crs_job_restart(const struct crs_job_opts *o, int *ret_status, char *err, size_t errlen)
{
	const char *root = crs_store_root(o->store);
	int timeout = o->timeout_s > 0 ? o->timeout_s : DEFAULT_TIMEOUT_S;
	struct job_part *ps;
	struct crs_job j;
	size_t n;
	int r;

	r = crs_job_load(root, o->handle, &j, err, errlen);
	if (r)
		return r;
	n = j.nr_parts;
	ps = calloc(n, sizeof(*ps));
	if (!ps) {
		crs_job_free(&j);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ps[i].in = ps[i].out = ps[i].err = ps[i].status = -1;
	signal(SIGPIPE, SIG_IGN);
	r = start_parts(o, root, &j, ps, err, errlen);
	if (r)
		goto abort;

	r = job_parts_wait(ps, n, "verified", timeout, o->log);
	for (size_t i = 0; !r && i < n; i++)
		if (!job_part_at(&ps[i], "verified"))
			r = -EIO;
	if (r) {
		r = not_at(ps, n, "verified", r, "refused, nothing was restored", err, errlen);
		goto abort;
	}
	send_all(ps, n, "restore");
	r = job_parts_wait(ps, n, "restored", timeout, o->log);
	for (size_t i = 0; !r && i < n; i++)
		if (!job_part_at(&ps[i], "restored"))
			r = -EIO;
	if (r) {
		r = not_at(ps, n, "restored", r, "nothing was released", err, errlen);
		goto abort;
	}
	r = check_barrier(&j, ps, err, errlen);
	if (r)
		goto abort;
	if (o->log && o->verbose)
		fprintf(o->log, "crdbg: every part of %s is back (computation %s, %zu parts): releasing\n",
			j.handle, j.cid, n);
	send_all(ps, n, "release");
	job_parts_finish(ps, n, o->log, 0);	/* the job runs as long as it runs */
	*ret_status = part_status(ps, n);
	goto out;
abort:
	send_all(ps, n, "abort");
	job_parts_kill_silent(ps, n);	/* not even verified: nothing restored */
	job_parts_finish(ps, n, o->log, ABORT_GRACE_S);
out:
	free(ps);
	crs_job_free(&j);
	return r;
}
