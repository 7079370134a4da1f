// SPDX-License-Identifier: GPL-2.0
/*
 * A launcher's agent ended without running (agent.h). The agent's main
 * thread is pointed at a `syscall` instruction of its own text with
 * exit_group(code) in its registers and let go: the kernel ends every
 * thread, and the exit its parent reaps is the one the real agent would
 * have given. x86-64 only, as crdbg is.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "error.h"
#include "proc.h"

#ifndef __x86_64__
#error "the agent's end is written for x86-64"
#endif

/* How far into each executable mapping a `syscall` is looked for. */
#define SCAN_MAX (1u << 20)

static void detach_all(struct crs_agent *a, size_t upto)
{
	for (size_t i = 0; i < upto; i++)
		ptrace(PTRACE_DETACH, a->tids[i], 0, 0);
}

int crs_agent_seize(struct crs_agent *a, pid_t pid, char *err, size_t errlen)
{
	pid_t *tids = NULL;
	size_t nr = 0, i;
	int r;

	*a = (struct crs_agent){ .pid = pid };
	r = crs_proc_tids(pid, &tids, &nr);
	if (r)
		return crs_fail(err, errlen, r, "agent %d: cannot list its threads: %s", pid,
				strerror(-r));
	a->tids = tids;
	a->nr = nr;
	for (i = 0; i < nr; i++) {
		size_t seized = i;
		pid_t tid = tids[i];

		if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PTRACE_O_EXITKILL) == 0) {
			seized = i + 1;
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) == 0)
				continue;
		}
		r = -errno;
		detach_all(a, seized);
		free(tids);
		*a = (struct crs_agent){ 0 };
		return crs_fail(err, errlen, r, "agent %d: cannot trap its thread %d: %s", pid,
				tid, strerror(-r));
	}
	return 0;
}

/* The address of a `syscall` (0f 05) in an executable mapping of pid, or 0. */
static uint64_t find_syscall(pid_t pid)
{
	char path[64], line[512];
	uint64_t found = 0;
	unsigned char *buf;
	FILE *maps;
	int mem;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "re");
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	buf = malloc(SCAN_MAX);
	while (maps && mem >= 0 && buf && !found && fgets(line, sizeof(line), maps)) {
		uint64_t lo, hi, len;
		char perms[8];
		ssize_t n;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &lo, &hi, perms) != 3 ||
		    perms[2] != 'x' || strstr(line, "[vsyscall]"))
			continue;
		len = hi - lo < SCAN_MAX ? hi - lo : SCAN_MAX;
		n = pread(mem, buf, len, (off_t)lo);
		for (ssize_t k = 0; k + 1 < n; k++)
			if (buf[k] == 0x0f && buf[k + 1] == 0x05) {
				found = lo + (uint64_t)k;
				break;
			}
	}
	free(buf);
	if (mem >= 0)
		close(mem);
	if (maps)
		fclose(maps);
	return found;
}

/* Reap every thread of a as its tracer (the leader last: its parent's turn). */
static void reap_threads(struct crs_agent *a)
{
	struct timespec nap = { .tv_nsec = 5 * 1000 * 1000 };
	time_t deadline = time(NULL) + 10;
	size_t left = a->nr;
	int st;

	while (left && time(NULL) < deadline) {
		left = 0;
		for (size_t i = 0; i < a->nr; i++) {
			pid_t p;

			if (!a->tids[i])
				continue;
			p = waitpid(a->tids[i], &st, __WALL | WNOHANG);
			/* ECHILD: reaped by another of our waits, or gone */
			if ((p == a->tids[i] && (WIFEXITED(st) || WIFSIGNALED(st))) ||
			    (p < 0 && errno == ECHILD)) {
				a->tids[i] = 0;
				continue;
			}
			left++;
		}
		if (left)
			nanosleep(&nap, NULL);
	}
	free(a->tids);
	*a = (struct crs_agent){ 0 };
}

int crs_agent_end(struct crs_agent *a, int code, int timeout_ms, char *err, size_t errlen)
{
	struct timespec nap = { .tv_nsec = 5 * 1000 * 1000 };
	pid_t pid = a->pid;
	struct user_regs_struct regs;
	uint64_t at;
	int waited = 0;

	/* A tracee answers only once in its trap; another wait may have taken the stop. */
	while (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0) {
		if (errno != ESRCH || waited >= timeout_ms) {
			int e = errno;

			crs_agent_kill(a);
			return crs_fail(err, errlen, -e, "agent %d never reached its trap: %s", pid,
					strerror(e));
		}
		nanosleep(&nap, NULL);
		waited += 5;
	}
	at = find_syscall(pid);
	if (!at) {
		crs_agent_kill(a);
		return crs_fail(err, errlen, -ENOEXEC,
				"agent %d has no syscall instruction to end on: it was killed", pid);
	}
	regs.rip = at;
	regs.rax = SYS_exit_group;
	regs.rdi = (uint64_t)(code & 0xff);
	regs.orig_rax = (uint64_t)-1;	/* no syscall restart on the way out of the trap */
	if (ptrace(PTRACE_SETREGS, pid, 0, &regs) < 0 || ptrace(PTRACE_CONT, pid, 0, 0) < 0) {
		int e = errno;

		crs_agent_kill(a);
		return crs_fail(err, errlen, -e, "agent %d cannot be ended: %s", pid, strerror(e));
	}
	/*
	 * Signals still queued for it (the release's SIGCONT, a SIGCHLD)
	 * stop it at their delivery first: each is suppressed, no handler of
	 * its own runs. A stop another wait of ours reaped is seen as a
	 * tracee that takes PTRACE_CONT.
	 */
	for (waited = 0; waited < 10000 && !crs_proc_zombie(pid); waited += 5) {
		int st;
		pid_t p = waitpid(pid, &st, __WALL | WNOHANG);

		if (p == pid && (WIFEXITED(st) || WIFSIGNALED(st)))
			break;
		if (p < 0 && errno == ECHILD)
			break;
		ptrace(PTRACE_CONT, pid, 0, 0);
		nanosleep(&nap, NULL);
	}
	reap_threads(a);
	return 0;
}

void crs_agent_kill(struct crs_agent *a)
{
	if (!a->pid)
		return;
	kill(a->pid, SIGKILL);
	reap_threads(a);
}
