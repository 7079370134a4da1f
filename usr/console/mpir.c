// SPDX-License-Identifier: GPL-2.0
/*
 * MPIR process acquisition (the MPI Forum's "MPIR Process Acquisition
 * Interface") with Open MPI 4.1's mpirun: mpirun runs under a gdb of our
 * own; we set MPIR_being_debugged as soon as libopen-rte is loaded, stop
 * at MPIR_Breakpoint once the job is spawned (its ranks are then held in
 * MPI_Init), read MPIR_proctable, attach one SDM server's gdb to each
 * rank, set MPIR_debug_gate in every rank and let mpirun go on.
 *
 * mpirun carries no debug information: its symbols are read through
 * casts. MPIR_PROCDESC is { char *host_name; char *executable_name;
 * int pid; } (24 bytes on LP64).
 *
 * With crdbg debug --preload the job is made checkpointable (see
 * checkpoint.c): the ranks get the library through mpirun -x, mpirun's
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
#include "session.h"

#define MPIR_TIMEOUT_MS		180000
#define MPIR_DESC_SIZE		24
#define MPIR_MAX_RANKS		4096
#define MPIR_PATH_MAX		1024
#define MPIR_EXEC_WAIT_MS	10000

struct dbg_mpir {
	struct dbg_session *s;
	struct mi_driver *launcher;	/* the gdb holding mpirun */
	bool job_launched;		/* we started the job */
	int mpirun_pid;
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

/* Run mpirun to MPIR_Breakpoint with MPIR_being_debugged set. */
static int launch(struct mi_driver *d, char *err, size_t errlen)
{
	struct mi_stop st;
	int rc;

	rc = mi_driver_cmd(d, NULL, "-catch-load libopen-rte");
	if (!rc)
		rc = mi_run(d);
	if (rc)
		return fail(d, rc, err, errlen, "cannot run mpirun");
	rc = mi_wait_stop(d, MPIR_TIMEOUT_MS, &st);
	if (rc <= 0)
		return fail(d, rc ? rc : -ETIMEDOUT, err, errlen,
			    "mpirun did not load libopen-rte");
	if (st.exited) {
		mi_stop_release(&st);
		snprintf(err, errlen, "mpirun exited before loading libopen-rte "
			 "(is it Open MPI's?)");
		return -ESRCH;
	}
	mi_stop_release(&st);
	rc = mi_driver_cmd(d, NULL, "-gdb-set var *(int *)&MPIR_being_debugged = 1");
	if (!rc)
		rc = mi_break(d, "MPIR_Breakpoint", NULL);
	if (!rc)
		rc = mi_continue(d);
	if (rc)
		return fail(d, rc, err, errlen, "cannot set up MPIR in mpirun");
	rc = mi_wait_stop(d, MPIR_TIMEOUT_MS, &st);
	if (rc <= 0)
		return fail(d, rc ? rc : -ETIMEDOUT, err, errlen,
			    "mpirun did not reach MPIR_Breakpoint");
	if (st.exited) {
		mi_stop_release(&st);
		snprintf(err, errlen, "mpirun exited before spawning the job");
		return -ESRCH;
	}
	mi_stop_release(&st);
	return 0;
}

struct proc {
	int pid;
	char exe[MPIR_PATH_MAX];
};

static int read_proctable(struct mi_driver *d, struct proc **ret, long *ret_n,
			  char *err, size_t errlen)
{
	char expr[160];
	struct proc *p;
	long n;
	int rc;

	n = read_long(d, "*(int *)&MPIR_proctable_size", &rc);
	if (rc)
		return fail(d, rc, err, errlen, "cannot read MPIR_proctable_size");
	if (n <= 0 || n > MPIR_MAX_RANKS) {
		snprintf(err, errlen, "MPIR_proctable_size is %ld (no job, or "
			 "more than %d ranks)", n, MPIR_MAX_RANKS);
		return -ERANGE;
	}
	p = calloc(n, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (long i = 0; i < n; i++) {
		snprintf(expr, sizeof(expr),
			 "*(int *)(*(char **)&MPIR_proctable + %ld)",
			 i * MPIR_DESC_SIZE + 16);
		p[i].pid = read_long(d, expr, &rc);
		if (!rc) {
			snprintf(expr, sizeof(expr),
				 "*(char **)(*(char **)&MPIR_proctable + %ld)",
				 i * MPIR_DESC_SIZE + 8);
			rc = read_string(d, expr, p[i].exe, sizeof(p[i].exe));
		}
		if (rc || p[i].pid <= 0) {
			free(p);
			return fail(d, rc ? rc : -EBADMSG, err, errlen,
				    "cannot read MPIR_proctable");
		}
	}
	*ret = p;
	*ret_n = n;
	return 0;
}

/*
 * mpirun may reach MPIR_Breakpoint while a rank is still the forked
 * launcher, before its exec: gdb would attach to that image. Wait (a
 * while) until each pid runs the executable its table entry names.
 */
static void wait_exec(const struct proc *p, long n)
{
	char link[64], exe[MPIR_PATH_MAX], want[MPIR_PATH_MAX];
	struct timespec nap = { 0, 20 * 1000 * 1000 };

	for (long i = 0; i < n; i++) {
		if (!realpath(p[i].exe, want))
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

/* Attach rank i's gdb to its pid; one request per rank, all in flight. */
static int attach_ranks(struct dbg_session *s, const struct proc *p, long n)
{
	struct sdm_fe_result acc = { 0 };
	uint32_t *req = calloc(n, sizeof(*req));
	struct sdm_idset *one = sdm_set_new();
	char cmd[DBGP_CMD_MAX + 1];
	int rc = 0;

	if (!req || !one) {
		rc = -ENOMEM;
		goto out;
	}
	for (long i = 0; i < n; i++) {
		struct dbgp_cmd c = { .verb = DBGP_ATTACH, .pid = p[i].pid, .arg = p[i].exe };
		int len = dbgp_encode(cmd, sizeof(cmd), &c);

		if (len < 0) {
			rc = len;
			goto out;
		}
		sdm_set_clear(one);
		sdm_set_add_element(one, i);
		rc = sdm_fe_submit(s->fe, one, cmd, len, DBG_LOAD_TIMEOUT, &req[i]);
		if (rc < 0)
			goto out;
	}
	for (long i = 0; i < n; i++) {
		struct sdm_fe_result r;

		if (sdm_fe_collect(s->fe, req[i], &r) < 0)
			continue;
		for (unsigned int k = 0; k < r.nev; k++) {
			struct sdm_fe_event *ev = &r.ev[k];
			unsigned int j;

			for (j = 0; j < acc.nev; j++) {
				if (acc.ev[j].type == ev->type &&
				    !strcmp((char *)acc.ev[j].payload,
					    (char *)ev->payload)) {
					sdm_set_union(acc.ev[j].src, ev->src);
					break;
				}
			}
			if (j < acc.nev)
				continue;
			/* Move the event into acc. */
			struct sdm_fe_event *v = realloc(acc.ev, (acc.nev + 1) *
							 sizeof(*v));

			if (!v)
				continue;
			acc.ev = v;
			acc.ev[acc.nev++] = *ev;
			ev->src = NULL;
			ev->payload = NULL;
		}
		sdm_fe_result_free(&r);
	}
	dbg_print_result(s, "attach", &acc);
out:
	sdm_fe_result_free(&acc);
	sdm_set_free(one);
	free(req);
	return rc;
}

/* mpirun -x LD_PRELOAD=LIB ARGS...: the library for the ranks only. */
static char **preload_argv(char *const *argv, const char *lib)
{
	size_t n = 0;
	char **v;

	while (argv[n])
		n++;
	v = calloc(n + 3, sizeof(*v));
	if (!v || asprintf(&v[2], "LD_PRELOAD=%s", lib) < 0) {
		free(v);
		return NULL;
	}
	v[0] = argv[0];
	v[1] = "-x";
	memcpy(v + 3, argv + 1, n * sizeof(*v));	/* with the NULL */
	return v;
}

int dbg_mpir_start(struct dbg_mpir *m, char *const *argv, int mpirun_pid,
		   const char *bindir, char *err, size_t errlen)
{
	struct dbgp_cmd gate = { .verb = DBGP_CLI,
				 .arg = "set var *(int *)&MPIR_debug_gate = 1" };
	struct dbg_session *s = m->s;
	struct mi_driver_opts o = { 0 };
	struct sdm_fe_result r;
	const char *preload = s->preload;
	struct sdm_idset *all;
	struct proc *procs = NULL;
	char **pargv = NULL;
	bool launching = argv != NULL;	/* else attach to mpirun_pid */
	long n = 0;
	int rc;

	o.cmd_timeout_ms = MPIR_TIMEOUT_MS;
	if (launching && preload) {
		/*
		 * Checkpointable: the ranks get libcrdbg, mpirun's stdio is
		 * no terminal CRIU cannot take, and as root the job has a
		 * network namespace of its own so that a restored mpirun can
		 * bind its ports again.
		 */
		pargv = preload_argv(argv, preload);
		if (!pargv)
			return -ENOMEM;
		argv = pargv;
		o.fifo = true;
		o.own_netns = geteuid() == 0;
	}
	if (launching) {
		o.program = argv[0];
		o.args = (const char *const *)argv + 1;
		/*
		 * PMIx's shared-memory store fails its posix_fallocate() with
		 * EINTR when a signal arrives meanwhile, and under ptrace
		 * even ignored signals arrive: the job then dies in MPI_Init
		 * ("PMIX ERROR: OUT-OF-RESOURCE"). Its hash store has no such
		 * step. The user's choice stands.
		 */
		setenv("PMIX_MCA_gds", "hash", 0);
	}
	rc = mi_driver_start(&o, &m->launcher);
	if (pargv)
		free(pargv[2]);
	free(pargv);
	if (rc) {
		m->launcher = NULL;
		snprintf(err, errlen, "cannot start gdb for mpirun: %s",
			 strerror(-rc));
		return rc;
	}
	if (launching) {
		m->job_launched = true;
		rc = launch(m->launcher, err, errlen);
		m->mpirun_pid = mi_driver_inferior_pid(m->launcher);
	} else {
		rc = mi_attach(m->launcher, mpirun_pid);
		if (rc)
			fail(m->launcher, rc, err, errlen, "cannot attach to mpirun");
		m->mpirun_pid = mpirun_pid;
	}
	if (!rc)
		rc = read_proctable(m->launcher, &procs, &n, err, errlen);
	if (rc)
		return rc;
	rc = dbg_session_start(s, n, bindir, err, errlen);
	if (rc < 0) {
		free(procs);
		return rc;
	}
	wait_exec(procs, n);
	rc = attach_ranks(s, procs, n);
	free(procs);
	if (rc < 0) {
		snprintf(err, errlen, "cannot attach the ranks: %s", strerror(-rc));
		return rc;
	}
	/* Release the ranks held in MPI_Init (gdb holds them now). */
	all = dbg_live(s, s->focus);
	if (all && dbg_send(s, all, &gate, DBG_CMD_TIMEOUT, &r) == 0)
		sdm_fe_result_free(&r);
	sdm_set_free(all);
	rc = mi_continue(m->launcher);
	if (rc)
		return fail(m->launcher, rc, err, errlen, "cannot resume mpirun");
	return 0;
}

/* Forward mpirun's output (the ranks' stdout passes through it). */
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
	while ((n = mi_driver_read_output(m->launcher, buf, sizeof(buf), 0)) > 0)
		dbg_rank_output(m->s, DBG_MPIRUN, buf, n);
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
	rc = mi_driver_write_input(m->launcher, text, strlen(text));
	if (!rc)
		rc = mi_driver_write_input(m->launcher, "\n", 1);
	if (rc)
		dbg_error(s, "input: cannot write to mpirun's stdin: %s", strerror(-rc));
}

int dbg_mpir_detach(struct dbg_mpir *m, char *err, size_t errlen)
{
	struct mi_stop st;
	int rc;

	if (!m->launcher || m->mpirun_pid <= 0) {
		snprintf(err, errlen, "no mpirun to detach from");
		return -ESRCH;
	}
	forward_output(m);
	/*
	 * Not -exec-interrupt: gdb would signal mpirun's process group. gdb
	 * does not pass a SIGINT on at the detach.
	 */
	if (kill(m->mpirun_pid, SIGINT))
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
	int rc = mi_attach(m->launcher, m->mpirun_pid);

	if (!rc)
		rc = mi_continue(m->launcher);
	if (rc)
		return fail(m->launcher, rc, err, errlen, "cannot attach to mpirun again");
	return 0;
}

/* The session ends: kill a launched job, or leave it running. */
static void on_stop(void *priv)
{
	struct dbgp_cmd kill_cmd = { .verb = DBGP_CLI, .arg = "kill" };
	struct dbg_mpir *m = priv;
	struct dbg_session *s = m->s;
	struct sdm_fe_result r;
	struct sdm_idset *all;

	if (!m->launcher)
		return;
	if (m->job_launched && s->fe) {
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
	/*
	 * Ours, even when gdb only attached to it (after a checkpoint, or
	 * restored): gdb would detach at its exit.
	 */
	forward_output(m);
	if (m->job_launched && m->mpirun_pid > 0 &&
	    mi_driver_inferior_pid(m->launcher) == m->mpirun_pid)
		kill(m->mpirun_pid, SIGKILL);
	dbg_flush_lines(s);
	/* Kills mpirun if we started it, detaches if we attached. */
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
	free(m);
}

bool dbg_mpir_launched(const struct dbg_mpir *m)
{
	return m->job_launched;
}

int dbg_mpir_pid(const struct dbg_mpir *m)
{
	return m->mpirun_pid;
}
