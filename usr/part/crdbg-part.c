// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg-part: one part of a job checkpoint operation on its node, run by
 * the job's coordinator (usr/job/) through a local process, srun, ssh, a
 * `crdbg restart JOB --join N` or a debug session's crdbg-server. Its
 * command line is the one job_part_argv() builds (<crdbg/job-part.h>);
 * it talks only the part protocol: orders on stdin, the codec's steps on
 * stdout, a failure as a failed step. It is no user's command, so it has
 * no help and takes nothing it was not built to be given.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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

static bool valid_roots(const char *v)
{
	return !strcmp(v, "-") || (v[0] && v[0] != ',' && !strstr(v, ",,") &&
				   strspn(v, "0123456789,") == strlen(v));
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
	if (a->node_roots && !valid_roots(a->node_roots))
		return usage("--node-roots needs PID,PID... or -, not \"%s\"", a->node_roots);
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

/* The job was checkpointed whole: end this part's processes. */
static void kill_part(const char *root, const char *handle)
{
	struct crs_meta m;
	char err[256];

	if (crs_store_load(root, handle, &m, err, sizeof(err)))
		return;
	for (size_t i = 0; i < m.nr_procs; i++)
		kill(m.procs[i].pid, SIGKILL);
	crs_meta_free(&m);
}

static int part_checkpoint(const struct part_args *a)
{
	const char *criu_opts[1] = { NULL };
	struct crs_checkpoint_opts o = {
		.descendants = true, .after = CRS_AFTER_CONTINUE,
		.debug = a->debug ? CRS_DEBUG_SET : CRS_DEBUG_KEEP, .full = a->full,
		.no_pre_dump = a->no_pre_dump, .log = stderr, .backend = a->backend,
		.store = a->store, .verbose = a->verbose, .criu_opts = criu_opts,
		.frozen = job_worker_frozen, .dumped = job_worker_dumped, .cid = a->cid,
	};
	char handle[CRS_HANDLE_MAX], err[1024], end;
	unsigned int k, n;
	bool kill_job = false;
	long pid;
	int r;

	if (!parse_int(a->target, 1, 0x3fffffff, &pid))
		return usage("checkpoint: \"%s\" is not a pid", a->target);
	if (!a->index || !a->cid || !crs_cid_valid(a->cid) ||
	    sscanf(a->index, "%u/%u%c", &k, &n, &end) != 2 || k >= n || n > CRS_JOB_MAX_PARTS)
		return usage("%s", "checkpoint: a part needs --part K/N (K < N) and a valid --cid");
	o.pid = (pid_t)pid;
	o.cid_index = k;
	o.cid_parts = n;
	job_worker_begin();
	r = crs_checkpoint(&o, handle, sizeof(handle), err, sizeof(err));
	if (r)
		return failed(r, err);
	r = job_worker_stored(crs_store_root(a->store), handle, &kill_job);
	if (!r && kill_job)
		kill_part(crs_store_root(a->store), handle);
	return r ? 1 : 0;
}

static int part_restart(const struct part_args *a)
{
	struct crs_restart_opts o = {
		.handle = a->target, .debug = a->debug, .log = stderr, .backend = a->backend,
		.store = a->store, .verbose = a->verbose, .node_roots = a->node_roots,
		.terminal_fd = a->terminal_fd, .has_terminal = a->terminal_fd >= 0,
		.relay_stdin = false,	/* a part's stdin is its coordinator's */
		.hold = job_worker_hold, .hold_arg = (void *)crs_store_root(a->store),
	};
	char err[1024];
	uint8_t sha[32];
	int r, st = 0;

	if (a->expect_meta) {
		if (!crs_digest_from_hex(a->expect_meta, sha, sizeof(sha)))
			return usage("%s", "restart: --expect-meta needs 64 hex digits");
		o.expect_meta_sha = sha;
	}
	r = job_worker_orders_off_stdin();
	if (r) {
		snprintf(err, sizeof(err), "a part reads its coordinator's orders on stdin: %s",
			 strerror(-r));
		return failed(r, err);
	}
	job_worker_begin();
	r = crs_restart(&o, &st, err, sizeof(err));
	if (r)
		return failed(r, err);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/* Every image of the part is there and intact, and it is the job's. */
static int part_verify(const struct part_args *a)
{
	const char *root = crs_store_root(a->store);
	char err[1024];
	struct crs_meta m;
	int r;

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
	int r = crs_store_remove(root, a->target);

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
