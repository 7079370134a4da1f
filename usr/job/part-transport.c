// SPDX-License-Identifier: GPL-2.0
/*
 * Parts run by whoever the caller's transport asks (parts.h,
 * crs_job_opts.transport in <crdbg/job.h>: the console's SDM servers,
 * usr/console/parts-sdm.c). The transport runs every part of the job:
 * its wait and finish report on each, starting from what we know.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "parts.h"

static int tp_start(struct job_part *p, const char *node, const char *launch,
		    char *const argv[], char *err, size_t errlen)
{
	(void)launch;	/* the transport knows its own way to node */
	return p->tp->start(p->tp->arg, p->index, node, p->ranks ? p->ranks : "-", argv, err,
			    errlen);
}

static void tp_send(struct job_part *ps, size_t n, enum job_part_order order)
{
	if (n)
		ps[0].tp->send(ps[0].tp->arg, order);
}

/* The transport's wait (step) or finish (JOB_STEP_UNSPEC) through reports. */
static int through_transport(struct job_part *ps, size_t n, enum job_part_step step,
			     int timeout_s, int grace_s)
{
	const struct crs_job_transport *tp = ps[0].tp;
	struct crs_part_report *rep = calloc(n, sizeof(*rep));
	int r = 0;

	if (!rep)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		rep[i].msg = ps[i].msg;
		snprintf(rep[i].why, sizeof(rep[i].why), "%s", ps[i].last_err);
		rep[i].over = ps[i].over;
		rep[i].status = ps[i].status;
	}
	if (step != JOB_STEP_UNSPEC)
		r = tp->wait(tp->arg, step, timeout_s, rep, n);
	else
		tp->finish(tp->arg, grace_s, rep, n);
	for (size_t i = 0; i < n; i++) {
		ps[i].msg = rep[i].msg;
		snprintf(ps[i].last_err, sizeof(ps[i].last_err), "%s", rep[i].why);
		ps[i].over = rep[i].over;
		ps[i].status = rep[i].status;
	}
	free(rep);
	return r;
}

static int tp_wait(struct job_part *ps, size_t n, enum job_part_step step, int timeout_s,
		   FILE *log)
{
	(void)log;	/* the transport has the parts' messages */
	return n ? through_transport(ps, n, step, timeout_s, 0) : 0;
}

static void tp_finish(struct job_part *ps, size_t n, FILE *log, int grace_s)
{
	(void)log;
	if (n)
		through_transport(ps, n, JOB_STEP_UNSPEC, 0, grace_s);
}

static bool tp_over(const struct job_part *p)
{
	return p->over;
}

const struct job_part_ops job_part_transport_ops = {
	.start = tp_start,
	.send = tp_send,
	.wait = tp_wait,
	.finish = tp_finish,
	.over = tp_over,
};
