// SPDX-License-Identifier: GPL-2.0
/*
 * MPIR process acquisition (the MPI Forum's "MPIR Process Acquisition
 * Interface") from any starter that implements it, recognised by its
 * symbols (mpir-probe.c), not its name: Open MPI's mpirun, Slurm's srun,
 * MPICH's mpiexec.hydra when its debug symbols are installed. The
 * launcher runs (or is attached to) under a gdb of our own: we set
 * MPIR_being_debugged as soon as the object defining it is loaded, stop
 * at MPIR_Breakpoint once the job is spawned, read MPIR_proctable, start
 * one SDM server per node, attach a gdb of the node's server to each of
 * its ranks by node-local pid, set MPIR_debug_gate in every rank and let
 * the launcher go on.
 *
 * Launchers carry no debug information: their symbols are read through
 * casts. MPIR_PROCDESC is { char *host_name; char *executable_name;
 * int pid; } (24 bytes on LP64).
 *
 * What the families do differently:
 *  - Open MPI: its ranks wait in MPI_Init for a PMIx "debugger release"
 *    event that mpirun sends once it leaves MPIR_Breakpoint; PMIx drops
 *    it from its cache after pmix_event_eviction_time. Ranks that reach
 *    the wait later (held by us meanwhile) would wait for ever, so each
 *    rank is run to its wait before mpirun goes on and out of it after
 *    (release_orte_ranks()). Output is tagged with --tag-output.
 *  - srun: tasks are stopped at exec and woken by a SIGCONT after
 *    MPIR_Breakpoint; a tracer absorbs it, so a rank we detach from is
 *    continued by its server. Output is labelled with --label.
 *  - Ranks on other nodes: their nodes' servers are started inside the
 *    job with srun --overlap --jobid, one step per node (or the
 *    CRDBG_SERVER_LAUNCH template, once per node).
 *
 * With crdbg debug --preload the job is made checkpointable (see
 * checkpoint.c): the ranks get the library through the launcher, its
 * stdio is FIFOs, and as root the job gets a network namespace.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crdbg/dbgproto.h"
#include "crdbg/gdbmi.h"
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "mpir.h"
#include "launcher-env.h"
#include "mpir-probe.h"
#include "proctable.h"
#include "ranks.h"
#include "session.h"

#define MPIR_TIMEOUT_MS		180000
#define MPIR_PATH_MAX		1024
#define MPIR_EXEC_WAIT_MS	10000
#define MPIR_HOST_MAX		64
/* Open MPI's ranks wait here for the debugger release (see above). */
#define ORTE_HOLD_FUNC		"ompi_rte_wait_for_debugger"

struct dbg_mpir {
	struct dbg_session *s;
	struct mi_driver *launcher;	/* the gdb holding the launcher */
	struct mpir_probe probe;
	bool job_launched;		/* we started the job */
	bool tagged;			/* its output carries rank labels */
	int launcher_pid;
	bool ranks_apart;		/* not in the launcher's tree (srun, other nodes) */
	bool launcher_gone;		/* killed by a restart that brought the ranks back alone */
	char *node_launch;		/* starts {cmd} on {host}: ranks on other nodes */
	struct sdm_idset *held;		/* Open MPI ranks before their debugger wait */
	struct sdm_idset *inside;	/* ...and in it */
	char label_buf[4096];		/* a partial labelled line */
	size_t label_len;
	char changed[768];		/* what crdbg changed about the launch, for its errors */
};

static long read_long(struct mi_driver *d, const char *expr, int *ret_err)
{
	char *val = NULL;
	long v;

	*ret_err = mi_print(d, expr, &val);
	if (*ret_err)
		return 0;
	v = strtol(val, NULL, 0);
	free(val);
	return v;
}

/* A char * value as gdb prints it: 0x5555 "/path/app". */
static int read_string(struct mi_driver *d, const char *expr, char *buf,
		       size_t size)
{
	char *val = NULL, *q, *e;
	int err = mi_print(d, expr, &val);

	if (err)
		return err;
	q = strchr(val, '"');
	e = q ? strrchr(val, '"') : NULL;
	if (!q || e == q) {
		free(val);
		return -EBADMSG;
	}
	snprintf(buf, size, "%.*s", (int)(e - q - 1), q + 1);
	free(val);
	return 0;
}

static int fail(struct mi_driver *d, int err, char *buf, size_t size,
		const char *what)
{
	snprintf(buf, size, "%s: %s", what,
		 err == -EREMOTEIO || err == -EPIPE ? mi_driver_error(d) :
		 strerror(-err));
	return err < 0 ? err : -EIO;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* Wait for the launcher's next stop; an exit is an error saying what. */
static int wait_launcher(struct dbg_mpir *m, const char *what, char *err,
			 size_t errlen)
{
	struct mi_stop st;
	int rc = mi_wait_stop(m->launcher, MPIR_TIMEOUT_MS, &st);

	if (rc <= 0)
		return fail(m->launcher, rc ? rc : -ETIMEDOUT, err, errlen, what);
	if (st.exited) {
		snprintf(err, errlen, "%s exited (status %d) before %s",
			 base_name(m->probe.executable), st.exit_code,
			 strstr(what, "MPIR_Breakpoint") ? "spawning the job" :
			 "it could be debugged");
		mi_stop_release(&st);
		return -ESRCH;
	}
	mi_stop_release(&st);
	return 0;
}

/*
 * Run the launcher to MPIR_Breakpoint with MPIR_being_debugged set: at
 * its first instruction when the executable defines MPIR, else when the
 * shared object that does is loaded.
 */
static int launch(struct dbg_mpir *m, char *err, size_t errlen)
{
	struct mi_driver *d = m->launcher;
	int rc;

	if (m->probe.in_executable)
		rc = mi_driver_cmd(d, NULL, "-exec-run --start");
	else
		rc = mi_driver_cmd(d, NULL, "-catch-load %s",
				   base_name(m->probe.object));
	if (!rc && !m->probe.in_executable)
		rc = mi_run(d);
	if (rc)
		return fail(d, rc, err, errlen, "cannot run the launcher");
	rc = wait_launcher(m, "the launcher did not start", err, errlen);
	if (rc)
		return rc;
	rc = mi_driver_cmd(d, NULL, "-gdb-set var *(int *)&MPIR_being_debugged = 1");
	if (!rc)
		rc = mi_break(d, "MPIR_Breakpoint", NULL);
	if (!rc)
		rc = mi_continue(d);
	if (rc)
		return fail(d, rc, err, errlen, "cannot set up MPIR in the launcher");
	return wait_launcher(m, "the launcher did not reach MPIR_Breakpoint",
			     err, errlen);
}

/*
 * The job's processes: MPIR_proctable's size and address from gdb, the
 * table itself from the launcher's memory in bulk (proctable.c).
 */
static int read_proctable(struct mi_driver *d, pid_t launcher, struct dbg_proc **ret,
			  long *ret_n, char *err, size_t errlen)
{
	struct dbg_proc *p;
	long n, addr;
	int rc;

	n = read_long(d, "*(int *)&MPIR_proctable_size", &rc);
	if (rc)
		return fail(d, rc, err, errlen, "cannot read MPIR_proctable_size");
	addr = read_long(d, "*(long *)&MPIR_proctable", &rc);
	if (rc)
		return fail(d, rc, err, errlen, "cannot read MPIR_proctable");
	if (n <= 0 || n > MPIR_PROCTABLE_MAX) {
		snprintf(err, errlen, "MPIR_proctable_size is %ld (no job, or not a size)", n);
		return -ERANGE;
	}
	p = calloc((size_t)n, sizeof(*p));
	if (!p)
		return -ENOMEM;
	rc = mpir_proctable_read(launcher, (uint64_t)addr, n, p, err, errlen);
	if (rc) {
		free(p);
		return rc;
	}
	*ret = p;
	*ret_n = n;
	return 0;
}

/*
 * The launcher may reach MPIR_Breakpoint while a local rank is still the
 * forked launcher, before its exec: gdb would attach to that image. Wait
 * (a while) until each local pid runs the executable its entry names.
 * A remote rank's server attaches by pid on its node.
 */
static void wait_exec(const struct dbg_proc *p, long n)
{
	char link[64], exe[MPIR_PATH_MAX], want[MPIR_PATH_MAX];
	struct timespec nap = { 0, 20 * 1000 * 1000 };

	for (long i = 0; i < n; i++) {
		if (!dbg_host_is_local(p[i].host) || !realpath(p[i].exe, want))
			continue;
		snprintf(link, sizeof(link), "/proc/%d/exe", p[i].pid);
		for (int k = 0; k < MPIR_EXEC_WAIT_MS / 20; k++) {
			ssize_t l = readlink(link, exe, sizeof(exe) - 1);

			if (l < 0)
				break;	/* gone, or not ours: attach will say */
			exe[l] = 0;
			if (!strcmp(exe, want))
				break;
			nanosleep(&nap, NULL);
		}
	}
}

/*
 * A variable of the launcher's environment as it was started (the
 * launcher runs on this machine), or "".
 */
static void launcher_getenv(int pid, const char *name, char *buf, size_t size)
{
	char path[64], *env = NULL;
	size_t len = 0, cap = 0, nlen = strlen(name);
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (getdelim(&env, &cap, 0, f) > 0) {
		len = strlen(env);
		if (len > nlen && !strncmp(env, name, nlen) && env[nlen] == '=') {
			snprintf(buf, size, "%s", env + nlen + 1);
			break;
		}
	}
	free(env);
	fclose(f);
}

/*
 * The Slurm job the launcher's ranks run in: srun names it in
 * totalview_jobid (the MPIR debugger's variable, set once the job has an
 * allocation, whether srun made it or runs inside salloc/sbatch); any
 * other launcher started inside an allocation has it in its environment.
 */
static void slurm_jobid(struct dbg_mpir *m, char *buf, size_t size)
{
	buf[0] = 0;
	if (m->probe.family == MPIR_FAMILY_SLURM &&
	    read_string(m->launcher, "*(char **)&totalview_jobid", buf, size))
		buf[0] = 0;
	if (!buf[0])
		launcher_getenv(m->launcher_pid, "SLURM_JOB_ID", buf, size);
}

/*
 * Where the servers run: one per node, driving the node's ranks. All
 * ranks here: forked locally (no launcher), 0. Else on the nodes, 1:
 * started inside the launcher's Slurm job (srun --overlap, one step per
 * node), or with the CRDBG_SERVER_LAUNCH template ("ssh {host} {cmd}").
 */
static int place_servers(struct dbg_mpir *m, const struct dbg_proc *p, long n,
			 struct dbg_placement *where, char *err, size_t errlen)
{
	const char *user_tmpl = getenv("CRDBG_SERVER_LAUNCH");
	char jobid[32] = "";
	bool remote = false;
	int rc;

	for (long i = 0; i < n; i++)
		remote |= !dbg_host_is_local(p[i].host);
	rc = dbg_ranks_by_node(p, n, where, err, errlen);
	if (rc < 0 || !remote)
		return rc;
	if (user_tmpl && *user_tmpl) {
		where->launcher = strdup(user_tmpl);
	} else {
		slurm_jobid(m, jobid, sizeof(jobid));
		if (!jobid[0] || strspn(jobid, "0123456789") != strlen(jobid)) {
			snprintf(err, errlen, "the job's ranks run on other nodes "
				 "(%.64s...) but it is not a Slurm job: set "
				 "CRDBG_SERVER_LAUNCH to a template that starts {cmd} "
				 "on {host}", p[0].host);
			return -EHOSTUNREACH;
		}
		/*
		 * A step of the job on that node: it shares the job's
		 * resources (--overlap), needs no MPI plugin and stays quiet
		 * but for the server's ready line.
		 */
		if (asprintf((char **)&where->launcher,
			     "srun --overlap --jobid=%s -w {host} -N1 -n1 "
			     "--mpi=none --quiet --kill-on-bad-exit=0 {cmd}",
			     jobid) < 0)
			where->launcher = NULL;
	}
	return where->launcher ? 1 : -ENOMEM;
}

/* Append text to m->changed, "; "-separated. */
static void note_change(struct dbg_mpir *m, const char *text)
{
	size_t len = strlen(m->changed);

	snprintf(m->changed + len, sizeof(m->changed) - len, "%s%s", len ? "; " : "", text);
}

/*
 * The launcher's command line with what we need added after its name:
 * rank labels on the ranks' output, and the preload library for the
 * ranks only, in each launcher's own option for the ranks' environment
 * (never the launcher's: mpirun and mpiexec start their daemons with it,
 * through srun in an allocation). NULL on ENOMEM.
 */
static char **launcher_argv(struct dbg_mpir *m, char *const *argv,
			    const char *lib, char **ret_made)
{
	const char *env[DBG_LAUNCHER_ENV_MAX_ARGS];
	size_t n = 0, k = 1;
	char **v, note[sizeof(m->changed)] = "added";
	int nenv = 0;

	*ret_made = NULL;
	while (argv[n])
		n++;
	v = calloc(n + 2 + DBG_LAUNCHER_ENV_MAX_ARGS, sizeof(*v));
	if (!v)
		return NULL;
	v[0] = argv[0];
	if (m->probe.family == MPIR_FAMILY_ORTE)
		v[k++] = "--tag-output";
	else if (m->probe.family == MPIR_FAMILY_SLURM)
		v[k++] = "--label";
	m->tagged = k > 1;
	if (lib)
		nenv = dbg_launcher_preload_args(m->probe.family, lib, env, ret_made);
	if (nenv < 0) {
		free(v);
		return NULL;
	}
	for (int i = 0; i < nenv; i++)
		v[k++] = (char *)env[i];
	for (size_t i = 1; i < k; i++) {
		size_t len = strlen(note);

		snprintf(note + len, sizeof(note) - len, " %s", v[i]);
	}
	if (k > 1)
		note_change(m, note);
	if (lib && !nenv)
		note_change(m, "no option of this launcher's passes --preload to the ranks only: not passed");
	memcpy(v + k, argv + 1, n * sizeof(*v));	/* with the NULL */
	return v;
}

/*
 * Inside a Slurm allocation a launcher starts its daemons on the nodes
 * with srun (Open MPI's orted, hydra's proxies), which must reach the
 * controller: no network namespace of its own there.
 */
static bool in_allocation(void)
{
	const char *id = getenv("SLURM_JOB_ID");

	if (!id || !*id)
		id = getenv("SLURM_JOBID");
	return id && *id;
}

/* err, then what crdbg changed about the launch, if anything. */
static void say_changes(const struct dbg_mpir *m, char *err, size_t errlen)
{
	size_t len = strlen(err);

	if (m->changed[0] && len + 1 < errlen)
		snprintf(err + len, errlen - len, " (crdbg changed the launch: %s)", m->changed);
}

static void ranks_do(struct dbg_session *s, const struct sdm_idset *set,
		     const struct dbgp_cmd *c)
{
	struct sdm_fe_result r;

	if (!sdm_set_is_empty(set) && dbg_send(s, set, c, dbg_load_timeout(s), &r) == 0)
		sdm_fe_result_free(&r);
}

static void ranks_cli(struct dbg_session *s, const struct sdm_idset *set,
		      const char *cli)
{
	struct dbgp_cmd c = { .verb = DBGP_CLI, .arg = cli };

	ranks_do(s, set, &c);
}

static void ranks_exec(struct dbg_session *s, const struct sdm_idset *set,
		       enum dbgp_exec kind)
{
	struct dbgp_cmd c = { .verb = DBGP_EXEC, .exec = kind,
			      .wait_ms = MPIR_TIMEOUT_MS / 2 };

	ranks_do(s, set, &c);
}

/*
 * srun's tasks were stopped at exec by a SIGSTOP, and that group stop
 * outlives gdb's attach: a task its gdb detaches from (the console's
 * checkpoint, detach, quit of an attached job) stops again, for ever
 * (seen on the namespaced cluster: state T in do_signal_stop). A SIGCONT
 * sent on the task's node by its gdb (the task's pid is the node's own)
 * while it stands at its first instruction, before the program installed
 * any handler, ends the group stop; gdb passes it on when the task runs.
 */
static void end_exec_stops(struct dbg_session *s, const struct dbg_proc *procs, long n)
{
	struct sdm_idset *one = sdm_set_new();
	char cmd[64];

	for (long i = 0; one && i < n; i++) {
		sdm_set_clear(one);
		if (sdm_set_add_element(one, (sdm_id)i) < 0)
			break;
		snprintf(cmd, sizeof(cmd), "shell kill -CONT %d", procs[i].pid);
		ranks_cli(s, one, cmd);
	}
	sdm_set_free(one);
}

/*
 * Open MPI's debugger hold (see the top of this file). Before mpirun goes
 * on: note the ranks already in their wait (they asked for the release
 * and get it when mpirun sends it), and put a temporary breakpoint at the
 * wait's entry in the others (a rank that has not loaded libmpi yet is
 * run to main first; one that never does is not an MPI rank and stays
 * there).
 */
static void hold_orte_ranks(struct dbg_mpir *m, const struct sdm_idset *all)
{
	struct dbgp_cmd where = { .verb = DBGP_CLI,
				  .arg = "info address " ORTE_HOLD_FUNC };
	struct dbgp_cmd bt = { .verb = DBGP_BT };
	static const char *const replies[] = { "No symbol", " is at " };
	struct dbg_session *s = m->s;
	struct sdm_idset *sorted[2], *mpi;

	if (dbg_ranks_sort(s, all, &where, DBG_CMD_TIMEOUT, replies, sorted, 2))
		return;
	mpi = sorted[1];
	/* A rank acquired before libmpi was mapped runs to main, then says. */
	if (!sdm_set_is_empty(sorted[0])) {
		struct sdm_idset *late;

		ranks_cli(s, sorted[0], "tbreak main");
		ranks_exec(s, sorted[0], DBGP_EXEC_CONTINUE);
		late = dbg_ranks_replying(s, sorted[0], &where, DBG_CMD_TIMEOUT, " is at ");
		if (late)
			sdm_set_union(mpi, late);
		sdm_set_free(late);
	}
	sdm_set_free(sorted[0]);
	m->inside = dbg_ranks_replying(s, mpi, &bt, DBG_CMD_TIMEOUT, ORTE_HOLD_FUNC);
	m->held = sdm_set_copy(mpi);
	if (m->held && m->inside)
		sdm_set_diff(m->held, m->inside);
	if (m->held)
		ranks_cli(s, m->held, "tbreak " ORTE_HOLD_FUNC);
	sdm_set_free(mpi);
}

/*
 * mpirun runs again (MPI_Init's collectives need it). The ranks with the
 * breakpoint run to the wait's entry and return from it at once: with
 * gdb attached there is nothing to wait for, and a release event they
 * never ask for cannot expire. The ranks already waiting finish it.
 * Every rank then stands in MPI_Init, past the hold.
 */
static void release_orte_ranks(struct dbg_mpir *m)
{
	if (m->held && !sdm_set_is_empty(m->held)) {
		ranks_exec(m->s, m->held, DBGP_EXEC_CONTINUE);
		ranks_cli(m->s, m->held, "return");
	}
	if (m->inside && !sdm_set_is_empty(m->inside)) {
		ranks_cli(m->s, m->inside, "frame function " ORTE_HOLD_FUNC);
		ranks_exec(m->s, m->inside, DBGP_EXEC_FINISH);
	}
	sdm_set_free(m->held);
	sdm_set_free(m->inside);
	m->held = m->inside = NULL;
}

/* Probe what we launch or attach to; one line if it implements no MPIR. */
static int probe(struct dbg_mpir *m, char *const *argv, int pid, char *err,
		 size_t errlen)
{
	int rc = argv ? mpir_probe_program(argv[0], &m->probe)
		      : mpir_probe_pid(pid, &m->probe);

	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", argv ? argv[0] : "process",
			 rc == -ENOEXEC ? "not an ELF executable" :
			 rc == -ESRCH ? "no such process" : strerror(-rc));
		return rc;
	}
	if (!m->probe.found) {
		snprintf(err, errlen, "%s implements no MPIR (neither it nor "
			 "its libraries define MPIR_Breakpoint, MPIR_proctable "
			 "and MPIR_being_debugged)%s", m->probe.executable,
			 argv ? "" : ": attach needs the job's launcher");
		return -ENOTSUP;
	}
	return 0;
}

int dbg_mpir_start(struct dbg_mpir *m, char *const *argv, int pid,
		   const char *bindir, char *err, size_t errlen)
{
	struct dbgp_cmd gate = { .verb = DBGP_CLI,
				 .arg = "set var *(int *)&MPIR_debug_gate = 1" };
	struct dbg_session *s = m->s;
	struct mi_driver_opts o = { 0 };
	struct dbg_placement where = { 0 };
	struct sdm_fe_result r;
	const char *preload = s->preload;
	struct sdm_idset *all;
	struct dbg_proc *procs = NULL;
	char **largv = NULL, *made = NULL;
	bool launching = argv != NULL;	/* else attach to pid */
	bool remote;
	long n = 0;
	int rc;

	rc = probe(m, argv, pid, err, errlen);
	if (rc)
		return rc;
	o.cmd_timeout_ms = MPIR_TIMEOUT_MS;
	o.index_cache = true;
	if (launching) {
		largv = launcher_argv(m, argv, preload, &made);
		if (!largv)
			return -ENOMEM;
		o.program = largv[0];
		o.args = (const char *const *)largv + 1;
		/*
		 * PMIx's shared-memory store fails its posix_fallocate() with
		 * EINTR when a signal arrives meanwhile, and under ptrace
		 * even ignored signals arrive: the job then dies in MPI_Init
		 * ("PMIX ERROR: OUT-OF-RESOURCE"). Its hash store has no such
		 * step. The user's choice stands.
		 */
		setenv("PMIX_MCA_gds", "hash", 0);
		/*
		 * Open MPI's mpirun prints a screenful on MPIR's deprecation
		 * when a debugger attaches: addressed to the debugger's
		 * vendor, it is noise to the user. The user's choice stands.
		 */
		if (m->probe.family == MPIR_FAMILY_ORTE)
			setenv("OMPI_MPIR_DO_NOT_WARN", "1", 0);
	}
	if (launching && preload) {
		/*
		 * Checkpointable: the launcher's stdio is no terminal CRIU
		 * cannot take, and as root a launcher whose tree holds the
		 * job has a network namespace of its own so that a restored
		 * launcher can bind its ports again. srun must reach its
		 * controller and nodes, and is no part of the image (its
		 * tasks are, each on its node): it keeps the network. So
		 * does a launcher in an allocation (in_allocation()).
		 */
		o.fifo = true;
		note_change(m, "its stdio on FIFOs");
		o.own_netns = geteuid() == 0 && m->probe.family != MPIR_FAMILY_SLURM &&
			      !in_allocation();
		if (o.own_netns)
			note_change(m, "ran it in a network namespace of its own (root, outside an allocation)");
	}
	rc = mi_driver_start(&o, &m->launcher);
	free(made);
	free(largv);
	if (rc) {
		m->launcher = NULL;
		snprintf(err, errlen, "cannot start gdb for the launcher: %s",
			 strerror(-rc));
		say_changes(m, err, errlen);
		return rc;
	}
	if (getenv("CRDBG_DEBUG_FILE_DIR"))
		mi_driver_cmd(m->launcher, NULL, "-gdb-set debug-file-directory %s",
			      mpir_debug_file_dir());
	if (launching) {
		m->job_launched = true;
		rc = launch(m, err, errlen);
		if (rc)
			say_changes(m, err, errlen);
		m->launcher_pid = mi_driver_inferior_pid(m->launcher);
	} else {
		rc = mi_attach(m->launcher, pid);
		if (rc)
			fail(m->launcher, rc, err, errlen, "cannot attach to the launcher");
		m->launcher_pid = pid;
	}
	if (!rc && (rc = read_proctable(m->launcher, m->launcher_pid, &procs, &n, err,
					errlen)) && launching)
		say_changes(m, err, errlen);
	if (!rc)
		rc = place_servers(m, procs, n, &where, err, errlen);
	if (rc < 0) {
		dbg_placement_free(&where);
		free(procs);
		return rc;
	}
	snprintf(s->launcher_name, sizeof(s->launcher_name), "%.31s",
		 base_name(launching ? argv[0] : m->probe.executable));
	remote = rc > 0;
	m->ranks_apart = remote || m->probe.family == MPIR_FAMILY_SLURM;
	if (remote && where.launcher && !(m->node_launch = strdup(where.launcher))) {
		dbg_placement_free(&where);
		free(procs);
		return -ENOMEM;
	}
	rc = dbg_session_start(s, n, bindir, &where, err, errlen);
	dbg_placement_free(&where);
	if (!rc && remote)
		rc = dbg_ranks_set_hosts(s, procs, n);
	if (rc < 0) {
		free(procs);
		return rc;
	}
	wait_exec(procs, n);
	rc = dbg_attach_ranks(s, procs, n);
	if (!rc && launching && m->probe.family == MPIR_FAMILY_SLURM)
		end_exec_stops(s, procs, n);
	free(procs);
	if (rc < 0) {
		snprintf(err, errlen, "cannot attach the ranks: %s", strerror(-rc));
		return rc;
	}
	all = dbg_live(s, s->focus);
	/*
	 * srun's tasks were stopped at exec by a SIGSTOP; attaching to a
	 * stopped task leaves one more for gdb to report, and passing it on
	 * stops the task again, for ever. The debugger swallows SIGSTOP for
	 * them (SIGCONT from slurmstepd is what lets them go).
	 */
	if (all && m->probe.family == MPIR_FAMILY_SLURM)
		ranks_cli(s, all, "handle SIGSTOP nostop noprint nopass");
	/* The launcher's SIGCONT and SIGTERM end the ranks of a dead job. */
	if (all)
		dbg_pass_launcher_signals(s, all);
	if (all && launching && m->probe.family == MPIR_FAMILY_ORTE)
		hold_orte_ranks(m, all);
	/* Release ranks that spin on the gate (gdb holds them now). */
	if (all && dbg_send(s, all, &gate, DBG_CMD_TIMEOUT, &r) == 0)
		sdm_fe_result_free(&r);
	rc = mi_continue(m->launcher);
	if (rc) {
		sdm_set_free(all);
		return fail(m->launcher, rc, err, errlen, "cannot resume the launcher");
	}
	release_orte_ranks(m);
	sdm_set_free(all);
	return 0;
}

/*
 * One labelled line of the launcher's output: "[1,3]<stdout>:text"
 * (Open MPI's --tag-output) or "  3: text" (srun --label). The rank, or
 * -1 with *text the line as it is.
 */
static long label_rank(const struct dbg_mpir *m, const char *line, size_t len,
		       size_t *ret_skip)
{
	const char *p = line, *end = line + len;
	char *q;
	long rank;

	*ret_skip = 0;
	if (m->probe.family == MPIR_FAMILY_ORTE) {
		if (len < 8 || *p != '[')
			return -1;
		p = memchr(p, ',', len);
		if (!p)
			return -1;
		rank = strtol(p + 1, &q, 10);
		if (q >= end || *q != ']' || rank < 0)
			return -1;
		p = memchr(q, ':', end - q);
		if (!p || (strncmp(q, "]<stdout>:", 10) && strncmp(q, "]<stderr>:", 10)))
			return -1;
		*ret_skip = q + 10 - line;
		return rank;
	}
	while (p < end && *p == ' ')
		p++;
	if (p == end || *p < '0' || *p > '9')
		return -1;
	rank = strtol(p, &q, 10);
	if (q + 1 >= end || q[0] != ':' || q[1] != ' ')
		return -1;
	*ret_skip = q + 2 - line;
	return rank;
}

/* Split tagged output into lines and hand each to its rank. */
static void take_labelled(struct dbg_mpir *m, const char *buf, size_t n)
{
	struct dbg_session *s = m->s;

	while (n) {
		size_t room = sizeof(m->label_buf) - m->label_len;
		const char *nl = memchr(buf, '\n', n);
		size_t take = nl ? (size_t)(nl - buf) + 1 : n, skip;
		long rank;

		if (take > room)
			take = room;
		memcpy(m->label_buf + m->label_len, buf, take);
		m->label_len += take;
		buf += take;
		n -= take;
		if (m->label_buf[m->label_len - 1] != '\n' &&
		    m->label_len < sizeof(m->label_buf))
			break;		/* the rest of the line comes later */
		rank = label_rank(m, m->label_buf, m->label_len, &skip);
		if (rank >= 0 && (uint32_t)rank < s->n)
			dbg_rank_output(s, rank, m->label_buf + skip,
					m->label_len - skip);
		else
			dbg_rank_output(s, DBG_MPIRUN, m->label_buf, m->label_len);
		m->label_len = 0;
	}
}

/* Forward the launcher's output (the ranks' stdout passes through it). */
static void forward_output(struct dbg_mpir *m)
{
	struct mi_record *rec;
	char buf[4096];
	ssize_t n;

	if (!m->launcher || !mi_driver_alive(m->launcher))
		return;
	mi_driver_pump(m->launcher, 0);
	while (mi_driver_next_event(m->launcher, 0, &rec) > 0)
		mi_record_free(rec);
	while ((n = mi_driver_read_output(m->launcher, buf, sizeof(buf), 0)) > 0) {
		if (m->tagged)
			take_labelled(m, buf, n);
		else
			dbg_rank_output(m->s, DBG_MPIRUN, buf, n);
	}
	fflush(m->s->out);
}

void dbg_mpir_input(struct dbg_mpir *m, const struct sdm_idset *set, const char *text)
{
	struct dbg_session *s = m->s;
	int rc;

	if (!m->job_launched) {
		dbg_error(s, "input: the stdin of a job joined with crdbg attach is not the console's");
		return;
	}
	if (set && (sdm_set_size(set) != 1 || !sdm_set_contains(set, 0))) {
		dbg_error(s, "input: mpirun forwards its stdin to rank 0 only");
		return;
	}
	if (m->launcher_gone) {
		dbg_error(s, "input: %s ended at the restart and the ranks came back without it: rank 0's stdin is /dev/null",
			  s->launcher_name[0] ? s->launcher_name : "mpirun");
		return;
	}
	rc = mi_driver_write_input(m->launcher, text, strlen(text));
	if (!rc)
		rc = mi_driver_write_input(m->launcher, "\n", 1);
	if (rc)
		dbg_error(s, "input: cannot write to mpirun's stdin: %s", strerror(-rc));
}

/* mpirun stopped in our gdb: 0 or -errno, err set. */
static int stop_launcher(struct dbg_mpir *m, char *err, size_t errlen)
{
	struct mi_stop st;
	int rc;

	if (!m->launcher || m->launcher_pid <= 0) {
		snprintf(err, errlen, "no mpirun of ours");
		return -ESRCH;
	}
	forward_output(m);
	/*
	 * Not -exec-interrupt: gdb would signal mpirun's process group. gdb
	 * does not pass a SIGINT on at the detach.
	 */
	if (kill(m->launcher_pid, SIGINT))
		return fail(m->launcher, -errno, err, errlen, "cannot stop mpirun");
	rc = mi_wait_stop(m->launcher, DBG_CMD_TIMEOUT, &st);
	if (rc <= 0)
		return fail(m->launcher, rc ? rc : -ETIMEDOUT, err, errlen,
			    "mpirun did not stop");
	if (st.exited) {
		mi_stop_release(&st);
		snprintf(err, errlen, "mpirun exited");
		return -ESRCH;
	}
	mi_stop_release(&st);
	return 0;
}

bool dbg_mpir_hold(struct dbg_mpir *m)
{
	char err[256];

	return !stop_launcher(m, err, sizeof(err));
}

void dbg_mpir_kill(struct dbg_mpir *m)
{
	/* gdb's kill: gdb, its parent or tracer, reaps it */
	if (m->launcher && !mi_driver_cmd(m->launcher, NULL, "kill"))
		return;
	if (m->launcher_pid > 0)
		kill(m->launcher_pid, SIGKILL);
}

int dbg_mpir_detach(struct dbg_mpir *m, char *err, size_t errlen)
{
	int rc = stop_launcher(m, err, errlen);

	if (rc)
		return rc;
	rc = mi_detach(m->launcher);
	if (rc) {
		fail(m->launcher, rc, err, errlen, "cannot detach from mpirun");
		mi_continue(m->launcher);	/* as it was: running, ours */
		return rc;
	}
	return 0;
}

int dbg_mpir_reattach(struct dbg_mpir *m, char *err, size_t errlen)
{
	int rc;

	/*
	 * From now on our gdb only interrupts, continues, detaches and kills
	 * mpirun: it needs no symbol of its shared libraries, and reading
	 * them all again (some 60 for Open MPI's) is most of an attach.
	 */
	mi_driver_cmd(m->launcher, NULL, "-gdb-set auto-solib-add off");
	rc = mi_attach(m->launcher, m->launcher_pid);

	if (!rc)
		rc = mi_continue(m->launcher);
	if (rc)
		return fail(m->launcher, rc, err, errlen, "cannot attach to mpirun again");
	return 0;
}

/*
 * The session ends: kill a launched job, or leave it running. The ranks
 * of a job are killed through their gdbs, but an srun job is ended by
 * killing srun once the tree is down (on_stopped): srun's own allocation
 * holds our servers' steps, and the job ending first would cancel them
 * under the tree.
 */
static void on_stop(void *priv)
{
	struct dbgp_cmd kill_cmd = { .verb = DBGP_CLI, .arg = "kill" };
	struct dbg_mpir *m = priv;
	struct dbg_session *s = m->s;
	struct sdm_fe_result r;
	struct sdm_idset *all;

	if (!m->launcher)
		return;
	if (m->job_launched && s->fe && m->probe.family != MPIR_FAMILY_SLURM) {
		/* Our job: it ends with the session. */
		all = sdm_set_new();
		if (all && sdm_set_add_range(all, 0, s->n - 1) == 0) {
			struct sdm_idset *live = dbg_live(s, all);

			if (live && dbg_send(s, live, &kill_cmd, DBG_CMD_TIMEOUT,
					     &r) == 0)
				sdm_fe_result_free(&r);
			sdm_set_free(live);
		}
		sdm_set_free(all);
	}
	forward_output(m);
	dbg_flush_lines(s);
}

static void on_stopped(void *priv)
{
	struct dbg_mpir *m = priv;

	if (!m->launcher)
		return;
	/*
	 * Ours, even when gdb only attached to it (after a checkpoint, or
	 * restored): gdb would detach at its exit.
	 */
	if (m->job_launched && m->launcher_pid > 0 &&
	    mi_driver_inferior_pid(m->launcher) == m->launcher_pid)
		kill(m->launcher_pid, SIGKILL);
	/* Kills the launcher if we started it, detaches if we attached. */
	mi_driver_free(m->launcher);
	m->launcher = NULL;
}

static void on_pump(void *priv)
{
	forward_output(priv);
}

static const struct dbg_listener mpir_listener = {
	.pump = on_pump,
	.stop = on_stop,
	.stopped = on_stopped,
};

struct dbg_mpir *dbg_mpir_new(struct dbg_session *s)
{
	struct dbg_mpir *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->s = s;
	if (dbg_session_listen(s, &mpir_listener, m) < 0) {
		free(m);
		return NULL;
	}
	return m;
}

void dbg_mpir_free(struct dbg_mpir *m)
{
	if (!m)
		return;
	mi_driver_free(m->launcher);
	sdm_set_free(m->held);
	sdm_set_free(m->inside);
	free(m->node_launch);
	free(m);
}

bool dbg_mpir_launched(const struct dbg_mpir *m)
{
	return m->job_launched;
}

int dbg_mpir_pid(const struct dbg_mpir *m)
{
	return m->launcher_pid;
}

void dbg_mpir_launcher_gone(struct dbg_mpir *m)
{
	m->launcher_gone = true;
}

bool dbg_mpir_ranks_apart(const struct dbg_mpir *m, const char **launch)
{
	*launch = m->node_launch;
	return m->ranks_apart;
}

const char *dbg_mpir_restart_problem(const struct dbg_mpir *m)
{
	const char *alloc = getenv("SLURM_JOB_ID");

	if (m->probe.family == MPIR_FAMILY_SLURM && m->job_launched && (!alloc || !*alloc))
		return "this srun made its own allocation, which ends with the job and the session's servers in it: start the session inside an allocation (salloc -N... crdbg debug -- srun ...) to restart an srun job";
	return NULL;
}
