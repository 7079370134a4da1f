// SPDX-License-Identifier: GPL-2.0
/*
 * A whole part of a job checkpoint or restart (<crdbg/job-part.h>): the
 * worker's steps around libcrs's one operation, the same in crdbg-part
 * and in the node's service, which runs a user's part.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <crdbg/crs.h>
#include <crdbg/job.h>
#include <crdbg/job-part.h>

/* The job was checkpointed whole: end this part's processes. */
static void kill_part(const char *root, const char *handle)
{
	struct crs_meta m;
	char err[256];

	crs_meta_init(&m);
	if (crs_store_load(root, handle, &m, err, sizeof(err)))
		return;
	crs_kill_tree(&m);
	crs_meta_free(&m);
}

int job_worker_checkpoint(struct crs_checkpoint_opts *o, char *handle, size_t len)
{
	char err[1024];
	bool kill_job = false;
	int r;

	o->frozen = job_worker_frozen;
	o->dumped = job_worker_dumped;
	job_worker_begin();
	r = crs_checkpoint(o, handle, len, err, sizeof(err));
	if (r) {
		job_worker_failed(r, "%s", err);
		return 1;
	}
	r = job_worker_stored(crs_store_root(o->store), handle, &kill_job);
	if (!r && kill_job)
		kill_part(crs_store_root(o->store), handle);
	return r ? 1 : 0;
}

int job_worker_restart(struct crs_restart_opts *o)
{
	char err[1024];
	int r, st = 0;

	job_worker_set_agents(o->agents);
	o->hold = job_worker_hold;
	o->hold_arg = (void *)crs_store_root(o->store);
	o->relay_stdin = false;	/* a part's stdin is its coordinator's */
	r = job_worker_orders_off_stdin();
	if (r) {
		job_worker_failed(r, "a part reads its coordinator's orders on stdin: %s",
				  strerror(-r));
		return 1;
	}
	job_worker_begin();
	r = crs_restart(o, &st, err, sizeof(err));
	if (r) {
		job_worker_failed(r, "%s", err);
		return 1;
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}
