/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A launcher's agent in a restored tree: the srun (or ssh) that mpirun or
 * mpiexec started to keep its daemon running on other nodes and to report
 * the daemons' end. Its connections lead to a Slurm step (or an ssh
 * session) that ended with the checkpointed job, so it must never run
 * again; the daemons it stood for come back on their own nodes as other
 * parts of the job. The launcher, its parent, still waits for it: Open
 * MPI's mpirun ends only once its srun exits, and with status 0.
 *
 * So the part that restores the agent traps every thread of it before the
 * tree is released (crs_agent_seize()) and, once the daemons have ended,
 * makes it exit as the real agent would have, with their highest exit
 * code (crs_agent_end()): no instruction of the agent's own runs. Both
 * on one thread (ptrace's tracer is a thread). If that thread's process
 * dies first, the agent is killed (PTRACE_O_EXITKILL) and the launcher
 * sees its daemons fail, as it would for a lost srun.
 */
#ifndef CRDBG_CRS_AGENT_H
#define CRDBG_CRS_AGENT_H

#include <stddef.h>
#include <sys/types.h>

struct crs_agent {
	pid_t pid;
	pid_t *tids;		/* every thread, seized */
	size_t nr;
};

/*
 * Trap every thread of pid, a process that runs none of its own
 * instructions (held by the restart): each stops before its next one.
 * 0, or -errno with err (nothing stays seized).
 */
int crs_agent_seize(struct crs_agent *a, pid_t pid, char *err, size_t errlen);

/*
 * Make the seized agent exit with code (0-255) and reap its threads as
 * their tracer, so that its parent sees the exit: 0, or -errno with err
 * (then it is killed). Waits up to timeout_ms for it to reach its trap
 * (it does once released).
 */
int crs_agent_end(struct crs_agent *a, int code, int timeout_ms, char *err, size_t errlen);

/* Kill the seized agent (a restart called off) and reap its threads. */
void crs_agent_kill(struct crs_agent *a);

#endif /* CRDBG_CRS_AGENT_H */
