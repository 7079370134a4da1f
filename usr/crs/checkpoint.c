// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg checkpoint: the MPIR protocol's "preparing for a checkpoint"
 * (Documentation/checkpoint.md) over CRIU.
 *
 *  1. Every process of the tree that maps libcrdbg gets a checkpoint
 *     request; its designated thread calls MPIR_checkpoint_debugger_detach()
 *     (an attached debugger breaks there, parks the other threads in the
 *     waitpoint and detaches) and answers.
 *  2. crdbg freezes the whole tree with the freeze backend (persistent:
 *     the kmod freeze stays, and CRIU seizes the parked threads; the
 *     ptrace one is handed over to a SIGSTOP group stop) and records every
 *     thread's PC: nothing runs between the debugger's detach and the dump.
 *     Before that, a checkpoint that continues a running tree of some
 *     size pre-dumps it (pre-dump.h): most pages are copied while it runs.
 *  3. criu dump --leave-running into a temporary store directory (started
 *     before step 2 and held at crdbg's dump gate plugin until the tree is
 *     frozen, so its start-up is not stop time; with
 *     --kill and TCP connections, without it: CRIU kills the tree while
 *     the network is locked, so peers outside see no FIN).
 *  4. continue: the CRS hook is pushed on every thread and the tree
 *     released (a group stop ended without a SIGCONT the program sees);
 *     stop: left in a group stop; kill: killed once stored.
 *     Zombies are left to CRIU (nothing to freeze); processes that were
 *     in a group stop stay stopped.
 *  5. The pre-dump's pages are merged into the dump's images. The images
 *     are checksummed, the metadata written, the directory
 *     renamed to its handle. Any failure removes the temporary directory.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chain.h"
#include "error.h"
#include "held.h"
#include "listen-ports.h"
#include "resume.h"
#include "criu.h"
#include "criu-opts.h"
#include "pre-dump.h"
#include "proc.h"
#include "stages.h"
#include "store.h"
#include "parent-link.h"
#include "shell-job.h"
#include "tcp-abort.h"
#include "tree-stdio.h"
#include "wfiles.h"
#include <crdbg/mpir-checkpoint.h>

#define REQUEST_TIMEOUT_S 60

/*
 * Ask pid's designated thread to prepare; wait for its answer, which
 * carries the address of its struct crdbg_rt_info (*ret_addr).
 */
static int request_checkpoint_as(pid_t pid, uint64_t *ret_addr, char *err, size_t errlen)
{
	union sigval v = { .sival_int = CRDBG_RT_REQ_CHECKPOINT };
	struct timespec ts = { .tv_sec = 1 };
	time_t deadline = time(NULL) + REQUEST_TIMEOUT_S;
	sigset_t set;
	siginfo_t si;
	int r;

	sigemptyset(&set);
	sigaddset(&set, CRDBG_RT_SIGNAL);
	if (sigqueue(pid, CRDBG_RT_SIGNAL, v))
		return crs_fail(err, errlen, -errno, "cannot send the checkpoint request to pid %d: %s",
			    pid, strerror(errno));
	for (;;) {
		r = sigtimedwait(&set, &si, &ts);
		if (r == CRDBG_RT_SIGNAL && si.si_pid == pid && si.si_code == SI_QUEUE)
			break;
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return crs_fail(err, errlen, -errno, "waiting for pid %d: %s", pid,
				    strerror(errno));
		if (kill(pid, 0) && errno == ESRCH)
			return crs_fail(err, errlen, -ESRCH, "pid %d exited during the checkpoint request",
				    pid);
		if (time(NULL) > deadline)
			return crs_fail(err, errlen, -ETIMEDOUT,
				    "pid %d did not answer the checkpoint request in %d s (a debugger stopped in MPIR_checkpoint_debugger_detach() must detach)",
				    pid, REQUEST_TIMEOUT_S);
	}
	*ret_addr = (uint64_t)(uintptr_t)si.si_value.sival_ptr;
	return 0;
}

/*
 * The request, for owner (the service's caller, or our own uid). The
 * target answers with a signal, which a user's process may send only to
 * a process whose real or saved uid is the user's: root taking the
 * checkpoint for a user takes the user's uid as its real uid meanwhile,
 * its effective uid (all it acts with) staying root's.
 */
static int request_checkpoint(pid_t pid, uid_t owner, struct crdbg_rt_info *info,
			      uint64_t *ret_addr, char *err, size_t errlen)
{
	bool as_owner = geteuid() == 0 && getuid() == 0 && owner != 0;
	int r;

	if (as_owner && setresuid(owner, (uid_t)-1, (uid_t)-1))
		return crs_fail(err, errlen, -errno, "cannot take uid %u to hear pid %d: %s",
				(unsigned int)owner, pid, strerror(errno));
	r = request_checkpoint_as(pid, ret_addr, err, errlen);
	if (as_owner && setresuid(0, (uid_t)-1, (uid_t)-1))
		abort();	/* root's real uid cannot be had back: never go on as another */
	if (r)
		return r;
	r = crs_proc_read(pid, *ret_addr, info, sizeof(*info));
	if (r)
		return crs_fail(err, errlen, r, "cannot read libcrdbg's state in pid %d: %s", pid,
			    strerror(-r));
	if (info->magic != CRDBG_RT_MAGIC || info->version != CRDBG_RT_VERSION)
		return crs_fail(err, errlen, -EPROTO, "pid %d runs an incompatible libcrdbg", pid);
	return 0;
}

/* Is every pgid and sid of the tree a process of the tree? */
static bool self_contained(const struct crs_meta *m)
{
	size_t i, j;

	for (i = 0; i < m->nr_procs; i++) {
		bool pg = false, s = false;

		for (j = 0; j < m->nr_procs; j++) {
			pg |= m->procs[j].pid == m->procs[i].pgid;
			s |= m->procs[j].pid == m->procs[i].sid;
		}
		if (!pg || !s)
			return false;
	}
	return true;
}

static int record_threads(struct freeze_backend *b, struct crs_meta *m, pid_t pid, char *err,
			  size_t errlen)
{
	struct freeze_thread *th = NULL;
	size_t max = 64;
	char msg[256];
	int n, i, r = 0;

	crs_wait_parked(b, pid);
	for (;;) {
		free(th);
		th = calloc(max, sizeof(*th));
		if (!th)
			return crs_fail(err, errlen, -ENOMEM, "out of memory");
		n = freeze_query(b, pid, th, max, msg, sizeof(msg));
		if (n < 0) {
			free(th);
			return crs_fail(err, errlen, n, "cannot query pid %d: %s", pid, msg);
		}
		if ((size_t)n <= max)
			break;
		max = (size_t)n + 16;
	}
	for (i = 0; i < n && !r; i++) {
		struct crs_thread t = {
			.pid = pid, .tid = th[i].tid, .pc = th[i].regs.ip, .sp = th[i].regs.sp,
		};

		if (th[i].state == FREEZE_THREAD_EXITED)
			continue;
		r = crs_meta_add_thread(m, &t);
	}
	free(th);
	return r ? crs_fail(err, errlen, r, "too many threads") : 0;
}

/*
 * A process in a group stop with crdbg.ko: its threads are not frozen by
 * the module (a parking work still queued on a stopped thread would run
 * when CRIU continues it into its parasite, and park it under CRIU); they
 * do not run anyway. A ptrace freeze reads their registers; its release
 * leaves them in the stop.
 */
static int record_stopped(struct crs_meta *m, pid_t pid, char *err, size_t errlen)
{
	struct freeze_backend *pt;
	char msg[256];
	int r;

	r = freeze_backend_open(FREEZE_BACKEND_PTRACE, &pt, msg, sizeof(msg));
	if (!r)	/* persistent: its release leaves the stop as it is */
		r = freeze_process(pt, pid, FREEZE_F_PERSIST, msg, sizeof(msg));
	if (r) {
		freeze_backend_close(pt);
		return crs_fail(err, errlen, r, "cannot read the threads of stopped pid %d: %s",
				pid, msg);
	}
	r = record_threads(pt, m, pid, err, errlen);
	freeze_backend_close(pt);
	return r;
}

/*
 * CRIU seizes a parked thread where it is (a tracer's trap takes it out
 * of the park, it parks again at CRIU's detach): so the kmod freeze goes
 * to CRIU as it is, without a group stop, if every thread of the tree
 * that is not stopped has parked (its work ran). A thread that never
 * parked (stuck in D state) still has its work queued and would park under
 * CRIU when CRIU runs its parasite in it.
 */
static bool all_parked(struct freeze_backend *b, const struct crs_meta *m)
{
	for (size_t i = 0; i < m->nr_procs; i++) {
		if (m->procs[i].zombie || m->procs[i].stopped)
			continue;
		if (!crs_proc_parked(b, m->procs[i].pid))
			return false;
	}
	return true;
}

/*
 * A group stop discards every pending SIGCONT (the stop signal flushes
 * them: kernel/signal.c, prepare_signal()): the ptrace backend's hand-over
 * to CRIU (and crdbg.ko's fallback to it), so CRIU dumps the tree without
 * them, and CRIU's own --leave-stopped at a restore (ptrace, --lazy).
 * Record, while the freeze holds the tree, which process has one pending
 * process-wide and which thread on its own queue; the release and every
 * restart queue them again before the tree runs (resume.c), where a
 * SIGCONT still pending is not queued twice (a standard signal). A process
 * that was in a group stop has none (a SIGCONT would have ended its stop).
 */
static void record_sigconts(struct crs_meta *m)
{
	size_t i, j;

	for (i = 0; i < m->nr_procs; i++) {
		struct crs_proc *p = &m->procs[i];

		if (p->zombie || p->stopped)
			continue;
		p->sigcont = crs_proc_sigcont_pending(p->pid, 0) == 1;
		for (j = 0; j < m->nr_threads; j++)
			if (m->threads[j].pid == p->pid)
				m->threads[j].sigcont =
					crs_proc_sigcont_pending(p->pid, m->threads[j].tid) == 1;
	}
}

/*
 * The kmod freeze turned into a group stop: for --stop, and before the
 * dump when a thread never parked (see all_parked()). SIGSTOP is queued
 * while every thread is parked, then the threads are released into it;
 * the module's park loop recalculates pending signals before a thread
 * leaves, so each one stops before its next user instruction.
 */
static int hand_over_to_group_stop(struct freeze_backend *b, const struct crs_meta *m,
				   char *err, size_t errlen)
{
	struct timespec nap = { .tv_nsec = 10 * 1000 * 1000 };
	char msg[256];
	size_t i, j;
	int r;

	for (i = 0; i < m->nr_procs; i++) {
		if (m->procs[i].zombie || m->procs[i].stopped)
			continue;	/* nothing to do: not frozen by the module */
		if (kill(m->procs[i].pid, SIGSTOP))
			return crs_fail(err, errlen, -errno, "cannot stop pid %d: %s", m->procs[i].pid,
				    strerror(errno));
		r = freeze_thaw(b, m->procs[i].pid, msg, sizeof(msg));
		if (r)
			return crs_fail(err, errlen, r, "cannot hand pid %d over to a stop: %s",
				    m->procs[i].pid, msg);
	}
	for (j = 0; j < 1000; j++) {
		bool all = true;

		for (i = 0; i < m->nr_threads && all; i++) {
			char st = crs_task_state(m->threads[i].pid, m->threads[i].tid);

			all = st == 'T' || st == 'Z' || st == 0;
		}
		if (all)
			return 0;
		nanosleep(&nap, NULL);
	}
	return crs_fail(err, errlen, -ETIMEDOUT, "the frozen tree did not enter its group stop");
}

static void thaw_all(const struct crs_meta *m, enum freeze_backend_kind kind)
{
	struct freeze_backend *b;
	char msg[256];
	size_t i;

	if (freeze_backend_open(kind, &b, msg, sizeof(msg)) == 0) {
		for (i = 0; i < m->nr_procs; i++) {
			const struct crs_proc *p = &m->procs[i];

			/* a stopped one stays so: ptrace's thaw would end its stop */
			if (p->zombie || p->stopped)
				continue;
			freeze_thaw(b, p->pid, msg, sizeof(msg));
		}
		freeze_backend_close(b);
	}
	/* still in the hand-over's stop: ended, the SIGCONTs it discarded queued again */
	for (i = 0; i < m->nr_procs; i++) {
		if (m->procs[i].stopped)
			kill(m->procs[i].pid, SIGSTOP);
		else if (!m->procs[i].zombie)
			crs_end_stop(m, m->procs[i].pid, msg, sizeof(msg));
	}
}

#define LET_GO_TIMEOUT_S 60

/*
 * Let CRIU dump the frozen tree. A checkpoint that continues does not
 * wait for criu to exit: the dump gate plugin (criu.c) says
 * the images are written, and once CRIU has let go of the tree it may
 * be released (*early); criu's own cleanup and exit (freeing, stats,
 * closing) then run beside the program, and crs_criu_dump_finish()
 * collects its status before the checkpoint is stored. kmod: crdbg.ko's
 * handle when it holds the tree, else NULL.
 */
static int run_dump(struct crs_criu_dump *d, struct freeze_backend *kmod,
		    const struct crs_meta *m, bool continues, bool *early, char *err,
		    size_t errlen)
{
	struct timespec ms = { .tv_nsec = 1000 * 1000 };
	time_t deadline;
	int r;

	*early = false;
	if (!continues)
		return crs_criu_dump_finish(d, err, errlen);
	r = crs_criu_dump_go(d, err, errlen);
	if (r)
		return r;
	if (crs_criu_dump_wait_written(d) <= 0)
		return crs_criu_dump_finish(d, err, errlen);	/* criu exited: why */
	deadline = time(NULL) + LET_GO_TIMEOUT_S;
	while (!crs_tree_held(m, kmod, CRS_HELD_AFTER_DUMP)) {
		if (time(NULL) > deadline)
			return crs_criu_dump_finish(d, err, errlen);
		nanosleep(&ms, NULL);
	}
	r = crs_criu_dump_save_tmpfs(d, err, errlen);
	if (!r)
		*early = true;
	return r;
}

/*
 * Most of a running tree's pages copied before the freeze (pre-dump.h);
 * true when the dump can take them from there.
 */
static bool pre_dump(const struct crs_checkpoint_opts *o, const struct crs_meta *m,
		     const char *dir)
{
	const char *why = o->no_pre_dump ? "--no-pre-dump" : NULL;
	char msg[512];

	if (!why && crs_pre_dump_wanted(m, o->after == CRS_AFTER_CONTINUE, &why)) {
		if (!crs_pre_dump(o->pid, dir, m, msg, sizeof(msg)))
			return true;
		why = msg;	/* costs only its time: the dump is full */
	}
	if (o->verbose && o->log)
		fprintf(o->log, "crdbg: no pre-dump: %s\n", why);
	return false;
}

/* m's CRIU options have opt (the user's --criu-opt among them). */
static bool has_criu_opt(const struct crs_meta *m, const char *opt)
{
	for (size_t i = 0; i < m->nr_criu_opts; i++)
		if (!strncmp(m->criu_opts[i], opt, strlen(opt)))
			return true;
	return false;
}

/* What CRIU needs for this tree (criu-opts.h), then the user's options. */
static int add_criu_opts(const struct crs_checkpoint_opts *o, const pid_t *pids, size_t nr,
			 struct crs_meta *m, char *err, size_t errlen)
{
	size_t i;
	int r;

	if (crs_criu_auto_opts(pids, nr, m))
		return crs_fail(err, errlen, -E2BIG, "too many CRIU options");
	for (i = 0; i < o->nr_criu_opts; i++) {
		r = crs_criu_opt_check(o->criu_opts[i], err, errlen);
		if (r)
			return r;
		if (crs_meta_add_criu_opt(m, o->criu_opts[i]))
			return crs_fail(err, errlen, -E2BIG, "more than %d CRIU options",
				    CRS_MAX_CRIU_OPTS);
	}
	return 0;
}

static uint64_t hook_arg(enum crs_debug d, int state)
{
	uint64_t arg = (uint64_t)state;

	if (d == CRS_DEBUG_SET)
		arg |= CRDBG_HOOK_DEBUG_SET;
	else if (d == CRS_DEBUG_CLEAR)
		arg |= CRDBG_HOOK_DEBUG_CLEAR;
	return arg;
}

/*
 * The processes taken without the MPIR protocol (no detach marker, no
 * CRS hook). Where others of the tree use libcrdbg, these are the
 * launchers around the ranks (mpirun, mpiexec, their proxies): said with
 * -v only. Where none does, the user may have forgotten the preload:
 * always said.
 */
static void say_without_libcrdbg(const struct crs_checkpoint_opts *o, const struct crs_meta *m)
{
	bool any = false;
	size_t i;

	for (i = 0; i < m->nr_procs; i++)
		any |= m->procs[i].mpir;
	if (!o->log || (any && !o->verbose))
		return;
	for (i = 0; i < m->nr_procs; i++)
		if (!m->procs[i].mpir && !m->procs[i].zombie && !m->procs[i].stopped)
			fprintf(o->log, "crdbg: pid %d does not use libcrdbg: checkpointing it without the MPIR protocol (no detach marker, no CRS hook)\n",
				m->procs[i].pid);
}
/* ---- the pipeline ---- */

/* A checkpoint's stages, in their order (ckpt_stages[]: their names and functions). */
enum ckpt_stage {
	CKPT_REQUEST,		/* the tree read, its libcrdbg processes prepared, the store begun */
	CKPT_PRE_DUMP,		/* most pages copied while the tree runs (pre-dump.h) */
	CKPT_CRIU_START,	/* criu dump up, held at the dump gate */
	CKPT_FREEZE,		/* every thread frozen, its pc recorded */
	CKPT_DUMP,		/* criu dump let go: the images written */
	CKPT_RELEASE,		/* the tree continued, stopped or left frozen for its kill */
	CKPT_CRIU_EXIT,		/* criu's exit, when the tree was released before it */
	CKPT_MERGE,		/* the pre-dump's pages merged into the dump's images */
	CKPT_STORE,		/* checksums and metadata: the checkpoint stored */
	CKPT_NR_STAGES,
};

/*
 * A checkpoint on its way. Each stage adds to it what it did; the undo
 * (ckpt_undo()) reads it and takes back what a failure leaves, in
 * reverse.
 */
struct ckpt {
	const struct crs_checkpoint_opts *o;
	const char *root;		/* the store's */
	char *err;
	size_t errlen;
	char msg[256];
	struct crs_meta m;
	pid_t *pids;			/* the tree, as read first */
	size_t nr;
	struct freeze_backend *b;	/* open from the request to the release */
	enum freeze_backend_kind kind;	/* its real kind */
	struct crs_pending pend;
	bool pending;			/* pend's temporary directory exists */
	struct crs_criu_dump dump;
	bool criu;			/* criu dump runs (not reaped) */
	bool criu_kills;		/* --kill with TCP connections: criu kills the tree */
	bool pre;			/* the dump takes pages from a pre-dump */
	bool thaw;			/* a failure thaws the tree (thaw_all()) */
	bool in_stop;			/* kmod's freeze handed over to a group stop */
	bool early;			/* released before criu's exit */
	bool called_off;		/* by the job, once dumped */
	struct crs_pre_dump_merged merged;
	struct crs_timing t;
};

/* Ask every libcrdbg process of the tree to prepare; record the tree. */
static int ckpt_request_procs(struct ckpt *c)
{
	const struct crs_checkpoint_opts *o = c->o;
	sigset_t set;
	size_t i;
	int r;

	sigemptyset(&set);
	sigaddset(&set, CRDBG_RT_SIGNAL);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < c->nr; i++) {
		pid_t pid = c->pids[i];
		struct crs_proc p;

		if (crs_proc_ids(pid, &p))
			continue;	/* exited meanwhile */
		p.zombie = crs_proc_zombie(pid);
		p.stopped = !p.zombie && crs_proc_stopped(pid);
		if (crs_proc_tracer(pid))
			c->m.debugger = true;
		/*
		 * A process in a group stop cannot answer a request (its
		 * designated thread is stopped too) and gets no hook: it is
		 * taken as a program without libcrdbg and stays stopped.
		 */
		p.mpir = !p.zombie && !p.stopped && crs_proc_maps(pid, CRDBG_RT_LIBNAME);
		if (p.mpir) {
			struct crdbg_rt_info info;
			int dwc = 0;

			r = request_checkpoint(pid, c->m.owner_uid, &info, &p.rt_info, c->err,
					       c->errlen);
			if (r)
				return r;
			p.trampoline = info.trampoline;
			p.hook_entry = info.hook_entry;
			if (crs_proc_read(pid, info.debug_with_checkpoint, &dwc, sizeof(dwc)))
				dwc = 0;
			/* its debugger parked it, saying it comes back */
			p.held = dwc != 0;
			if (pid == o->pid)
				c->m.debug_with_checkpoint = dwc;
			if (pid == o->pid)
				c->m.mpir = true;
		} else if (o->log && p.stopped) {
			fprintf(o->log, "crdbg: pid %d is stopped: checkpointing it without the MPIR protocol; it stays stopped\n",
				pid);
		}
		r = crs_meta_add_proc(&c->m, &p);
		if (r)
			return crs_fail(c->err, c->errlen, r, "too many processes");
	}
	return 0;
}

/*
 * The tree and what CRIU needs of it, every libcrdbg process prepared
 * (its debugger detached), the store's temporary directory made.
 */
static int ckpt_request(void *state)
{
	struct ckpt *c = state;
	const struct crs_checkpoint_opts *o = c->o;
	int r;

	if (o->pid <= 0)
		return crs_fail(c->err, c->errlen, -EINVAL, "invalid pid %d", o->pid);
	if (kill(o->pid, 0)) {
		if (errno == ESRCH)
			return crs_fail(c->err, c->errlen, -ESRCH, "no process with pid %d", o->pid);
		return crs_fail(c->err, c->errlen, -errno, "cannot checkpoint pid %d: %s%s", o->pid,
				strerror(errno), errno == EPERM ? " (another user's process)" : "");
	}
	r = crs_proc_tree(o->pid, o->descendants, &c->pids, &c->nr);
	if (r)
		return crs_fail(c->err, c->errlen, r, "cannot read the process tree of pid %d: %s",
				o->pid, strerror(-r));
	r = crs_shell_job_dumpable(c->pids, c->nr, c->err, c->errlen);
	if (r)
		return r;
	c->m.root = o->pid;
	c->m.time = time(NULL);
	if (o->cid) {
		snprintf(c->m.cid, sizeof(c->m.cid), "%s", o->cid);
		c->m.cid_parts = o->cid_parts;
		c->m.cid_index = o->cid_index;
	}
	c->m.has_owner = true;
	c->m.owner_uid = o->owner_given ? o->owner_uid : getuid();
	c->m.owner_gid = o->owner_given ? o->owner_gid : getgid();
	crs_proc_exe(o->pid, c->m.program, sizeof(c->m.program));
	if (crs_criu_version(c->m.criu_version, sizeof(c->m.criu_version)))
		return crs_fail(c->err, c->errlen, -ENOENT,
				"cannot run %s --version: is CRIU installed?", crs_criu_path());

	/* Know the backend's real kind before doing anything. */
	r = freeze_backend_open(o->backend, &c->b, c->msg, sizeof(c->msg));
	if (r)
		return crs_fail(c->err, c->errlen, r, "cannot open the freeze backend: %s", c->msg);
	c->kind = freeze_backend_kind(c->b);
	snprintf(c->m.backend, sizeof(c->m.backend), "%s", freeze_backend_name(c->b));

	r = ckpt_request_procs(c);
	if (r)
		return r;
	say_without_libcrdbg(o, &c->m);
	c->m.shell_job = !self_contained(&c->m);
	r = crs_stdio_record(c->pids, c->nr, &c->m);
	if (r)
		return crs_fail(c->err, c->errlen, r, "cannot record the tree's stdio: %s",
				strerror(-r));
	r = add_criu_opts(o, c->pids, c->nr, &c->m, c->err, c->errlen);
	if (r)
		return r;
	r = crs_parent_link_check(o->pid, c->pids, c->nr, has_criu_opt(&c->m, "--ext-unix-sk"),
				  c->err, c->errlen);
	if (r)
		return r;

	r = crs_store_begin(c->root, o->pid, &c->pend, c->err, c->errlen);
	if (r)
		return r;
	c->pending = true;
	crs_chain_begin(c->root, &c->m, o->full, o->log);	/* before the freeze: it reads the store */
	return 0;
}

static int ckpt_pre_dump(void *state)
{
	struct ckpt *c = state;

	c->pre = pre_dump(c->o, &c->m, c->pend.dir);
	return 0;
}

/* CRIU starts up now, while the tree runs, and waits for the freeze. */
static int ckpt_criu_start(void *state)
{
	struct ckpt *c = state;
	const struct crs_checkpoint_opts *o = c->o;
	int r;

	c->criu_kills = o->after == CRS_AFTER_KILL && crs_criu_needs_network(o->pid);
	r = crs_criu_dump_start(o->pid, c->pend.dir, &c->m, !c->criu_kills,
				c->pre ? CRS_PRE_DUMP_DIR : NULL, &c->dump, c->msg, sizeof(c->msg));
	if (r)
		return crs_fail(c->err, c->errlen, r, "criu dump of pid %d failed: %s", o->pid,
				c->msg);
	c->criu = true;
	return 0;
}

/* From here on no thread of the tree runs a user instruction. */
static int ckpt_freeze(void *state)
{
	struct ckpt *c = state;
	struct crs_meta *m = &c->m;
	size_t i;
	int r;

	for (i = 0; i < m->nr_procs; i++) {
		if (m->procs[i].zombie)
			continue;	/* nothing runs; CRIU dumps it as a zombie */
		if (m->procs[i].stopped && c->kind == FREEZE_BACKEND_KMOD) {
			r = record_stopped(m, m->procs[i].pid, c->err, c->errlen);
			if (r)
				return r;
			continue;
		}
		r = freeze_process(c->b, m->procs[i].pid, FREEZE_F_PERSIST, c->msg, sizeof(c->msg));
		if (r)
			return crs_fail(c->err, c->errlen, r, "cannot freeze pid %d: %s",
					m->procs[i].pid, c->msg);
		c->thaw = true;
		r = record_threads(c->b, m, m->procs[i].pid, c->err, c->errlen);
		if (r)
			return r;
	}
	record_sigconts(m);	/* before any group stop discards them */
	if (c->o->verbose && c->o->log)
		for (i = 0; i < m->nr_threads; i++)
			fprintf(c->o->log, "crdbg: checkpoint pid %d tid %d pc 0x%llx\n",
				m->threads[i].pid, m->threads[i].tid,
				(unsigned long long)m->threads[i].pc);
	if (c->kind == FREEZE_BACKEND_KMOD && !all_parked(c->b, m)) {
		if (c->o->log)
			fprintf(c->o->log, "crdbg: a thread of the tree has not parked: handing the tree to CRIU in a group stop\n");
		r = hand_over_to_group_stop(c->b, m, c->err, c->errlen);
		if (r)
			return r;
		c->in_stop = true;
	}
	if (c->kind != FREEZE_BACKEND_KMOD) {
		freeze_backend_close(c->b);	/* hands over to a group stop itself */
		c->b = NULL;
	}
	return 0;
}

/* The job's cut first (every part frozen), then CRIU dumps. */
static int ckpt_dump(void *state)
{
	struct ckpt *c = state;
	const struct crs_checkpoint_opts *o = c->o;
	int r;

	if (o->frozen && o->frozen(o->frozen_arg))
		return crs_fail(c->err, c->errlen, -ECANCELED, "the job's checkpoint was called off");
	/* the files as the frozen tree left them, before anything of it runs again */
	r = crs_wfiles_record(&c->m, c->pend.dir, c->root, o->verbose ? o->log : NULL, c->err,
			      c->errlen);
	if (!r)
		r = crs_listen_ports_record(&c->m, c->pend.dir, c->err, c->errlen);
	if (r)
		return r;
	r = run_dump(&c->dump, c->kind == FREEZE_BACKEND_KMOD && !c->in_stop ? c->b : NULL, &c->m,
		     o->after == CRS_AFTER_CONTINUE, &c->early, c->msg, sizeof(c->msg));
	if (r)
		return crs_fail(c->err, c->errlen, r, "criu dump of pid %d failed: %s", o->pid,
				c->msg);
	c->criu = c->early;	/* else criu's exit was collected */
	return 0;
}

/*
 * The tree goes on as --continue, --stop or --kill says: from here on a
 * failure leaves it so (only one to store it gives back a tree left
 * stopped or frozen for its kill, ckpt_store()). A part of a job is
 * released only once every part of the job is dumped.
 */
static int ckpt_release(void *state)
{
	struct ckpt *c = state;
	const struct crs_checkpoint_opts *o = c->o;
	int r;

	c->thaw = false;
	c->called_off = o->dumped && o->dumped(o->frozen_arg);
	if (o->after == CRS_AFTER_STOP && c->kind == FREEZE_BACKEND_KMOD && !c->in_stop) {
		r = hand_over_to_group_stop(c->b, &c->m, c->msg, sizeof(c->msg));
		if (r && o->log)
			fprintf(o->log, "crdbg: warning: %s\n", c->msg);
	}
	freeze_backend_close(c->b);
	c->b = NULL;
	if (o->after == CRS_AFTER_CONTINUE) {
		r = crs_resume(&c->m, c->kind, hook_arg(o->debug, CRDBG_CRS_STATE_CONTINUE),
			       "resume", o->log, o->verbose, c->msg, sizeof(c->msg));
		if (r && o->log)
			fprintf(o->log, "crdbg: warning: %s\n", c->msg);
	}
	return 0;
}

/* Released before criu's exit: its status decides the checkpoint. */
static int ckpt_criu_exit(void *state)
{
	struct ckpt *c = state;
	int r;

	if (!c->early)
		return 0;
	r = crs_criu_dump_finish(&c->dump, c->msg, sizeof(c->msg));
	c->criu = false;
	if (r)
		return crs_fail(c->err, c->errlen, r,
				"criu dump of pid %d failed after the release: %s", c->o->pid,
				c->msg);
	return 0;
}

static int ckpt_merge(void *state)
{
	struct ckpt *c = state;
	int r;

	if (c->called_off)
		return crs_fail(c->err, c->errlen, -ECANCELED, "the job's checkpoint was called off");
	if (!c->pre)
		return 0;
	r = crs_pre_dump_merge(c->pend.dir, &c->merged, c->msg, sizeof(c->msg));
	if (r)
		return crs_fail(c->err, c->errlen, r, "checkpoint of pid %d failed: %s", c->o->pid,
				c->msg);
	return 0;
}

/*
 * The images' checksums and the metadata, the directory renamed to its
 * handle. A tree criu killed is gone whatever happens here; one left
 * stopped, or frozen for its kill, is given back if it cannot be stored.
 */
static int ckpt_store(void *state)
{
	struct ckpt *c = state;
	int r;

	c->thaw = c->o->after != CRS_AFTER_CONTINUE && !c->criu_kills;
	r = crs_store_commit(&c->pend, &c->m, c->err, c->errlen);
	if (!r) {
		c->pending = false;
		c->thaw = false;
		return 0;
	}
	if (c->criu_kills) {
		snprintf(c->msg, sizeof(c->msg), "%s", c->err);
		r = crs_fail(c->err, c->errlen, r, "criu dump killed pid %d and its tree, but %s",
			     c->o->pid, c->msg);
	}
	return r;
}

static const struct crs_stage ckpt_stages[CKPT_NR_STAGES] = {
	[CKPT_REQUEST]		= { "request", ckpt_request },
	[CKPT_PRE_DUMP]		= { "pre-dump", ckpt_pre_dump },
	[CKPT_CRIU_START]	= { "criu start-up", ckpt_criu_start },
	[CKPT_FREEZE]		= { "freeze", ckpt_freeze },
	[CKPT_DUMP]		= { "criu dump", ckpt_dump },
	[CKPT_RELEASE]		= { "release", ckpt_release },
	[CKPT_CRIU_EXIT]	= { "criu's exit after the release", ckpt_criu_exit },
	[CKPT_MERGE]		= { "pre-dump merged", ckpt_merge },
	[CKPT_STORE]		= { "checksums and metadata", ckpt_store },
};

/* What a failure leaves, taken back in the reverse of the stages that did it. */
static void ckpt_undo(struct ckpt *c)
{
	if (c->criu)
		crs_criu_dump_cancel(&c->dump);	/* CRIU gives up, or is reaped */
	c->criu = false;
	freeze_backend_close(c->b);
	c->b = NULL;
	if (c->thaw)
		thaw_all(&c->m, c->kind);
	c->thaw = false;
	if (c->pending)
		crs_store_abort(&c->pend);
	c->pending = false;
}

/* -v: where the checkpoint's time went. */
static void ckpt_print_timing(struct ckpt *c)
{
	struct crs_timing *t = &c->t;

	crs_timing_note(t, CKPT_RELEASE, "(stopped %.0f)",
			t->end[CKPT_RELEASE] - t->end[CKPT_CRIU_START]);
	crs_timing_note(t, CKPT_MERGE, "(%u in place, %u copied)", c->merged.in_place,
			c->merged.copied);
	crs_timing_print(t, c->o->log, "checkpoint took");
}

void crs_kill_tree(const struct crs_meta *m)
{
	crs_tcp_abort_tree(m);	/* without CAP_NET_ADMIN: the restart waits for the ports */
	for (size_t i = 0; i < m->nr_procs; i++)
		kill(m->procs[i].pid, SIGKILL);
}

int crs_checkpoint(const struct crs_checkpoint_opts *o, char *ret_handle, size_t handle_len,
		   char *err, size_t errlen)
{
	struct ckpt c = {
		.o = o, .root = crs_store_root(o->store), .err = err, .errlen = errlen,
		.kind = FREEZE_BACKEND_AUTO,
	};
	int r;

	crs_meta_init(&c.m);
	crs_timing_start(&c.t, ckpt_stages, CKPT_NR_STAGES);
	r = crs_stages_run(&c.t, &c);
	if (r) {
		ckpt_undo(&c);
		goto out;
	}
	if (o->verbose && o->log)
		ckpt_print_timing(&c);
	crs_chain_commit(c.root, &c.m);
	if (o->after == CRS_AFTER_KILL && !c.criu_kills)
		crs_kill_tree(&c.m);
	snprintf(ret_handle, handle_len, "%s", c.pend.handle);
out:
	freeze_backend_close(c.b);
	crs_meta_free(&c.m);
	free(c.pids);
	return r;
}
