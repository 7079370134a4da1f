// SPDX-License-Identifier: GPL-2.0
/*
 * Whether CRIU has handed a tree back held (see held.h): a continuing
 * checkpoint releases the tree once CRIU's dump let go of it, a restart
 * pushes the CRS hook once CRIU's restore did.
 */
#include "held.h"
#include "proc.h"

bool crs_proc_parked(struct freeze_backend *b, pid_t pid)
{
	struct freeze_thread th[256];
	char msg[256];
	int n, j;

	n = freeze_query(b, pid, th, 256, msg, sizeof(msg));
	if (n < 0 || n > 256)
		return false;
	for (j = 0; j < n; j++)
		if (th[j].state == FREEZE_THREAD_RUNNING)
			return false;
	return true;
}

/* pid was in a group stop at checkpoint (and is restored in one). */
static bool recorded_stopped(const struct crs_meta *m, pid_t pid)
{
	for (size_t i = 0; i < m->nr_procs; i++)
		if (m->procs[i].pid == pid)
			return m->procs[i].stopped;
	return false;
}

/*
 * Every thread m records exists, in a group stop unless crdbg.ko holds
 * its process (kmod, and the process was not stopped at checkpoint).
 */
static bool threads_back(const struct crs_meta *m, struct freeze_backend *kmod)
{
	for (size_t i = 0; i < m->nr_threads; i++) {
		const struct crs_thread *t = &m->threads[i];
		char st = crs_task_state(t->pid, t->tid);

		if (!st || (st != 'T' && (!kmod || recorded_stopped(m, t->pid))))
			return false;
	}
	return true;
}

/*
 * Why the two checks differ. After a dump (--leave-running) the threads
 * never went away, so a process in its group stop (every thread of it
 * 'T') is held. After a restore CRIU creates the threads one by one: a
 * process can exist, untraced, before all of its threads do, so each
 * thread m records must be there, and in its group stop when crdbg.ko
 * does not hold it (which also says its process is stopped).
 */
bool crs_tree_held(const struct crs_meta *m, struct freeze_backend *kmod,
		   enum crs_held_after after)
{
	for (size_t i = 0; i < m->nr_procs; i++) {
		const struct crs_proc *p = &m->procs[i];

		if (p->zombie)
			continue;
		if (crs_proc_tracer(p->pid))
			return false;
		if (!kmod || p->stopped) {
			if (after == CRS_HELD_AFTER_DUMP && !crs_proc_stopped(p->pid))
				return false;
			continue;
		}
		if (!crs_proc_parked(kmod, p->pid))
			return false;
	}
	return after == CRS_HELD_AFTER_DUMP || threads_back(m, kmod);
}
