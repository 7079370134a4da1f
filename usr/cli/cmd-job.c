// SPDX-License-Identifier: GPL-2.0
/*
 * Job checkpoints on the command line (<crdbg/job.h>): the job targets
 * of checkpoint --job and the job rows of list. The part side of the
 * protocol is the crdbg-part program (<crdbg/job-part.h>).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli-job.h"

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
