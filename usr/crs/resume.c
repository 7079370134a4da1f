// SPDX-License-Identifier: GPL-2.0
/*
 * Releasing a checkpointed or restored tree: every thread of every process
 * that uses libcrdbg gets the CRS hook pushed (it runs
 * MPIR_checkpoint_debugger_crs_hook() before going back to its exact PC),
 * then every process is thawed, and a group stop it is in (CRIU's
 * --leave-stopped, the ptrace backend's hand-over) is ended without a
 * SIGCONT the program sees (crs_end_stop()), except for the processes that
 * were in a group stop at checkpoint: they get SIGSTOP instead and stay
 * stopped, as they were. The SIGCONTs a group stop of crdbg's discarded
 * (the metadata's sigcont records) are queued again before the process
 * runs: by the ptrace thaw once it has ended the stop, or by us while
 * crdbg.ko holds the process (queue_sigconts()).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <crdbg/mpir-checkpoint.h>

#include "proc.h"
#include "resume.h"
#include <crdbg/criu-gate.h>

static uint64_t checkpoint_pc(const struct crs_meta *m, pid_t tid, bool *found)
{
	size_t i;

	for (i = 0; i < m->nr_threads; i++)
		if (m->threads[i].tid == tid) {
			*found = true;
			return m->threads[i].pc;
		}
	*found = false;
	return 0;
}

void crs_show_pc(const struct crs_meta *m, pid_t pid, pid_t tid, uint64_t pc, const char *what,
		 FILE *log)
{
	bool found;
	uint64_t at = checkpoint_pc(m, tid, &found);

	fprintf(log, "crdbg: %s pid %d tid %d pc 0x%" PRIx64 " checkpoint-pc 0x%" PRIx64 " %s\n",
		what, pid, tid, pc, at,
		!found		? "new-thread" :
		at == pc	? "same" :
		/* CRIU folded a syscall restart: ip back on the syscall insn */
		at == pc + 2	? "same-syscall-restart" : "DIFFERENT");
}

static void show_pcs(struct freeze_backend *b, const struct crs_meta *m, pid_t pid,
		     const char *what, FILE *log)
{
	struct freeze_thread th[256];
	char msg[256];
	int n, i;

	n = freeze_query(b, pid, th, 256, msg, sizeof(msg));
	if (n < 0) {
		fprintf(log, "crdbg: cannot query pid %d: %s\n", pid, msg);
		return;
	}
	for (i = 0; i < n && i < 256; i++)
		crs_show_pc(m, pid, th[i].tid, (uint64_t)th[i].regs.ip, what, log);
}

/*
 * A thread that cannot park now is not waited for: one in a group stop
 * (it parks when continued; recorded as stopped) or a zombie.
 */
static bool may_still_park(pid_t pid, const struct freeze_thread *t)
{
	char st;

	if (t->state != FREEZE_THREAD_RUNNING)
		return false;
	st = crs_task_state(pid, t->tid);
	return st != 'T' && st != 'Z' && st != 'X' && st != 0;
}

void crs_wait_parked(struct freeze_backend *b, pid_t pid)
{
	struct timespec nap = { .tv_nsec = 10 * 1000 * 1000 };
	struct freeze_thread th[256];
	char msg[256];
	int i, n, tries;

	for (tries = 0; tries < 500; tries++) {
		bool all = true;

		n = freeze_query(b, pid, th, 256, msg, sizeof(msg));
		if (n < 0)
			return;
		for (i = 0; i < n && i < 256 && all; i++)
			all = !may_still_park(pid, &th[i]);
		if (all)
			return;
		nanosleep(&nap, NULL);
	}
}

static const struct crs_proc *find_proc(const struct crs_meta *m, pid_t pid)
{
	for (size_t i = 0; m && i < m->nr_procs; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}

/* The threads of p with a SIGCONT of their own recorded: a malloc'd array. */
static pid_t *sigcont_tids(const struct crs_meta *m, pid_t pid, size_t *ret_nr)
{
	pid_t *tids = NULL;
	size_t i, nr = 0;

	for (i = 0; i < m->nr_threads; i++)
		nr += m->threads[i].pid == pid && m->threads[i].sigcont;
	*ret_nr = 0;
	if (!nr || !(tids = malloc(nr * sizeof(*tids))))
		return NULL;
	for (i = 0; i < m->nr_threads; i++)
		if (m->threads[i].pid == pid && m->threads[i].sigcont)
			tids[(*ret_nr)++] = m->threads[i].tid;
	return tids;
}

/*
 * Tell the ptrace backend b which SIGCONTs its thaw of pid is to queue
 * again (freeze_requeue_sigcont()); nothing when m records none.
 */
static int tell_sigconts(struct freeze_backend *b, const struct crs_meta *m, pid_t pid,
			 char *err, size_t errlen)
{
	const struct crs_proc *p = find_proc(m, pid);
	size_t nr;
	pid_t *tids;
	int r;

	if (!p)
		return 0;
	tids = sigcont_tids(m, pid, &nr);
	if (!p->sigcont && !nr)
		return 0;
	r = freeze_requeue_sigcont(b, pid, p->sigcont, tids, nr, err, errlen);
	free(tids);
	return r;
}

/*
 * Queue the SIGCONTs m records for p now: crdbg.ko holds p (parked, not
 * in a group stop), so no thread runs before they are pending. One still
 * pending (CRIU restored it) is not queued twice: a standard signal.
 */
static void queue_sigconts(const struct crs_meta *m, const struct crs_proc *p)
{
	size_t i;

	if (p->sigcont)
		kill(p->pid, SIGCONT);
	for (i = 0; i < m->nr_threads; i++)
		if (m->threads[i].pid == p->pid && m->threads[i].sigcont)
			syscall(SYS_tgkill, p->pid, m->threads[i].tid, SIGCONT);
}

/*
 * Only SIGCONT ends a group stop, and a SIGCONT handler of the program
 * would run: raw CRIU sends none. The ptrace backend's thaw of a stopped
 * process seizes it and takes its SIGCONT back before the program sees it
 * (usr/freeze/freeze-ptrace.c, end_group_stop()), and queues the ones m
 * records before it lets a thread go; with crdbg.ko frozen, the threads
 * then park before their next user instruction.
 */
int crs_end_stop(const struct crs_meta *m, pid_t pid, char *err, size_t errlen)
{
	struct freeze_backend *pt;
	int r;

	if (!crs_proc_stopped(pid))
		return 0;
	r = freeze_backend_open(FREEZE_BACKEND_PTRACE, &pt, err, errlen);
	if (r)
		return r;
	r = tell_sigconts(pt, m, pid, err, errlen);
	if (!r)
		r = freeze_thaw(pt, pid, err, errlen);
	freeze_backend_close(pt);
	return r;
}

uint64_t crs_hook_arg_of(const struct crs_meta *m, size_t i, uint64_t arg)
{
	if ((arg & CRDBG_HOOK_DEBUG_MASK) != CRDBG_HOOK_DEBUG_SET || m->procs[i].held)
		return arg;
	for (size_t j = 0; j < m->nr_procs; j++)
		if (m->procs[j].held)
			return (arg & ~CRDBG_HOOK_DEBUG_MASK) | CRDBG_HOOK_DEBUG_CLEAR;
	return arg;
}

int crs_resume(const struct crs_meta *m, enum freeze_backend_kind kind, uint64_t arg,
	       const char *what, FILE *log, bool verbose, char *err, size_t errlen)
{
	struct freeze_backend *b;
	char msg[256];
	bool kmod, *hooked;
	size_t i;
	int r, ret = 0;

	r = freeze_backend_open(kind, &b, msg, sizeof(msg));
	if (r) {
		snprintf(err, errlen, "cannot open the freeze backend: %s", msg);
		for (i = 0; i < m->nr_procs; i++)
			if (!m->procs[i].stopped && !m->procs[i].zombie)
				crs_end_stop(m, m->procs[i].pid, msg, sizeof(msg));
		return r;
	}
	kmod = freeze_backend_kind(b) == FREEZE_BACKEND_KMOD;
	hooked = calloc(m->nr_procs, sizeof(*hooked));
	for (i = 0; hooked && i < m->nr_procs; i++) {
		const struct crs_proc *p = &m->procs[i];
		uint64_t addr = p->trampoline;	/* both backends enter the trampoline */

		if (!p->mpir)
			continue;
		if (!addr) {
			if (log)
				fprintf(log, "crdbg: pid %d: libcrdbg has no hook trampoline; threads resume without the CRS hook\n",
					p->pid);
			continue;
		}
		r = freeze_process(b, p->pid, 0, msg, sizeof(msg));
		if (r && r != -EALREADY) {
			if (!ret) {
				snprintf(err, errlen, "cannot freeze pid %d to push the CRS hook: %s",
					 p->pid, msg);
				ret = r;
			}
			continue;
		}
		if (kmod) {
			/*
			 * A thread CRIU left in a group stop parks only on its
			 * way back to user mode: end the stop while the
			 * freeze holds the threads, then wait for them (the
			 * SIGCONTs to queue again: at the release below).
			 */
			r = crs_end_stop(NULL, p->pid, msg, sizeof(msg));
			if (r && log)
				fprintf(log, "crdbg: pid %d: %s\n", p->pid, msg);
			crs_wait_parked(b, p->pid);
		}
		if (verbose && log)
			show_pcs(b, m, p->pid, what, log);
		r = freeze_push_hook(b, p->pid, 0, addr, crs_hook_arg_of(m, i, arg), msg,
				     sizeof(msg));
		if (r) {
			if (!ret) {
				snprintf(err, errlen, "cannot push the CRS hook on pid %d: %s",
					 p->pid, msg);
				ret = r;
			}
			continue;
		}
		hooked[i] = true;
	}
	/*
	 * Release everything, hooked or not, so nothing stays stopped by us:
	 * descendants first, the root last (ending a stop takes a few ptrace
	 * round trips; a parent that runs first would see its children still
	 * held, in state 't').
	 */
	for (i = m->nr_procs; i-- > 0;) {
		const struct crs_proc *p = &m->procs[i];

		if (p->zombie)
			continue;
		/*
		 * It was in a group stop and is in one now (CRIU's, or the
		 * hand-over's): no hook, no thaw (a thaw would end the
		 * stop). SIGSTOP in case anything ended that stop meanwhile.
		 */
		if (p->stopped) {
			kill(p->pid, SIGSTOP);
			continue;
		}
		/*
		 * The SIGCONTs a group stop discarded: the ptrace thaw queues
		 * them once it has ended the stop; crdbg.ko holds a process
		 * that is not stopped (frozen here, at the checkpoint or
		 * where crdbg's plugin holds CRIU before it lets a restored
		 * tree go): queued now. One still stopped gets them
		 * from crs_end_stop() below.
		 */
		r = 0;
		if (!kmod)
			r = tell_sigconts(b, m, p->pid, msg, sizeof(msg));
		else if (!crs_proc_stopped(p->pid))
			queue_sigconts(m, p);
		if (r && !ret) {
			snprintf(err, errlen, "cannot keep the pending SIGCONT of pid %d: %s", p->pid,
				 msg);
			ret = r;
		}
		r = freeze_thaw(b, p->pid, msg, sizeof(msg));
		if (r && hooked && hooked[i] && !ret) {
			snprintf(err, errlen, "cannot release pid %d: %s", p->pid, msg);
			ret = r;
		}
		/* not frozen by us (no libcrdbg), or no hook: still stopped */
		r = crs_end_stop(m, p->pid, msg, sizeof(msg));
		if (r && !ret) {
			snprintf(err, errlen, "cannot release pid %d: %s", p->pid, msg);
			ret = r;
		}
	}
	free(hooked);
	freeze_backend_close(b);
	return ret;
}

int crs_release_orders(const struct crs_meta *m, uint64_t arg, FILE *log, char **buf,
		       size_t *len)
{
	FILE *f = open_memstream(buf, len);
	size_t i, j;

	if (!f)
		return -ENOMEM;
	for (i = 0; i < m->nr_procs; i++) {
		const struct crs_proc *p = &m->procs[i];

		if (p->zombie)
			continue;
		/* it stays stopped (CRIU's stop, or the plugin's): let go before its parent */
		if (p->stopped) {
			fprintf(f, CRDBG_GATE_ORDER_STOPPED, p->pid);
			continue;
		}
		if (p->mpir && p->trampoline)
			fprintf(f, CRDBG_GATE_ORDER_HOOK, p->pid, (unsigned long long)p->trampoline,
				(unsigned long long)crs_hook_arg_of(m, i, arg));
		else if (p->mpir && log)
			fprintf(log, "crdbg: pid %d: libcrdbg has no hook trampoline; threads resume without the CRS hook\n",
				p->pid);
		if (p->sigcont)
			fprintf(f, CRDBG_GATE_ORDER_SIGCONT, p->pid, 0);
		for (j = 0; j < m->nr_threads; j++)
			if (m->threads[j].pid == p->pid && m->threads[j].sigcont)
				fprintf(f, CRDBG_GATE_ORDER_SIGCONT, p->pid, m->threads[j].tid);
		fprintf(f, CRDBG_GATE_ORDER_CONT, p->pid);
	}
	if (fclose(f) || !*buf) {
		free(*buf);
		*buf = NULL;
		return -ENOMEM;
	}
	return 0;
}
