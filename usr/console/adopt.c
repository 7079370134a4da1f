// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg debug --restart JOB: a session whose ranks are the processes of a
 * job checkpoint, restarted for it.
 *
 * The manifest names every part's node and the pid of its tree's root,
 * which CRIU gives back on restart: rank i is part i's root. So the
 * servers are placed (one per node, ranks.c) and started before anything
 * is restored; then checkpoint.c restarts the job over them (every part
 * restored on its node by the server there, released together through
 * the barrier), attaches each rank's gdb once its part saw the rank's
 * marker and takes every thread back to its pc, as after a restart
 * inside a session.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <crdbg/job.h>
#include "adopt.h"
#include "checkpoint.h"
#include "ranks.h"
#include "session.h"

/* How a command starts on another node: the user's template, or a step of the allocation. */
static char *node_launch(char *err, size_t errlen)
{
	const char *tmpl = getenv("CRDBG_SERVER_LAUNCH"), *job = getenv("SLURM_JOB_ID");
	char *l = NULL;

	if (tmpl && *tmpl)
		return strdup(tmpl);
	if (!job || !*job || strspn(job, "0123456789") != strlen(job)) {
		snprintf(err, errlen, "the job's parts are on other nodes: run crdbg inside a Slurm allocation of them (salloc) or set CRDBG_SERVER_LAUNCH to a template that starts {cmd} on {host}");
		return NULL;
	}
	if (asprintf(&l, "srun --overlap --jobid=%s -w {host} -N1 -n1 --mpi=none --quiet --kill-on-bad-exit=0 {cmd}",
		     job) < 0)
		return NULL;
	return l;
}

/* One rank a part: its root, on its node. */
static int procs_of(const struct crs_job *j, struct dbg_proc **ret, char *err, size_t errlen)
{
	struct dbg_proc *p = calloc(j->nr_parts, sizeof(*p));

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < j->nr_parts; i++) {
		if (j->parts[i].pid <= 0) {
			snprintf(err, errlen, "job %s does not record its parts' pids (taken by an older crdbg): restart it with crdbg restart %s --debug and attach",
				 j->handle, j->handle);
			free(p);
			return -EINVAL;
		}
		p[i].pid = j->parts[i].pid;
		snprintf(p[i].host, sizeof(p[i].host), "%s", j->parts[i].node);
	}
	*ret = p;
	return 0;
}

int dbg_adopt_start(struct dbg_session *s, const char *handle, const char *bindir,
		    char **ret_launch, char *err, size_t errlen)
{
	struct dbg_placement where = { 0 };
	struct dbg_proc *p = NULL;
	bool remote = false;
	struct crs_job j;
	int rc;

	*ret_launch = NULL;
	if (!crs_job_exists(crs_store_root(NULL), handle)) {
		snprintf(err, errlen, "%s is not a job checkpoint of store %s (crdbg list shows them)",
			 handle, crs_store_root(NULL));
		return -ENOENT;
	}
	rc = crs_job_load(crs_store_root(NULL), handle, &j, err, errlen);
	if (rc)
		return rc;
	rc = procs_of(&j, &p, err, errlen);
	if (rc)
		goto out;
	for (size_t i = 0; i < j.nr_parts; i++)
		remote |= !dbg_host_is_local(p[i].host);
	if (remote) {
		rc = dbg_ranks_by_node(p, (long)j.nr_parts, &where, err, errlen);
		if (rc)
			goto out;
		*ret_launch = node_launch(err, errlen);
		where.launcher = *ret_launch ? strdup(*ret_launch) : NULL;
		if (!where.launcher) {
			rc = *ret_launch ? -ENOMEM : -EHOSTUNREACH;
			goto out;
		}
	}
	rc = dbg_session_start(s, (uint32_t)j.nr_parts, bindir, remote ? &where : NULL, err,
			       errlen);
	if (!rc && remote)
		rc = dbg_ranks_set_hosts(s, p, (long)j.nr_parts);
out:
	if (rc) {
		free(*ret_launch);
		*ret_launch = NULL;
	}
	dbg_placement_free(&where);
	free(p);
	crs_job_free(&j);
	return rc;
}
