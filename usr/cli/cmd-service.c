// SPDX-License-Identifier: GPL-2.0
/* See cli-service.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <crdbg/crdbgd-client.h>

#include "cli-service.h"

bool cli_service_wanted(void)
{
	return crdbgd_wanted();
}

int cli_service_checkpoint(const struct crs_checkpoint_opts *o, char *ret_handle, size_t len,
			   char *err, size_t errlen)
{
	struct crdbgd_msg done;
	struct crdbgd_call c;
	int r;

	r = crdbgd_call_init(&c, CRDBGD_OP_CHECKPOINT, o->store, err, errlen);
	if (r)
		return r;
	r = crdbgd_call_prove(&c, o->pid, err, errlen);
	if (r) {
		crdbgd_call_close(&c);
		return r;
	}
	crdbgd_set_u32(&c.req, CRDBGD_A_PID, (uint32_t)o->pid);
	crdbgd_set_u32(&c.req, CRDBGD_A_AFTER, o->after);
	crdbgd_set_u32(&c.req, CRDBGD_A_DEBUG, o->debug);
	crdbgd_set_u32(&c.req, CRDBGD_A_BACKEND, o->backend);
	c.req.flags |= (o->descendants ? 0 : CRDBGD_F_NO_TREE) | (o->full ? CRDBGD_F_FULL : 0) |
		       (o->no_pre_dump ? CRDBGD_F_NO_PRE_DUMP : 0) |
		       (o->verbose ? CRDBGD_F_VERBOSE : 0);
	for (size_t i = 0; i < o->nr_criu_opts; i++)
		if (crdbgd_set_str(&c.req, CRDBGD_A_CRIU_OPT, o->criu_opts[i])) {
			crdbgd_call_close(&c);
			return snprintf(err, errlen, "criu option %s too long", o->criu_opts[i]),
			       EINVAL;
		}
	r = crdbgd_call_run(&c, NULL, NULL, &done, err, errlen);
	if (!r)
		snprintf(ret_handle, len, "%s", done.handle);
	return r;
}

int cli_service_restart(const struct crs_restart_opts *o, int *ret_status, char *err,
			size_t errlen)
{
	struct crdbgd_msg done;
	struct crdbgd_call c;
	int r = crdbgd_call_init(&c, CRDBGD_OP_RESTART, o->store, err, errlen);

	if (r)
		return r;
	crdbgd_set_str(&c.req, CRDBGD_A_HANDLE, o->handle);
	crdbgd_set_u32(&c.req, CRDBGD_A_BACKEND, o->backend);
	c.req.flags |= (o->debug ? CRDBGD_F_DEBUG : 0) | (o->lazy ? CRDBGD_F_LAZY : 0) |
		       (o->verbose ? CRDBGD_F_VERBOSE : 0);
	r = crdbgd_call_run(&c, NULL, NULL, &done, err, errlen);
	if (!r)
		*ret_status = (int)done.status;
	return r;
}

static int handle_op(enum crdbgd_op op, const char *store, const char *handle, char *err,
		     size_t errlen)
{
	struct crdbgd_msg done;
	struct crdbgd_call c;
	int r = crdbgd_call_init(&c, op, store, err, errlen);

	if (r)
		return r;
	crdbgd_set_str(&c.req, CRDBGD_A_HANDLE, handle);
	return crdbgd_call_run(&c, NULL, NULL, &done, err, errlen);
}

int cli_service_verify(const char *store, const char *handle, char *err, size_t errlen)
{
	return handle_op(CRDBGD_OP_VERIFY, store, handle, err, errlen);
}

int cli_service_rm(const char *store, const char *handle, char *err, size_t errlen)
{
	return handle_op(CRDBGD_OP_RM, store, handle, err, errlen);
}

struct list_call {
	crs_store_list_fn fn;
	void *arg;
};

/* An entry as crs_store_list() would have given it. */
static void list_entry(const struct crdbgd_msg *e, void *arg)
{
	struct list_call *lc = arg;
	struct crs_proc procs[CRDBGD_MAX_PIDS];
	struct crs_meta m;

	if (!e->valid) {
		lc->fn(e->handle, NULL, 0, e->problem, lc->arg);
		return;
	}
	crs_meta_init(&m);
	memset(procs, 0, sizeof(procs));
	for (uint32_t i = 0; i < e->nr_pids; i++)
		procs[i].pid = (pid_t)e->pids[i];
	m.procs = procs;
	m.nr_procs = e->nr_pids;
	m.time = (int64_t)e->time;
	m.nr_threads = e->threads;
	m.debugger = e->debugger;
	m.mpir = e->mpir;
	snprintf(m.handle, sizeof(m.handle), "%s", e->handle);
	snprintf(m.program, sizeof(m.program), "%s", e->program);
	snprintf(m.criu_version, sizeof(m.criu_version), "%s", e->criu);
	snprintf(m.parent, sizeof(m.parent), "%s", e->parent);
	lc->fn(e->handle, &m, e->bytes, NULL, lc->arg);
}

int cli_service_list(const char *store, crs_store_list_fn fn, void *arg, char *err,
		     size_t errlen)
{
	struct list_call lc = { fn, arg };
	struct crdbgd_msg done;
	struct crdbgd_call c;
	int r = crdbgd_call_init(&c, CRDBGD_OP_LIST, store, err, errlen);

	return r ? r : crdbgd_call_run(&c, list_entry, &lc, &done, err, errlen);
}
