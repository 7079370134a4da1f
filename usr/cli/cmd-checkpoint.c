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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli-job.h"
#include "cli-service.h"
#include "help.h"
#include <crdbg/crs.h>
#include <crdbg/restart-check.h>
#include <crdbg/mpir-checkpoint.h>

struct common_opts {
	const char *store;
	enum freeze_backend_kind backend;
	bool verbose;
	/* job checkpoints */
	const char *launch;	/* template for parts on other nodes */
	int timeout_s;
};

/* A command's failure: its line on stderr; returns the exit code. */
static int failed(const char *cmd, const char *why)
{
	cli_error("%s: %s", cmd, why);
	return 1;
}

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
	if (!strcmp(argv[i], "--launch") || !strcmp(argv[i], "--timeout")) {
		if (i + 1 >= argc) {
			cli_error("%s: %s needs a value", cmd, argv[i]);
			return -1;
		}
		if (argv[i][2] == 'l') {
			c->launch = argv[i + 1];
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

/*
 * A command's arguments: the options every command shares, then each
 * other one through arg(argc, argv, i, ctx), which returns how many
 * arguments it took, 0 for one it does not know, or -1 once it said
 * why. Returns 0, or 2 for a usage error (said).
 */
typedef int (*cmd_arg_fn)(int argc, char **argv, int i, void *ctx);

static int parse_args(int argc, char **argv, const char *cmd, struct common_opts *c,
		      cmd_arg_fn arg, void *ctx)
{
	for (int i = 0, n; i < argc; i += n) {
		n = common_opt(argc, argv, i, c, cmd);
		if (!n)
			n = arg(argc, argv, i, ctx);
		if (!n)
			cli_error("%s: unknown argument \"%s\", try \"crdbg %s --help\"", cmd,
				  argv[i], cmd);
		if (n <= 0)
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

struct checkpoint_args {
	struct crs_checkpoint_opts *o;
	const char **criu_opts;
	const char *job;
	bool have_pid;
};

static int checkpoint_arg(int argc, char **argv, int i, void *ctx)
{
	struct checkpoint_args *a = ctx;
	struct crs_checkpoint_opts *o = a->o;
	char err[1024];

	if (!strcmp(argv[i], "--stop")) {
		o->after = CRS_AFTER_STOP;
	} else if (!strcmp(argv[i], "--kill")) {
		o->after = CRS_AFTER_KILL;
	} else if (!strcmp(argv[i], "--debug")) {
		o->debug = CRS_DEBUG_SET;
	} else if (!strcmp(argv[i], "--no-debug")) {
		o->debug = CRS_DEBUG_CLEAR;
	} else if (!strcmp(argv[i], "--no-tree")) {
		o->descendants = false;
	} else if (!strcmp(argv[i], "--full")) {
		o->full = true;
	} else if (!strcmp(argv[i], "--no-pre-dump")) {
		o->no_pre_dump = true;
	} else if (!strcmp(argv[i], "--job") && i + 1 < argc) {
		a->job = argv[i + 1];
		return 2;
	} else if (!strcmp(argv[i], "--criu-opt") || !strncmp(argv[i], "--criu-opt=", 11)) {
		bool joined = argv[i][10] == '=';
		const char *v = joined ? argv[i] + 11 : i + 1 < argc ? argv[i + 1] : NULL;

		if (!v) {
			cli_error("checkpoint: --criu-opt needs a CRIU option, e.g. --criu-opt=--file-locks");
			return -1;
		}
		if (crs_criu_opt_check(v, err, sizeof(err))) {
			cli_error("checkpoint: %s", err);
			return -1;
		}
		if (o->nr_criu_opts >= CRS_MAX_CRIU_OPTS) {
			cli_error("checkpoint: more than %d --criu-opt", CRS_MAX_CRIU_OPTS);
			return -1;
		}
		a->criu_opts[o->nr_criu_opts++] = v;
		return joined ? 1 : 2;
	} else if (argv[i][0] != '-' && !a->have_pid) {
		if (!parse_pid(argv[i], &o->pid)) {
			cli_error("checkpoint: \"%s\" is not a pid", argv[i]);
			return -1;
		}
		a->have_pid = true;
	} else {
		return 0;
	}
	return 1;
}

int cmd_checkpoint(int argc, char **argv)
{
	struct common_opts c = { .backend = FREEZE_BACKEND_AUTO };
	struct crs_checkpoint_opts o = {
		.descendants = true, .after = CRS_AFTER_CONTINUE, .debug = CRS_DEBUG_KEEP,
		.log = stderr,
	};
	const char *criu_opts[CRS_MAX_CRIU_OPTS];
	struct checkpoint_args a = { .o = &o, .criu_opts = criu_opts };
	char handle[CRS_HANDLE_MAX], err[1024], jobid[32] = "slurm:";
	int r;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "checkpoint");
		return 0;
	}
	if (parse_args(argc, argv, "checkpoint", &c, checkpoint_arg, &a))
		return 2;
	if (a.job)
		return checkpoint_job(&c, &o, a.job, a.have_pid);
	if (!a.have_pid) {
		cli_error("checkpoint: which pid? usage: crdbg checkpoint PID [options]");
		return 2;
	}
	/* one host's tree would hold the launcher without its daemons */
	if (o.descendants && crs_slurm_launcher_job(o.pid, jobid + 6, sizeof(jobid) - 6)) {
		fprintf(stderr, "crdbg: pid %d starts its daemons through srun in Slurm job %s: the whole job is checkpointed (--job %s)\n",
			o.pid, jobid + 6, jobid);
		return checkpoint_job(&c, &o, jobid, false);
	}
	o.backend = c.backend;
	o.store = c.store;
	o.verbose = c.verbose;
	o.criu_opts = criu_opts;
	r = cli_service_wanted() ? cli_service_checkpoint(&o, handle, sizeof(handle), err, sizeof(err)) :
				   crs_checkpoint(&o, handle, sizeof(handle), err, sizeof(err));
	if (r)
		return failed("checkpoint", err);
	if (o.after == CRS_AFTER_STOP)
		fprintf(stderr, "crdbg: pid %d and its descendants are left stopped; kill -CONT resumes them\n",
			o.pid);
	fprintf(stderr, CRS_HANDLE_PREFIX "%s\n", handle);
	printf("%s\n", handle);
	return 0;
}

struct restart_args {
	struct common_opts *c;
	struct crs_restart_opts *o;
	int join;
};

static int restart_arg(int argc, char **argv, int i, void *ctx)
{
	struct restart_args *a = ctx;
	struct crs_restart_opts *o = a->o;

	if (!strcmp(argv[i], "--debug")) {
		o->debug = true;
	} else if (!strcmp(argv[i], "--lazy")) {
		o->lazy = true;
	} else if (!strcmp(argv[i], "--join")) {
		char *end;
		long v;

		errno = 0;
		v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : -1;
		if (i + 1 >= argc || errno || *end || end == argv[i + 1] || v < 1 || v > 4096) {
			cli_error("restart: --join needs the number of a terminal the restart named (1, 2, ...)");
			return -1;
		}
		a->join = (int)v;
		return 2;
	} else if (!strcmp(argv[i], "--terminal-fd")) {
		char *end;
		long v;

		errno = 0;
		v = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : -1;
		if (i + 1 >= argc || errno || *end || end == argv[i + 1] || v < 0 || v > 1023) {
			cli_error("restart: --terminal-fd needs the number of an open file descriptor");
			return -1;
		}
		if (!isatty((int)v)) {
			cli_error("restart: --terminal-fd %ld is not an open terminal", v);
			return -1;
		}
		o->terminal_fd = (int)v;
		o->has_terminal = true;
		return 2;
	} else if (argv[i][0] != '-' && !o->handle) {
		o->handle = argv[i];
	} else {
		return 0;
	}
	return 1;
}

int cmd_restart(int argc, char **argv)
{
	struct common_opts c = { .backend = FREEZE_BACKEND_AUTO };
	struct crs_restart_opts o = { .log = stderr, .terminal_fd = -1 };
	struct restart_args a = { .c = &c, .o = &o, .join = -1 };
	char err[1024], h[CRS_HANDLE_MAX];
	int r, st = 0, join;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "restart");
		return 0;
	}
	if (parse_args(argc, argv, "restart", &c, restart_arg, &a))
		return 2;
	join = a.join;
	if (!o.handle) {
		cli_error("restart: which checkpoint? usage: crdbg restart HANDLE (see \"crdbg list\")");
		return 2;
	}
	/* Accept a pasted "MPIR checkpoint handle) X" line too. */
	if (!crs_parse_checkpoint_handle(o.handle, h, sizeof(h)))
		o.handle = h;
	/* a job's coordinator is ours to run: its parts ask each node's service */
	if (join > 0 || crs_job_exists(crs_store_root(c.store), o.handle)) {
		struct crs_job_opts jo = { 0 };

		if (o.lazy || o.has_terminal) {
			cli_error("restart: %s is a job checkpoint: no %s with it", o.handle,
				  o.lazy ? "--lazy" : "--terminal-fd");
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
	} else if (cli_service_wanted()) {
		o.backend = c.backend;
		o.store = c.store;
		o.verbose = c.verbose;
		r = cli_service_restart(&o, &st, err, sizeof(err));
	} else {
		o.backend = c.backend;
		o.store = c.store;
		o.verbose = c.verbose;
		o.relay_stdin = true;
		r = crs_restart(&o, &st, err, sizeof(err));
	}
	if (r)
		return failed("restart", err);
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

static int list_arg(int argc, char **argv, int i, void *arg)
{
	struct list_ctx *ctx = arg;

	(void)argc;
	if (strcmp(argv[i], "--json"))
		return 0;
	ctx->json = true;
	return 1;
}

int cmd_list(int argc, char **argv)
{
	struct common_opts c = { .backend = FREEZE_BACKEND_AUTO };
	struct list_ctx ctx = { 0 };
	const char *root;
	int r;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "list");
		return 0;
	}
	if (parse_args(argc, argv, "list", &c, list_arg, &ctx))
		return 2;
	root = crs_store_root(c.store);
	if (cli_service_wanted()) {
		char err[1024];

		if (ctx.json)
			printf("[");
		r = cli_service_list(c.store, list_one, &ctx, err, sizeof(err));
		/* a user's job manifests are in a store of the user's own */
		if (!r && strcmp(root, CRS_STORE_DEFAULT) && cli_list_jobs(root, ctx.json, ctx.n > 0))
			snprintf(err, sizeof(err), "cannot read the job checkpoints of %s", root), r = 1;
		if (ctx.json)
			printf("\n]\n");
		return r ? failed("list", err) : 0;
	}
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

/* verify's and rm's own: their handles (as many as max). */
struct handle_args {
	const char **handles;
	int n, max;
};

static int handle_arg(int argc, char **argv, int i, void *ctx)
{
	struct handle_args *a = ctx;

	(void)argc;
	if (argv[i][0] != '-' && a->n < a->max)
		a->handles[a->n++] = argv[i];
	else
		return 0;
	return 1;
}

int cmd_verify(int argc, char **argv)
{
	struct common_opts c = { .backend = FREEZE_BACKEND_AUTO };
	struct handle_args a = { .max = argc };
	char err[1024], h[CRS_HANDLE_MAX];
	const char **handles, *root;
	int i, r, bad = 0, nh;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "verify");
		return 0;
	}
	handles = calloc(argc + 1, sizeof(*handles));
	if (!handles)
		return 1;
	a.handles = handles;
	if (parse_args(argc, argv, "verify", &c, handle_arg, &a))
		goto usage;
	nh = a.n;
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
		if (cli_service_wanted()) {
			if (cli_service_verify(c.store, handle, err, sizeof(err))) {
				failed("verify", err);
				bad++;
			} else {
				printf("%s: ok\n", handle);
			}
			continue;
		}
		/* every image there and intact: what restart checks first */
		crs_meta_init(&m);
		if ((r = crs_store_load(root, handle, &m, err, sizeof(err))) ||
		    (r = crs_restart_check(root, handle, &m, err, sizeof(err)))) {
			failed("verify", err);
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
	struct handle_args a = { .handles = &handle, .max = 1 };
	char err[1024];
	int r;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "rm");
		return 0;
	}
	if (parse_args(argc, argv, "rm", &c, handle_arg, &a))
		return 2;
	if (!handle) {
		cli_error("rm: which checkpoint? usage: crdbg rm HANDLE");
		return 2;
	}
	root = crs_store_root(c.store);
	if (crs_job_exists(root, handle)) {
		struct crs_job_opts jo = { 0 };

		job_opts(&c, &jo);
		jo.handle = handle;
		if (crs_job_remove(&jo, err, sizeof(err))) {
			cli_error("rm: job %s: %s", handle, err);
			return 1;
		}
		return 0;
	}
	{
		char job[CRS_HANDLE_MAX];

		/* a user's job manifests are in a store of the user's own */
		if ((!cli_service_wanted() || strcmp(root, CRS_STORE_DEFAULT)) &&
		    !crs_job_owning(root, handle, job, sizeof(job)) && job[0]) {
			cli_error("rm: %s is a part of job checkpoint %s: \"crdbg rm %s\" removes the whole job",
				  handle, job, job);
			return 1;
		}
	}
	if (cli_service_wanted())
		return cli_service_rm(c.store, handle, err, sizeof(err)) ? failed("rm", err) : 0;
	r = crs_store_remove(root, handle);
	if (!r)
		return 0;
	crs_store_remove_why(root, handle, r, err, sizeof(err));
	return failed("rm", err);
}
