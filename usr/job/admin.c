// SPDX-License-Identifier: GPL-2.0
/*
 * Verify and remove a job checkpoint: `crdbg-part verify|rm PART` on
 * every part's node, all at once; the first failure is named with its
 * node.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "error.h"
#include "parts.h"
#include "sha256.h"

/* Run "crdbg-part VERB PART ..." for every part; 0 when each exits 0. */
static int on_every_part(const struct crs_job_opts *o, const char *root, const struct crs_job *j,
			 const char *verb, char *err, size_t errlen)
{
	struct job_part *ps = calloc(j->nr_parts, sizeof(*ps));
	char hex[CRS_SHA256_HEX], name[160];
	size_t i;
	int r = 0;

	if (!ps)
		return -ENOMEM;
	signal(SIGPIPE, SIG_IGN);
	job_parts_init(ps, j->nr_parts, o->transport);
	for (i = 0; i < j->nr_parts && !r; i++) {
		char *argv[16], *opts[] = { "--expect-meta", hex, NULL };

		crs_sha256_hex(j->parts[i].meta_sha, hex);
		job_part_argv(argv, verb, j->parts[i].handle, opts, root, o);
		ps[i].index = i;
		ps[i].ranks = j->parts[i].ranks;
		r = job_part_start(&ps[i], j->parts[i].node, o->launch, argv, err, errlen);
	}
	job_parts_finish(ps, j->nr_parts, NULL, o->timeout_s > 0 ? o->timeout_s : 300);
	for (i = 0; i < j->nr_parts && !r; i++)
		if (ps[i].status != 0)
			r = crs_fail(err, errlen, -EIO, "%s: %s",
				     job_part_name(&ps[i], name, sizeof(name)),
				     ps[i].last_err[0] ? ps[i].last_err : "failed");
	free(ps);
	return r;
}

int crs_job_verify(const struct crs_job_opts *o, char *err, size_t errlen)
{
	const char *root = crs_store_root(o->store);
	struct crs_job j;
	int r = crs_job_load(root, o->handle, &j, err, errlen);

	if (r)
		return r;
	r = on_every_part(o, root, &j, "verify", err, errlen);
	crs_job_free(&j);
	return r;
}

int crs_job_remove(const struct crs_job_opts *o, char *err, size_t errlen)
{
	const char *root = crs_store_root(o->store);
	struct crs_job j;
	int r = crs_job_load(root, o->handle, &j, err, errlen);

	/* A manifest that no longer parses names no parts: it goes alone. */
	if (r == -EBADMSG || r == -ENODATA)
		return crs_job_remove_manifest(root, o->handle);
	if (r)
		return r;
	r = on_every_part(o, root, &j, "rm", err, errlen);
	if (!r)
		r = crs_job_remove_manifest(root, o->handle);
	crs_job_free(&j);
	return r;
}
