/* SPDX-License-Identifier: GPL-2.0 */
/* What crdbg reads about a process tree from /proc. */
#ifndef CRDBG_CRS_PROC_H
#define CRDBG_CRS_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "meta.h"

/* ppid, pgid and sid of pid; -ESRCH if it does not exist. */
int crs_proc_ids(pid_t pid, struct crs_proc *ret);

/* crs_proc_tree(): <crdbg/crs.h> */

/* Thread ids of pid (sorted); -ESRCH if gone. */
int crs_proc_tids(pid_t pid, pid_t **ret_tids, size_t *ret_nr);

/* The tracer of any thread of pid, 0 if none. */
pid_t crs_proc_tracer(pid_t pid);

/* True if pid maps a file whose name contains lib. */
bool crs_proc_maps(pid_t pid, const char *lib);

/* One-letter state of a thread ('R', 'S', 'T', 't', ...), 0 if gone. */
char crs_task_state(pid_t pid, pid_t tid);

/* pid has exited and waits for its parent to reap it (no thread left). */
bool crs_proc_zombie(pid_t pid);

/* Every thread of pid is in a group stop ('T'; not a ptrace stop, 't'). */
bool crs_proc_stopped(pid_t pid);

/*
 * 1 when SIGCONT is pending for the whole of pid (tid 0: ShdPnd of its
 * status) or on its thread tid alone (SigPnd of the thread's status), 0
 * when not, -errno when the status cannot be read. Exact only while the
 * process is held (nothing of it can take a signal meanwhile).
 */
int crs_proc_sigcont_pending(pid_t pid, pid_t tid);

/* Read len bytes at addr of pid's memory (process_vm_readv); -errno. */
int crs_proc_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/*
 * /proc/PID/NAME ("comm", "environ") into buf, NUL-terminated and cut at
 * len - 1 bytes: the bytes read, or -errno.
 */
int crs_proc_file(pid_t pid, const char *name, char *buf, size_t len);

/* The executable's path. */
int crs_proc_exe(pid_t pid, char *buf, size_t len);

#endif /* CRDBG_CRS_PROC_H */
