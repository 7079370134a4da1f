// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg checkpoint PID [--stop|--kill] [--debug|--no-debug] [--no-tree] [--full]
 *                      [--no-pre-dump]
 *                      [--criu-opt=--OPTION[=VALUE]]...
 *                      [--backend kmod|ptrace|auto] [--store DIR] [-v]
 * crdbg restart HANDLE [--debug] [--lazy] [--backend ...] [--store DIR] [-v]
 * crdbg list [--json] [--store DIR]
 * crdbg rm HANDLE [--store DIR]
 *
 * The checkpoint/restart commands of the MPIR checkpoint protocol (see
 * Documentation/checkpoint.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "cli.h"
#include "cli-job.h"
#include "help.h"
#include <crdbg/crs.h>
#include <crdbg/mpir-checkpoint.h>

struct common_opts {
	const char *store;
	enum freeze_backend_kind backend;
	bool verbose;
	/* job checkpoints */
	bool part;		/* run as a part, driven by a coordinator */
	const char *launch;	/* template for parts on other nodes */
	int timeout_s;
	const char *expect_meta;
	const char *node_roots;	/* restart --part: its node's other parts' roots */
};

/* Parse an option every command shares; returns args consumed, 0 if not one, -1 on error. */
static int common_opt(int argc, char **argv, int i, struct common_opts *c, const char *cmd)
{
	if (!strcmp(argv[i], "--store")) {
		if (i + 1 >= argc) {
			cli_error("%s: --store needs a directory", cmd);
			return -1;
		}
		c->store = argv[i + 1];
		return 2;
	}
	if (!strncmp(argv[i], "--store=", 8)) {
		c->store = argv[i] + 8;
		return 1;
	}
	if (!strcmp(argv[i], "--backend") || !strncmp(argv[i], "--backend=", 10)) {
		const char *v = argv[i][9] == '=' ? argv[i] + 10 : i + 1 < argc ? argv[i + 1] : NULL;
		int kind = v ? (int)freeze_backend_kind_from_string(v) : -1;

		if (kind < 0) {
			cli_error("%s: --backend needs kmod, ptrace or auto", cmd);
			return -1;
		}
		c->backend = (enum freeze_backend_kind)kind;
		return argv[i][9] == '=' ? 1 : 2;
	}
	if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
		c->verbose = true;
		return 1;
	}
	if (!strcmp(argv[i], "--node-roots")) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";

		if (!*v || (strcmp(v, "-") && (strspn(v, "0123456789,") != strlen(v) ||
					       v[0] == ',' || strstr(v, ",,")))) {
			cli_error("%s: --node-roots needs pids, PID,PID... or -", cmd);
			return -1;
		}
		c->node_roots = v;
		return 2;
	}
	if (!strcmp(argv[i], "--launch") || !strcmp(argv[i], "--timeout") ||
	    !strcmp(argv[i], "--expect-meta")) {
		if (i + 1 >= argc) {
			cli_error("%s: %s needs a value", cmd, argv[i]);
			return -1;
		}
		if (argv[i][2] == 'l') {
			c->launch = argv[i + 1];
		} else if (argv[i][2] == 'e') {
			c->expect_meta = argv[i + 1];
		} else {
			char *end;

			c->timeout_s = (int)strtol(argv[i + 1], &end, 10);
			if (*end || c->timeout_s <= 0 || c->timeout_s > 86400) {
				cli_error("%s: --timeout needs seconds, 1 to 86400", cmd);
				return -1;
			}
		}
		return 2;
	}
	return 0;
}

static void job_opts(const struct common_opts *c, struct crs_job_opts *o)
{
	o->store = c->store;
	o->launch = c->launch;
	o->backend = c->backend;
	o->timeout_s = c->timeout_s;
	o->verbose = c->verbose;
	o->log = stderr;
}

static bool parse_pid(const char *s, pid_t *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > 0x3fffffff)
		return false;
	*ret = (pid_t)v;
	return true;
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

/* checkpoint --job TARGETS: the coordinator of a job checkpoint. */
static int checkpoint_job(const struct common_opts *c, const struct crs_checkpoint_opts *co,
			  const char *spec, bool have_pid)
{
	struct crs_job_opts o = { 0 };
	struct crs_job_target *t;
	char handle[CRS_HANDLE_MAX], err[1024], what[256];
	size_t n;
	int r;

	if (have_pid || co->after == CRS_AFTER_STOP || co->nr_criu_opts) {
		cli_error("checkpoint: --job takes its processes from TARGETS; no PID, --stop or --criu-opt with it");
		return 2;
	}
	job_opts(c, &o);
	if (!strncmp(spec, "slurm:", 6)) {
		static char tmpl[256];

		r = crs_slurm_job_targets(spec + 6, &o, &t, &n, err, sizeof(err));
		if (r) {
			cli_error("checkpoint: %s", err);
			return 1;
		}
		if (!o.launch) {	/* the parts run inside the job, as its tasks did */
			snprintf(tmpl, sizeof(tmpl),
				 "exec srun --overlap --jobid=%s -w {host} -N1 -n1 --quiet {cmd}", spec + 6);
			o.launch = tmpl;
		}
	} else if (cli_job_targets(spec, &t, &n)) {
		cli_error("checkpoint: --job needs slurm:JOBID or PID or NODE:PID[:RANKS] targets, comma-separated, not \"%s\"",
			  spec);
		return 2;
	}
	snprintf(what, sizeof(what), "%s", spec);
	o.what = what;
	o.kill = co->after == CRS_AFTER_KILL;
	o.debug = co->debug == CRS_DEBUG_SET;
	o.full = co->full;
	o.no_pre_dump = co->no_pre_dump;
	r = crs_job_checkpoint(&o, t, n, handle, sizeof(handle), err, sizeof(err));
	free(t);
	if (r) {
		cli_error("checkpoint: %s; nothing was kept%s", err, o.kill ? "" : ", the job goes on");
		return 1;
	}
	fprintf(stderr, CRS_HANDLE_PREFIX "%s\n", handle);
	printf("%s\n", handle);
	return 0;
}

int cmd_checkpoint(int argc, char **argv)
{
	struct common_opts c = { .backend = FREEZE_BACKEND_AUTO };
	struct crs_checkpoint_opts o = {
		.descendants = true, .after = CRS_AFTER_CONTINUE, .debug = CRS_DEBUG_KEEP,
		.log = stderr,
	};
	const char *criu_opts[CRS_MAX_CRIU_OPTS], *job = NULL, *part = NULL;
	char handle[CRS_HANDLE_MAX], err[1024];
	bool have_pid = false, kill_job = false;
	int i, n, r;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "checkpoint");
		return 0;
	}
	for (i = 0; i < argc; i += n) {
		n = common_opt(argc, argv, i, &c, "checkpoint");
		if (n < 0)
			return 2;
		if (n)
			continue;
		n = 1;
		if (!strcmp(argv[i], "--stop")) {
			o.after = CRS_AFTER_STOP;
		} else if (!strcmp(argv[i], "--kill")) {
			o.after = CRS_AFTER_KILL;
		} else if (!strcmp(argv[i], "--debug")) {
			o.debug = CRS_DEBUG_SET;
		} else if (!strcmp(argv[i], "--no-debug")) {
			o.debug = CRS_DEBUG_CLEAR;
		} else if (!strcmp(argv[i], "--no-tree")) {
			o.descendants = false;
		} else if (!strcmp(argv[i], "--full")) {
			o.full = true;
		} else if (!strcmp(argv[i], "--no-pre-dump")) {
			o.no_pre_dump = true;
		} else if (!strcmp(argv[i], "--slurm-tasks") && i + 1 < argc) {
			/* A coordinator asks this node for its tasks of a job. */
			return crs_slurm_local_tasks(argv[i + 1], stdout) < 0 ? 1 : 0;
		} else if ((!strcmp(argv[i], "--job") || !strcmp(argv[i], "--part") ||
			    !strcmp(argv[i], "--cid")) && i + 1 < argc) {
			if (argv[i][2] == 'j')
				job = argv[++i];
			else if (argv[i][2] == 'p')
				part = argv[++i];
			else
				o.cid = argv[++i];
		} else if (!strcmp(argv[i], "--criu-opt") || !strncmp(argv[i], "--criu-opt=", 11)) {
			const char *v = argv[i][10] == '=' ? argv[i] + 11 :
					i + 1 < argc ? argv[++i] : NULL;

			if (!v) {
				cli_error("checkpoint: --criu-opt needs a CRIU option, e.g. --criu-opt=--file-locks");
				return 2;
			}
			if (crs_criu_opt_check(v, err, sizeof(err))) {
				cli_error("checkpoint: %s", err);
				return 2;
			}
			if (o.nr_criu_opts >= CRS_MAX_CRIU_OPTS) {
				cli_error("checkpoint: more than %d --criu-opt", CRS_MAX_CRIU_OPTS);
				return 2;
			}
			criu_opts[o.nr_criu_opts++] = v;
		} else if (argv[i][0] != '-' && !have_pid) {
			if (!parse_pid(argv[i], &o.pid)) {
				cli_error("checkpoint: \"%s\" is not a pid", argv[i]);
				return 2;
			}
			have_pid = true;
		} else {
			cli_error("checkpoint: unknown argument \"%s\", try \"crdbg checkpoint --help\"",
				  argv[i]);
			return 2;
		}
	}
	if (job)
		return checkpoint_job(&c, &o, job, have_pid);
	if (!have_pid) {
		cli_error("checkpoint: which pid? usage: crdbg checkpoint PID [options]");
		return 2;
	}
	if (part || o.cid) {
		unsigned int k, nparts;
		char end;

		if (!part || !o.cid || !crs_cid_valid(o.cid) ||
		    sscanf(part, "%u/%u%c", &k, &nparts, &end) != 2 || k >= nparts ||
		    nparts > CRS_JOB_MAX_PARTS) {
			cli_error("checkpoint: a part needs --part K/N (K < N) and a valid --cid");
			return 2;
		}
		o.cid_index = k;
		o.cid_parts = nparts;
		o.frozen = cli_part_frozen;
		o.dumped = cli_part_dumped;
		c.part = true;
	}
	o.backend = c.backend;
	o.store = c.store;
	o.verbose = c.verbose;
	o.criu_opts = criu_opts;
	if (c.part)
		cli_part_begin();
	r = crs_checkpoint(&o, handle, sizeof(handle), err, sizeof(err));
	if (r) {
		cli_error("checkpoint: %s", err);
		return 1;
	}
	if (c.part) {
		r = cli_part_stored(crs_store_root(c.store), handle, &kill_job);
		if (!r && kill_job)
			kill_part(crs_store_root(c.store), handle);
		return r;
	}
	if (o.after == CRS_AFTER_STOP)
		fprintf(stderr, "crdbg: pid %d and its descendants are left stopped; kill -CONT resumes them\n",
			o.pid);
	fprintf(stderr, CRS_HANDLE_PREFIX "%s\n", handle);
	printf("%s\n", handle);
	return 0;
}

int cmd_restart(int argc, char **argv)
{
	struct common_opts c = { .backend = FREEZE_BACKEND_AUTO };
	struct crs_restart_opts o = { .log = stderr, .terminal_fd = -1 };
	char err[1024], h[CRS_HANDLE_MAX];
	int i, n, r, st = 0, join = -1;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "restart");
		return 0;
	}
	for (i = 0; i < argc; i += n) {
		n = common_opt(argc, argv, i, &c, "restart");
		if (n < 0)
			return 2;
		if (n)
			continue;
		n = 1;
		if (!strcmp(argv[i], "--debug")) {
			o.debug = true;
		} else if (!strcmp(argv[i], "--lazy")) {
			o.lazy = true;
		} else if (!strcmp(argv[i], "--part")) {
			c.part = true;
		} else if (!strcmp(argv[i], "--join") || !strcmp(argv[i], "--terminal-fd")) {
			bool is_join = argv[i][2] == 'j';
			char *end;
			long v;

			errno = 0;
			v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : -1;
			if (i + 1 >= argc || errno || *end || end == argv[i + 1] ||
			    v < (is_join ? 1 : 3) || v > (is_join ? 4096 : 1023)) {
				cli_error("restart: %s needs %s", argv[i],
					  is_join ? "the number of a terminal the restart named (1, 2, ...)" :
					  "the number of an open pty slave fd (3 or more)");
				return 2;
			}
			if (is_join)
				join = (int)v;
			else
				o.terminal_fd = (int)v;
			o.has_terminal |= !is_join;
			n = 2;
		} else if (argv[i][0] != '-' && !o.handle) {
			o.handle = argv[i];
		} else {
			cli_error("restart: unknown argument \"%s\", try \"crdbg restart --help\"",
				  argv[i]);
			return 2;
		}
	}
	if (!o.handle) {
		cli_error("restart: which checkpoint? usage: crdbg restart HANDLE (see \"crdbg list\")");
		return 2;
	}
	/* Accept a pasted "MPIR checkpoint handle) X" line too. */
	if (!crs_parse_checkpoint_handle(o.handle, h, sizeof(h)))
		o.handle = h;
	if (o.has_terminal && (!c.part || join > 0)) {
		cli_error("restart: --terminal-fd is for a job's part (--part), given by its restart");
		return 2;
	}
	if (join > 0 || crs_job_exists(crs_store_root(c.store), o.handle)) {
		struct crs_job_opts jo = { 0 };

		if (o.lazy || c.part) {
			cli_error("restart: %s is a job checkpoint: no --lazy or --part with it", o.handle);
			return 2;
		}
		job_opts(&c, &jo);
		jo.handle = o.handle;
		jo.debug = o.debug;
		if (join > 0 && !crs_handle_valid(o.handle)) {
			cli_error("restart: \"%s\" is not a job checkpoint's handle", o.handle);
			return 2;
		}
		r = join > 0 ? crs_job_join(&jo, (unsigned int)join, &st, err, sizeof(err)) :
			       crs_job_restart(&jo, &st, err, sizeof(err));
	} else {
		uint8_t sha[32];

		if (c.expect_meta && !crs_digest_from_hex(c.expect_meta, sha, sizeof(sha))) {
			cli_error("restart: --expect-meta needs 64 hex digits");
			return 2;
		}
		o.backend = c.backend;
		o.store = c.store;
		o.verbose = c.verbose;
		o.expect_meta_sha = c.expect_meta ? sha : NULL;
		o.node_roots = c.node_roots;
		o.relay_stdin = !c.part;	/* a part's stdin is no user's */
		if (c.part) {
			r = cli_part_orders_off_stdin();
			if (r) {
				cli_error("restart: a part reads its coordinator's orders on stdin: %s",
					  strerror(-r));
				return 1;
			}
			o.hold = cli_part_hold;
			o.hold_arg = (void *)crs_store_root(c.store);
			cli_part_begin();
		}
		r = crs_restart(&o, &st, err, sizeof(err));
	}
	if (r) {
		cli_error("restart: %s", err);
		return 1;
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

struct list_ctx {
	bool json;
	int n;
};

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void list_one(const char *handle, const struct crs_meta *m, uint64_t bytes,
		     const char *problem, void *arg)
{
	struct list_ctx *ctx = arg;
	char when[32] = "-";
	size_t i;

	if (m) {
		time_t t = (time_t)m->time;
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	if (ctx->json) {
		printf("%s\n  {\"handle\": ", ctx->n ? "," : "");
		json_str(handle);
		printf(", \"valid\": %s", m ? "true" : "false");
		if (m) {
			printf(", \"time\": ");
			json_str(when);
			printf(", \"program\": ");
			json_str(m->program);
			printf(", \"pids\": [");
			for (i = 0; i < m->nr_procs; i++)
				printf("%s%d", i ? ", " : "", m->procs[i].pid);
			printf("], \"threads\": %zu, \"bytes\": %" PRIu64
			       ", \"debugger\": %s, \"mpir\": %s, \"criu\": ",
			       m->nr_threads, bytes, m->debugger ? "true" : "false",
			       m->mpir ? "true" : "false");
			json_str(m->criu_version);
			printf(", \"parent\": ");
			if (m->parent[0])
				json_str(m->parent);
			else
				printf("null");
		} else {
			printf(", \"problem\": ");
			json_str(problem);
		}
		printf("}");
	} else {
		if (!ctx->n)
			printf("%-28s %-20s %-10s %9s  %-8s %-28s %s\n", "HANDLE", "TIME", "PIDS",
			       "SIZE MiB", "DEBUGGER", "PARENT", "PROGRAM");
		if (m) {
			char pids[64] = "";
			size_t len = 0;

			for (i = 0; i < m->nr_procs && len < sizeof(pids) - 12; i++)
				len += (size_t)snprintf(pids + len, sizeof(pids) - len, "%s%d",
							i ? "," : "", m->procs[i].pid);
			printf("%-28s %-20s %-10s %9.1f  %-8s %-28s %s\n", handle, when, pids,
			       (double)bytes / (1 << 20), m->debugger ? "yes" : "no",
			       m->parent[0] ? m->parent : "-", m->program);
		} else {
			printf("%-28s INVALID: %s\n", handle, problem);
		}
	}
	ctx->n++;
}

int cmd_list(int argc, char **argv)
{
	struct common_opts c = { .backend = FREEZE_BACKEND_AUTO };
	struct list_ctx ctx = { 0 };
	const char *root;
	int i, n, r;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "list");
		return 0;
	}
	for (i = 0; i < argc; i += n) {
		n = common_opt(argc, argv, i, &c, "list");
		if (n < 0)
			return 2;
		if (n)
			continue;
		n = 1;
		if (!strcmp(argv[i], "--json")) {
			ctx.json = true;
		} else {
			cli_error("list: unknown argument \"%s\", try \"crdbg list --help\"", argv[i]);
			return 2;
		}
	}
	root = crs_store_root(c.store);
	if (ctx.json)
		printf("[");
	r = crs_store_list(root, list_one, &ctx);
	if (!r)
		r = cli_list_jobs(root, ctx.json, ctx.n > 0);
	if (ctx.json)
		printf("\n]\n");
	if (r) {
		cli_error("list: cannot read store %s: %s", root, strerror(-r));
		return 1;
	}
	return 0;
}

/*
 * Every image of every HANDLE is there and intact (sizes, SHA-256, the
 * metadata's own checksum): what restart checks first, for a set of
 * parts that must all come back or none (the console's restart of a job).
 */
/* The part's metadata is the one its job's manifest recorded. */
static bool expected_meta(const char *root, const char *handle, const char *hex, char *err,
			  size_t errlen)
{
	uint8_t want[32], got[32];

	if (!crs_digest_from_hex(hex, want, sizeof(want))) {
		snprintf(err, errlen, "--expect-meta needs 64 hex digits");
		return false;
	}
	if (crs_job_part_digest(root, handle, got, err, errlen))
		return false;
	if (memcmp(want, got, sizeof(got))) {
		snprintf(err, errlen, "checkpoint %s is not the part its job recorded: its metadata changed",
			 handle);
		return false;
	}
	return true;
}

int cmd_verify(int argc, char **argv)
{
	struct common_opts c = { .backend = FREEZE_BACKEND_AUTO };
	char err[1024], h[CRS_HANDLE_MAX];
	const char **handles, *root;
	int i, n, bad = 0, nh = 0;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "verify");
		return 0;
	}
	handles = calloc(argc + 1, sizeof(*handles));
	if (!handles)
		return 1;
	for (i = 0; i < argc; i += n) {
		n = common_opt(argc, argv, i, &c, "verify");
		if (n < 0)
			goto usage;
		if (n)
			continue;
		n = 1;
		if (!strcmp(argv[i], "--part")) {
			c.part = true;
			continue;
		}
		if (argv[i][0] == '-') {
			cli_error("verify: unknown argument \"%s\", try \"crdbg verify --help\"",
				  argv[i]);
			goto usage;
		}
		handles[nh++] = argv[i];
	}
	if (!nh) {
		cli_error("verify: which checkpoints? usage: crdbg verify HANDLE... (see \"crdbg list\")");
		goto usage;
	}
	root = crs_store_root(c.store);
	for (i = 0; i < nh; i++) {
		const char *handle = handles[i];
		struct crs_meta m;

		/* A pasted "MPIR checkpoint handle) X" line too. */
		if (!crs_parse_checkpoint_handle(handle, h, sizeof(h)))
			handle = h;
		if (crs_job_exists(root, handle)) {
			struct crs_job_opts jo = { 0 };

			job_opts(&c, &jo);
			jo.handle = handle;
			if (crs_job_verify(&jo, err, sizeof(err))) {
				cli_error("verify: job %s: %s", handle, err);
				bad++;
			} else {
				printf("%s: ok\n", handle);
			}
			continue;
		}
		crs_meta_init(&m);
		if (c.expect_meta && !expected_meta(root, handle, c.expect_meta, err, sizeof(err))) {
			cli_error("verify: %s", err);
			bad++;
		} else if (crs_store_load(root, handle, &m, err, sizeof(err)) ||
		    crs_store_verify_chain(root, handle, &m, false, err, sizeof(err))) {
			cli_error("verify: %s", err);
			bad++;
		} else {
			printf("%s: ok\n", handle);
		}
		crs_meta_free(&m);
	}
	free(handles);
	return bad ? 1 : 0;
usage:
	free(handles);
	return 2;
}

int cmd_rm(int argc, char **argv)
{
	struct common_opts c = { .backend = FREEZE_BACKEND_AUTO };
	const char *handle = NULL, *root;
	int i, n, r;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "rm");
		return 0;
	}
	for (i = 0; i < argc; i += n) {
		n = common_opt(argc, argv, i, &c, "rm");
		if (n < 0)
			return 2;
		if (n)
			continue;
		n = 1;
		if (!strcmp(argv[i], "--part")) {
			c.part = true;
		} else if (argv[i][0] != '-' && !handle) {
			handle = argv[i];
		} else {
			cli_error("rm: unknown argument \"%s\", try \"crdbg rm --help\"", argv[i]);
			return 2;
		}
	}
	if (!handle) {
		cli_error("rm: which checkpoint? usage: crdbg rm HANDLE");
		return 2;
	}
	root = crs_store_root(c.store);
	if (crs_job_exists(root, handle)) {
		struct crs_job_opts jo = { 0 };
		char err[1024];

		job_opts(&c, &jo);
		jo.handle = handle;
		if (crs_job_remove(&jo, err, sizeof(err))) {
			cli_error("rm: job %s: %s", handle, err);
			return 1;
		}
		return 0;
	}
	if (!c.part) {
		char job[CRS_HANDLE_MAX];

		if (!crs_job_owning(root, handle, job, sizeof(job)) && job[0]) {
			cli_error("rm: %s is a part of job checkpoint %s: \"crdbg rm %s\" removes the whole job",
				  handle, job, job);
			return 1;
		}
	}
	r = crs_store_remove(root, handle);
	if (r == -ENOENT && c.part)
		return 0;	/* a part already gone: the job's rm goes on */
	if (r == -EBUSY) {
		char deps[512];

		crs_store_dependents(root, handle, deps, sizeof(deps));
		cli_error("rm: incremental checkpoints depend on %s (their pages are in it): %s; remove them first",
			  handle, deps);
		return 1;
	}
	if (r == -EINVAL) {
		cli_error("rm: invalid checkpoint handle \"%s\"", handle);
		return 1;
	}
	if (r == -ENOENT) {
		cli_error("rm: unknown checkpoint handle \"%s\" in %s, try \"crdbg list\"", handle,
			  root);
		return 1;
	}
	if (r) {
		cli_error("rm: cannot remove %s from %s: %s", handle, root, strerror(-r));
		return 1;
	}
	return 0;
}
