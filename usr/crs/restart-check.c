// SPDX-License-Identifier: GPL-2.0
/*
 * What a restart needs, checked before the job's own processes are ended
 * (<crdbg/restart-check.h>), and the pids it waits for once they are.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "listen-ports.h"
#include "proc.h"
#include "restart-check.h"
#include "wfiles.h"

bool crs_pid_dying(pid_t pid)
{
	char path[64], line[128];
	unsigned long long mask;
	char state = crs_task_state(pid, pid);
	bool killed = false;
	FILE *f;

	if (state == 'Z' || state == 'X' || state == 'x')
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!killed && fgets(line, sizeof(line), f))
		if (sscanf(line, "SigPnd: %llx", &mask) == 1 ||
		    sscanf(line, "ShdPnd: %llx", &mask) == 1)
			killed = mask & (1ull << (SIGKILL - 1));
	fclose(f);
	return killed;
}

static bool in_use(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

int crs_pid_wait_free(pid_t pid, time_t deadline, char *err, size_t errlen)
{
	struct timespec nap = { .tv_nsec = 20 * 1000 * 1000 };

	while (in_use(pid)) {
		if (!crs_pid_dying(pid))
			return crs_fail(err, errlen, -EBUSY,
					"pid %d is in use: the checkpointed process (or another) still runs; stop it first",
					pid);
		if (time(NULL) >= deadline)
			return crs_fail(err, errlen, -EBUSY,
					"pid %d is still in use %d s after its process was ended (a zombie its parent has not reaped?)",
					pid, CRS_RESTART_PID_WAIT_S);
		nanosleep(&nap, NULL);
	}
	return 0;
}

/* The process at p's pid now is p's running incarnation (or is going). */
static bool own_or_going(const struct crs_proc *p)
{
	struct crs_proc now;

	if (!in_use(p->pid) || crs_pid_dying(p->pid))
		return true;
	return !crs_proc_ids(p->pid, &now) && now.pgid == p->pgid && now.sid == p->sid;
}

static int check_pids(const char *handle, const struct crs_meta *m, char *err, size_t errlen)
{
	char comm[64];

	for (size_t i = 0; i < m->nr_procs; i++) {
		const struct crs_proc *p = &m->procs[i];

		if (own_or_going(p))
			continue;
		if (crs_proc_file(p->pid, "comm", comm, sizeof(comm)) <= 0)
			snprintf(comm, sizeof(comm), "?");
		comm[strcspn(comm, "\n")] = '\0';
		return crs_fail(err, errlen, -EBUSY,
				"restart of %s refused, nothing was killed or restored: pid %d is held by another process (%s, not in the checkpointed group %d and session %d): the checkpoint's process could not get it back",
				handle, p->pid, comm, p->pgid, p->sid);
	}
	return 0;
}

int crs_restart_check(const char *root, const char *handle, const struct crs_meta *m,
		      char *err, size_t errlen)
{
	char dir[PATH_MAX];
	int r = crs_store_verify_chain(root, handle, m, false, err, errlen);

	if (r)
		return r;
	if (crs_store_path(root, handle, dir, sizeof(dir)))
		return crs_fail(err, errlen, -EINVAL, "invalid checkpoint handle \"%s\"", handle);
	r = crs_wfiles_check(dir, handle, m, err, errlen);
	if (!r)
		r = crs_listen_addrs_check(dir, handle, err, errlen);
	return r ? r : check_pids(handle, m, err, errlen);
}
