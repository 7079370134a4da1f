/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One interface over the two ways crdbg can hold a process still: the
 * crdbg.ko module (exact, survives a tracer's attach/detach) and the
 * ptrace fallback (no module needed; takes the tracer slot). Callers pick a
 * backend with freeze_backend_open(); every operation returns 0 or a
 * negative errno and fills *err_msg (when non-NULL) with a one-line reason
 * the CLI can print.
 */
#ifndef CRDBG_FREEZE_H
#define CRDBG_FREEZE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum freeze_backend_kind {
	FREEZE_BACKEND_AUTO,	/* kmod if loaded, else ptrace; CRDBG_BACKEND overrides */
	FREEZE_BACKEND_KMOD,
	FREEZE_BACKEND_PTRACE,
};

/* Registers captured at freeze, x86-64 user view (struct user_regs_struct order). */
struct freeze_regs {
	uint64_t r15, r14, r13, r12, bp, bx, r11, r10;
	uint64_t r9, r8, ax, cx, dx, si, di, orig_ax;
	uint64_t ip, cs, flags, sp, ss, fs_base, gs_base;
	uint64_t ds, es, fs, gs;
};

enum freeze_thread_state {
	FREEZE_THREAD_RUNNING,	/* not yet parked */
	FREEZE_THREAD_FROZEN,	/* parked; regs valid */
	FREEZE_THREAD_HOOK_PENDING,	/* hook pushed, not yet run */
	FREEZE_THREAD_EXITED,
};

struct freeze_thread {
	pid_t tid;
	enum freeze_thread_state state;
	struct freeze_regs regs;
};

#define FREEZE_F_PERSIST	(1u << 0)	/* survive the requesting handle's close */

struct freeze_backend;

/* Open a backend; *ret is untouched on failure. */
int freeze_backend_open(enum freeze_backend_kind kind, struct freeze_backend **ret,
			char *err_msg, size_t err_len);
void freeze_backend_close(struct freeze_backend *b);	/* accepts NULL; releases non-persistent freezes */
const char *freeze_backend_name(const struct freeze_backend *b);	/* "kmod" or "ptrace" */
/* FREEZE_BACKEND_KMOD or FREEZE_BACKEND_PTRACE: the backend actually opened. */
enum freeze_backend_kind freeze_backend_kind(const struct freeze_backend *b);
enum freeze_backend_kind freeze_backend_kind_from_string(const char *s);	/* -1 cast if unknown */

int freeze_process(struct freeze_backend *b, pid_t pid, unsigned int flags,
		   char *err_msg, size_t err_len);
int freeze_thaw(struct freeze_backend *b, pid_t pid, char *err_msg, size_t err_len);

/*
 * Fill up to max threads of a frozen pid; returns the number of threads
 * (which may exceed max: call again with a larger array) or -errno.
 */
int freeze_query(struct freeze_backend *b, pid_t pid, struct freeze_thread *threads,
		  size_t max, char *err_msg, size_t err_len);

/*
 * Make every thread of pid (or only tid when tid != 0) run
 * trampoline(arg) on its next return to user mode, then resume at its exact
 * PC with every register intact. The process must be frozen; the hook runs
 * after thaw.
 */
int freeze_push_hook(struct freeze_backend *b, pid_t pid, pid_t tid, uint64_t trampoline,
	      uint64_t arg, char *err_msg, size_t err_len);

/*
 * The SIGCONTs pid had pending before a group stop discarded them (a stop
 * signal flushes every pending SIGCONT: kernel/signal.c, prepare_signal()):
 * one for the whole process (shared) and one on each of the nr threads
 * tids. This handle's thaw of pid queues them again after it has ended
 * pid's group stop (a SIGCONT sent before would end the stop itself, with
 * no thread held) and before it lets any thread run: where the program
 * blocks SIGCONT, as it did, they stay pending and no handler runs early.
 * Replaces an earlier call for pid; at most FREEZE_MAX_SIGCONT_TIDS tids.
 * The ptrace backend only: crdbg.ko never ends a group stop (-EOPNOTSUPP;
 * its caller queues them itself while the module holds the process).
 */
#define FREEZE_MAX_SIGCONT_TIDS	65536
int freeze_requeue_sigcont(struct freeze_backend *b, pid_t pid, bool shared, const pid_t *tids,
			   size_t nr, char *err_msg, size_t err_len);

#endif /* CRDBG_FREEZE_H */
