// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg-part: one part of a job checkpoint operation on its node, run by
 * the job's coordinator (usr/job/) through a local process, srun, ssh, a
 * `crdbg restart JOB --join N` or a debug session's crdbg-server. Its
 * command line is the one job_part_argv() builds (<crdbg/job-part.h>);
 * it talks only the part protocol: orders on stdin, the codec's steps on
 * stdout, a failure as a failed step. It is no user's command, so it has
 * no help and takes nothing it was not built to be given. Run by a user
 * who is not root, it hands its part to the node's service, crdbgd,
 * which speaks the protocol on its stdio for it (<crdbg/crdbgd.h>).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <crdbg/crdbgd-client.h>
#include <crdbg/crs.h>
#include <crdbg/restart-check.h>
#include <crdbg/job.h>
#include <crdbg/job-part.h>

struct part_args {
	const char *verb;
	const char *target;		/* PID, HANDLE or JOBID */
	const char *store;
	enum freeze_backend_kind backend;
	bool verbose, debug, full, no_pre_dump;
	const char *index;		/* checkpoint: K/N */
	const char *cid;		/* checkpoint */
	const char *expect_meta;	/* restart, verify */
	const char *node_roots;		/* restart */
	const char *agents;		/* restart */
	int terminal_fd;		/* restart: -1 for none */
};

/* A failure before or during the operation: a failed step, exit 1. */
static int failed(int err, const char *why)
{
	job_worker_failed(err, "%s", why);
	return 1;
}

static int usage(const char *fmt, const char *what)
{
	char why[JOB_PART_WHY_MAX];

	snprintf(why, sizeof(why), fmt, what);
	job_worker_failed(EINVAL, "crdbg-part: %s", why);
	return 2;
}

static bool parse_int(const char *s, long lo, long hi, long *ret)
{
	char *end;

	errno = 0;
	*ret = strtol(s, &end, 10);
	return s[0] && !errno && !*end && *ret >= lo && *ret <= hi;
}

/* argv after the verb: 0, or a usage error said (2). */
static int parse_args(int argc, char **argv, struct part_args *a)
{
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char **slot = NULL;
		long n;

		if (!strcmp(o, "--store"))
			slot = &a->store;
		else if (!strcmp(o, "--part"))
			slot = &a->index;
		else if (!strcmp(o, "--cid"))
			slot = &a->cid;
		else if (!strcmp(o, "--expect-meta"))
			slot = &a->expect_meta;
		else if (!strcmp(o, "--node-roots"))
			slot = &a->node_roots;
		else if (!strcmp(o, "--agents"))
			slot = &a->agents;
		if (slot) {
			if (!v)
				return usage("%s needs a value", o);
			*slot = v;
			i++;
		} else if (!strcmp(o, "--backend")) {
			int kind = v ? (int)freeze_backend_kind_from_string(v) : -1;

			if (kind < 0)
				return usage("%s needs kmod, ptrace or auto", o);
			a->backend = (enum freeze_backend_kind)kind;
			i++;
		} else if (!strcmp(o, "--terminal-fd")) {
			if (!v || !parse_int(v, 3, 1023, &n))
				return usage("%s needs an open pty fd, 3 or more", o);
			a->terminal_fd = (int)n;
			i++;
		} else if (!strcmp(o, "-v")) {
			a->verbose = true;
		} else if (!strcmp(o, "--debug")) {
			a->debug = true;
		} else if (!strcmp(o, "--full")) {
			a->full = true;
		} else if (!strcmp(o, "--no-pre-dump")) {
			a->no_pre_dump = true;
		} else if (o[0] != '-' && !a->target) {
			a->target = o;
		} else {
			return usage("unknown argument \"%s\"", o);
		}
	}
	if (!a->target)
		return usage("%s needs its target", a->verb);
	if (a->node_roots && !job_part_roots_valid(a->node_roots))
		return usage("--node-roots needs PID,PID... or -, not \"%s\"", a->node_roots);
	if (a->agents && (!strcmp(a->agents, "-") || !job_part_roots_valid(a->agents) ||
			  strlen(a->agents) >= CRS_AGENTS_MAX))
		return usage("--agents needs PID,PID..., not \"%s\"", a->agents);
	return 0;
}

/* The part's metadata is the one its job's manifest recorded. */
static int expected_meta(const char *root, const char *handle, const char *hex, char *err,
			 size_t errlen)
{
	uint8_t want[32], got[32];
	int r;

	if (!crs_digest_from_hex(hex, want, sizeof(want))) {
		snprintf(err, errlen, "--expect-meta needs 64 hex digits");
		return -EINVAL;
	}
	r = crs_store_meta_digest(root, handle, got, err, errlen);
	if (r)
		return r;
	if (memcmp(want, got, sizeof(got))) {
		snprintf(err, errlen,
			 "checkpoint %s is not the part its job recorded: its metadata changed",
			 handle);
		return -EBADMSG;
	}
	return 0;
}

/* A user's part: the node's service runs it on our stdio (<crdbg/crdbgd.h>). */
static int by_service(struct crdbgd_call *c, const struct part_args *a)
{
	struct crdbgd_msg done;
	char err[1024];
	int r;

	crdbgd_set_u32(&c->req, CRDBGD_A_BACKEND, a->backend);
	c->req.flags |= (a->debug ? CRDBGD_F_DEBUG : 0) | (a->verbose ? CRDBGD_F_VERBOSE : 0);
	/*
	 * A refusal (or no service) is ours to say; a part that ran said
	 * its own failure in the protocol, and its status is ours.
	 */
	r = crdbgd_call_run(c, NULL, NULL, &done, err, sizeof(err));
	return r ? failed(r, err) : (int)done.status;
}

static int service_checkpoint(const struct part_args *a, pid_t pid, unsigned int k,
			      unsigned int n)
{
	struct crdbgd_call c;
	char err[1024];
	int r = crdbgd_call_init(&c, CRDBGD_OP_PART_CHECKPOINT, a->store, err, sizeof(err));

	if (!r)
		r = crdbgd_call_prove(&c, pid, err, sizeof(err));
	if (r) {
		crdbgd_call_close(&c);
		return failed(r, err);
	}
	crdbgd_set_u32(&c.req, CRDBGD_A_PID, (uint32_t)pid);
	crdbgd_set_u32(&c.req, CRDBGD_A_PART, k);
	crdbgd_set_u32(&c.req, CRDBGD_A_PARTS, n);
	crdbgd_set_str(&c.req, CRDBGD_A_CID, a->cid);
	c.req.flags |= (a->full ? CRDBGD_F_FULL : 0) | (a->no_pre_dump ? CRDBGD_F_NO_PRE_DUMP : 0);
	return by_service(&c, a);
}

static int service_restart(const struct part_args *a)
{
	struct crdbgd_call c;
	char err[1024];
	int r = crdbgd_call_init(&c, CRDBGD_OP_PART_RESTART, a->store, err, sizeof(err));

	if (!r && a->terminal_fd >= 0) {
		r = crdbgd_call_add_fd(&c, a->terminal_fd);
		if (r)
			snprintf(err, sizeof(err), "cannot hand the terminal on: %s", strerror(r));
		c.req.flags |= CRDBGD_F_TERMINAL;
	}
	if (r) {
		crdbgd_call_close(&c);
		return failed(r, err);
	}
	/* a string too long for its attribute is cut here, and refused there */
	crdbgd_set_str(&c.req, CRDBGD_A_HANDLE, a->target);
	if (a->expect_meta)
		crdbgd_set_str(&c.req, CRDBGD_A_EXPECT_META, a->expect_meta);
	crdbgd_set_str(&c.req, CRDBGD_A_NODE_ROOTS, a->node_roots ? a->node_roots : "-");
	if (a->agents)
		crdbgd_set_str(&c.req, CRDBGD_A_AGENTS, a->agents);
	return by_service(&c, a);
}

static int part_checkpoint(const struct part_args *a)
{
	const char *criu_opts[1] = { NULL };
	struct crs_checkpoint_opts o = {
		.descendants = true, .after = CRS_AFTER_CONTINUE,
		.debug = a->debug ? CRS_DEBUG_SET : CRS_DEBUG_KEEP, .full = a->full,
		.no_pre_dump = a->no_pre_dump, .log = stderr, .backend = a->backend,
		.store = a->store, .verbose = a->verbose, .criu_opts = criu_opts,
		.cid = a->cid,
	};
	char handle[CRS_HANDLE_MAX], end;
	unsigned int k, n;
	long pid;

	if (!parse_int(a->target, 1, 0x3fffffff, &pid))
		return usage("checkpoint: \"%s\" is not a pid", a->target);
	if (!a->index || !a->cid || !crs_cid_valid(a->cid) ||
	    sscanf(a->index, "%u/%u%c", &k, &n, &end) != 2 || k >= n || n > CRS_JOB_MAX_PARTS)
		return usage("%s", "checkpoint: a part needs --part K/N (K < N) and a valid --cid");
	if (crdbgd_wanted())
		return service_checkpoint(a, (pid_t)pid, k, n);
	o.pid = (pid_t)pid;
	o.cid_index = k;
	o.cid_parts = n;
	return job_worker_checkpoint(&o, handle, sizeof(handle));
}

static int part_restart(const struct part_args *a)
{
	struct crs_restart_opts o = {
		.handle = a->target, .debug = a->debug, .log = stderr, .backend = a->backend,
		.store = a->store, .verbose = a->verbose, .node_roots = a->node_roots,
		.agents = a->agents, .terminal_fd = a->terminal_fd, .has_terminal = a->terminal_fd >= 0,
	};
	uint8_t sha[32];

	if (a->expect_meta) {
		if (!crs_digest_from_hex(a->expect_meta, sha, sizeof(sha)))
			return usage("%s", "restart: --expect-meta needs 64 hex digits");
		o.expect_meta_sha = sha;
	}
	if (crdbgd_wanted())
		return service_restart(a);
	return job_worker_restart(&o);
}

/* A user's verify or rm of a part: the service's, on its handle (and digest). */
static int service_on_part(enum crdbgd_op op, const struct part_args *a, char *err,
			   size_t errlen)
{
	struct crdbgd_call c;
	struct crdbgd_msg done;
	int r = crdbgd_call_init(&c, op, a->store, err, errlen);

	if (r)
		return r;
	crdbgd_set_str(&c.req, CRDBGD_A_HANDLE, a->target);
	if (op == CRDBGD_OP_VERIFY && a->expect_meta)
		crdbgd_set_str(&c.req, CRDBGD_A_EXPECT_META, a->expect_meta);
	return crdbgd_call_run(&c, NULL, NULL, &done, err, errlen);
}

/* Every image of the part is there and intact, and it is the job's. */
static int part_verify(const struct part_args *a)
{
	const char *root = crs_store_root(a->store);
	char err[1024];
	struct crs_meta m;
	int r;

	if (crdbgd_wanted()) {
		r = service_on_part(CRDBGD_OP_VERIFY, a, err, sizeof(err));
		if (r)
			return failed(r, err);
		printf("%s: ok\n", a->target);
		return 0;
	}
	if (a->expect_meta) {
		r = expected_meta(root, a->target, a->expect_meta, err, sizeof(err));
		if (r)
			return failed(r, err);
	}
	crs_meta_init(&m);
	r = crs_store_load(root, a->target, &m, err, sizeof(err));
	if (!r)
		r = crs_restart_check(root, a->target, &m, err, sizeof(err));
	crs_meta_free(&m);
	if (r)
		return failed(r, err);
	printf("%s: ok\n", a->target);
	return 0;
}

static int part_rm(const struct part_args *a)
{
	const char *root = crs_store_root(a->store);
	char err[1024];
	int r;

	if (crdbgd_wanted()) {
		r = service_on_part(CRDBGD_OP_RM, a, err, sizeof(err));
		/* a part already gone: the job's rm goes on */
		return !r || r == ENOENT ? 0 : failed(r, err);
	}
	r = crs_store_remove(root, a->target);

	if (!r || r == -ENOENT)	/* a part already gone: the job's rm goes on */
		return 0;
	crs_store_remove_why(root, a->target, r, err, sizeof(err));
	return failed(r, err);
}

/* A coordinator asks this node for its tasks of a Slurm job. */
static int part_tasks(const struct part_args *a)
{
	int r = crs_slurm_local_tasks(a->target, stdout);

	return r < 0 ? failed(r, "cannot list this node's tasks of the job") : 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *verb;
		int (*run)(const struct part_args *a);
	} verbs[] = {
		{ "checkpoint", part_checkpoint },
		{ "restart", part_restart },
		{ "verify", part_verify },
		{ "rm", part_rm },
		{ "tasks", part_tasks },
	};
	struct part_args a = { .backend = FREEZE_BACKEND_AUTO, .terminal_fd = -1 };

	if (argc < 2)
		return usage("%s", "which operation? checkpoint, restart, verify, rm or tasks");
	a.verb = argv[1];
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(argv[1], verbs[i].verb))
			return parse_args(argc - 2, argv + 2, &a) ?: verbs[i].run(&a);
	return usage("unknown operation \"%s\"", argv[1]);
}
