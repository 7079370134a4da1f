// SPDX-License-Identifier: GPL-2.0
/*
 * The ptrace freeze backend: no module needed.
 *
 * Freeze: PTRACE_SEIZE every thread (PTRACE_O_TRACECLONE, so a thread
 * created meanwhile is auto-attached and stops before its first
 * instruction), PTRACE_INTERRUPT it, wait until each reports a stop, and
 * read its registers with PTRACE_GETREGS. A thread stopped at a clone
 * event is re-interrupted and let finish the syscall, so every frozen
 * thread waits in get_signal(), i.e. on its way back to user mode.
 *
 * The state lives in this process (the tracer). When the handle closes:
 *  - a plain freeze is released: every thread is detached and runs on;
 *  - a FREEZE_F_PERSIST freeze is handed over to a SIGSTOP group stop:
 *    SIGSTOP is queued to one thread, that thread is continued into it
 *    (it dequeues SIGSTOP before any user instruction), which makes the
 *    group stop pending for every other thread; they are continued into
 *    the stop, then everything is detached. The kernel keeps a detached
 *    task in the group stop, so no user instruction runs in between.
 *    The process then stays stopped with no tracer: CRIU or a debugger
 *    can attach, and a later thaw (from any crdbg) seizes it again and
 *    ends the stop with a SIGCONT it takes back before the program sees
 *    it (end_group_stop()): a SIGCONT handler does not run.
 * If crdbg dies without closing, the kernel detaches and the target runs.
 *
 * Limits: ptrace belongs to the tracing *thread*, so a handle must be
 * used from the thread that froze the process; the tracer slot is taken
 * (a debugger or CRIU cannot attach while this handle holds the process);
 * the stop is visible to the real parent's waitpid (WUNTRACED) after a
 * hand-over, and its end at thaw (WCONTINUED, SIGCHLD); any SIGCONT ends a
 * handed-over freeze; a signal that arrived while freezing is re-queued
 * with tgkill() at thaw or hand-over and loses its original siginfo. The
 * hand-over's SIGSTOP discards every pending SIGCONT: the caller records
 * them first and gives them back to the thaw (freeze_requeue_sigcont()),
 * which queues them once the stop has ended, before any thread runs.
 *
 * Hooks: freeze_push_hook() only records the request; thaw runs it, following
 * the "hook frame" contract of <linux/crdbg.h> with return_via USER: a
 * struct crdbg_hook_frame holding the registers the thread resumes with
 * (the kernel's syscall-restart folding applied by hand) is written below
 * the red zone, the thread is pointed at the trampoline with rsp at the
 * frame, rdi = arg, DF/TF clear and orig_ax = -1 (so the kernel does not
 * rewind the new ip for a restart), and detached. The trampoline saves
 * and restores the extended state itself, calls the hook and restores the
 * GPRs, flags, rip and rsp from the frame in user space. So the tracer
 * slot is free while the hook runs, exactly as with crdbg.ko: a hook that
 * waits for a debugger (the MPIR waitpoint) can be attached to. Unlike
 * crdbg.ko, restart_block is not saved: a nanosleep-like call interrupted
 * at freeze resumes through restart_syscall with whatever restart_block
 * the thread has then (its own, unless the hook itself was interrupted in
 * such a call). A persistent freeze handed over to a group stop keeps its
 * hooks: they run when the stop ends.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/crdbg.h>

#include "freeze-backend.h"

#define MAX_REQUEUE		8

_Static_assert(sizeof(struct freeze_regs) == sizeof(struct user_regs_struct),
	       "struct freeze_regs must mirror struct user_regs_struct");
_Static_assert(sizeof(struct crdbg_regs) == sizeof(struct user_regs_struct),
	       "struct crdbg_regs must mirror struct user_regs_struct");
_Static_assert(sizeof(struct crdbg_hook_frame) % 16 == 0, "hook frame keeps rsp aligned");

struct pt_thread {
	pid_t tid;
	enum freeze_thread_state state;
	bool stopped;		/* in a ptrace stop we have waited for */
	bool group_stop;	/* that stop is a group-stop trap */
	int pending_sig;	/* dequeued by a signal-delivery stop; delivered later */
	struct freeze_regs regs;
	bool hook;
	uint64_t hook_trampoline, hook_arg;
	int requeue[MAX_REQUEUE];
	int nr_requeue;
};

struct pt_target {
	pid_t pid;
	unsigned int flags;
	size_t nr, cap;
	struct pt_thread *threads;
	struct pt_target *next;
};

/* SIGCONTs to queue again when the thaw of pid ends its group stop. */
struct pt_sigcont {
	pid_t pid;
	bool shared;		/* one for the whole process */
	size_t nr;
	pid_t *tids;		/* one on each of these threads */
	struct pt_sigcont *next;
};

struct ptrace_backend {
	struct freeze_backend base;
	struct pt_target *targets;
	struct pt_sigcont *sigconts;
};

static struct ptrace_backend *to_pt(struct freeze_backend *b)
{
	return container_of(b, struct ptrace_backend, base);
}

/* ---- /proc helpers ---- */

/* Read the task ids of pid; returns the count or -errno. */
static int list_tids(pid_t pid, pid_t **ret)
{
	char path[64];
	struct dirent *d;
	pid_t *tids = NULL, *n;
	size_t nr = 0, cap = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		char *end;
		long tid = strtol(d->d_name, &end, 10);

		if (d->d_name[0] < '0' || d->d_name[0] > '9' || *end || tid <= 0)
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 64;
			n = realloc(tids, cap * sizeof(*tids));
			if (!n) {
				free(tids);
				closedir(dir);
				return -ENOMEM;
			}
			tids = n;
		}
		tids[nr++] = (pid_t)tid;
	}
	closedir(dir);
	*ret = tids;
	return (int)nr;
}

/* State letter of /proc/PID/task/TID/stat, or 0 when it cannot be read. */
static char task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static pid_t status_field(pid_t tid, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	pid_t val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			val = (pid_t)strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return val;
}

/*
 * 1 when every thread of pid is in a job-control stop ('T') with no
 * tracer, 0 when none is stopped, -EBUSY when some thread is traced (by
 * another process), -EINVAL for a mix, -ESRCH when pid does not exist.
 */
static int process_stopped(pid_t pid, char *err_msg, size_t err_len)
{
	int nr, i, stopped = 0, traced = 0;
	pid_t *tids;

	nr = list_tids(pid, &tids);
	if (nr < 0) {
		snprintf(err_msg, err_len, "pid %d: no such process", pid);
		return -ESRCH;
	}
	for (i = 0; i < nr; i++) {
		char s = task_state(pid, tids[i]);

		if (s == 'T')
			stopped++;
		else if (s == 't')
			traced++;
	}
	free(tids);
	if (traced) {
		snprintf(err_msg, err_len, "pid %d is held by tracer pid %d (another crdbg or a debugger)",
			 pid, status_field(pid, "TracerPid"));
		return -EBUSY;
	}
	if (nr > 0 && stopped == nr)
		return 1;
	if (!stopped)
		return 0;
	snprintf(err_msg, err_len, "pid %d: only %d of %d threads are stopped", pid, stopped, nr);
	return -EINVAL;
}

/*
 * A detached thread re-enters the group stop on its own a moment later:
 * wait (bounded) until /proc shows every thread stopped, so callers see
 * a settled state when we return.
 */
static void wait_settled(pid_t pid)
{
	char scratch[128];
	int i;

	for (i = 0; i < 20000; i++) {
		int r = process_stopped(pid, scratch, sizeof(scratch));

		if (r == 1 || r == -ESRCH)
			return;
		usleep(100);
	}
}

/* ---- bookkeeping ---- */

static struct pt_target *target_find(struct ptrace_backend *pb, pid_t pid)
{
	struct pt_target *t;

	for (t = pb->targets; t; t = t->next)
		if (t->pid == pid)
			return t;
	return NULL;
}

static struct pt_thread *thread_find(struct pt_target *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		if (t->threads[i].tid == tid)
			return &t->threads[i];
	return NULL;
}

static struct pt_thread *thread_add(struct pt_target *t, pid_t tid)
{
	struct pt_thread *th = thread_find(t, tid);

	if (th)
		return th;
	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct pt_thread *n = realloc(t->threads, cap * sizeof(*n));

		if (!n)
			return NULL;
		t->threads = n;
		t->cap = cap;
	}
	th = &t->threads[t->nr++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	th->state = FREEZE_THREAD_RUNNING;
	return th;
}

static void target_free(struct pt_target *t)
{
	if (!t)
		return;
	free(t->threads);
	free(t);
}

static void target_unlink(struct ptrace_backend *pb, struct pt_target *t)
{
	struct pt_target **pp;

	for (pp = &pb->targets; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			return;
		}
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static void requeue_later(struct pt_thread *th, int sig)
{
	if (th->nr_requeue < MAX_REQUEUE)
		th->requeue[th->nr_requeue++] = sig;
}

static void requeue_signals(pid_t pid, struct pt_thread *th)
{
	int i;

	for (i = 0; i < th->nr_requeue; i++)
		syscall(SYS_tgkill, pid, th->tid, th->requeue[i]);
	th->nr_requeue = 0;
}

/* A thread auto-attached through a clone that is not ours: let it go. */
static void release_foreign(pid_t tid)
{
	int st;

	if (waitpid(tid, &st, __WALL) == tid && WIFSTOPPED(st))
		ptrace(PTRACE_DETACH, tid, 0, 0);
}

/*
 * A traced thread stopped at a clone event: adopt the new thread (it is
 * auto-attached and will stop before its first instruction), then let the
 * creator finish the syscall and stop again on its way to user mode.
 */
static int handle_clone(struct pt_target *t, pid_t tid)
{
	unsigned long msg = 0;
	pid_t child;

	if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 && msg) {
		child = (pid_t)msg;
		if (status_field(child, "Tgid") == t->pid) {
			if (!thread_add(t, child))
				return -ENOMEM;
		} else {
			release_foreign(child);
		}
	}
	ptrace(PTRACE_INTERRUPT, tid, 0, 0);
	if (ptrace(PTRACE_CONT, tid, 0, 0) < 0)
		return -errno;
	return 0;
}

/*
 * Wait until thread idx of t is in a stop (or gone). Returns 0 when
 * stopped, -ESRCH when the thread exited. The array may grow meanwhile
 * (clone events), so the thread is re-read by index.
 */
static int wait_stopped(struct pt_target *t, size_t idx)
{
	pid_t tid = t->threads[idx].tid;
	int st, err;

	while (!t->threads[idx].stopped) {
		struct pt_thread *th;
		pid_t r = waitpid(tid, &st, __WALL);

		th = &t->threads[idx];
		if (r < 0) {
			if (errno == EINTR)
				continue;
			th->state = FREEZE_THREAD_EXITED;
			return -ESRCH;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			th->state = FREEZE_THREAD_EXITED;
			return -ESRCH;
		}
		if (!WIFSTOPPED(st))
			continue;
		switch (st >> 16) {
		case PTRACE_EVENT_CLONE:
			err = handle_clone(t, tid);
			if (err < 0)
				return err;
			break;
		case PTRACE_EVENT_STOP:
			th->stopped = true;
			th->group_stop = is_stop_signal(WSTOPSIG(st));
			break;
		case 0:
			/* signal-delivery stop: keep the signal for later */
			th->stopped = true;
			th->group_stop = false;
			th->pending_sig = WSTOPSIG(st);
			break;
		default:
			th->stopped = true;
			break;
		}
	}
	return 0;
}

static void seize_error(pid_t pid, pid_t tid, int err, char *err_msg, size_t err_len)
{
	pid_t tracer = status_field(tid, "TracerPid");

	if (err == EPERM && tracer > 0)
		snprintf(err_msg, err_len,
			 "pid %d is already traced by pid %d (a debugger?); detach it or use --backend kmod",
			 pid, tracer);
	else if (err == EPERM)
		snprintf(err_msg, err_len,
			 "not permitted to ptrace pid %d (other user, or kernel.yama.ptrace_scope)", pid);
	else
		snprintf(err_msg, err_len, "cannot ptrace thread %d of pid %d: %s", tid, pid,
			 strerror(err));
}

/* Release every thread (best effort): used on errors and at thaw. */
static void detach_all(struct pt_target *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++) {
		struct pt_thread *th = &t->threads[i];

		if (th->state == FREEZE_THREAD_EXITED)
			continue;
		if (!th->stopped) {
			ptrace(PTRACE_INTERRUPT, th->tid, 0, 0);
			if (wait_stopped(t, i) < 0)
				continue;
			th = &t->threads[i];
		}
		ptrace(PTRACE_DETACH, th->tid, 0, th->pending_sig);
		th->stopped = false;
		requeue_signals(t->pid, th);
	}
}

/* One pass: seize every listed thread we do not hold yet. */
static int seize_new(struct pt_target *t, char *err_msg, size_t err_len)
{
	int nr, i, added = 0, err = 0;
	pid_t *tids;

	nr = list_tids(t->pid, &tids);
	if (nr < 0) {
		snprintf(err_msg, err_len, "pid %d: no such process", t->pid);
		return -ESRCH;
	}
	for (i = 0; i < nr; i++) {
		pid_t tid = tids[i];
		struct pt_thread *th;
		char st;

		if (thread_find(t, tid))
			continue;
		if (ptrace(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACECLONE) < 0) {
			int e = errno;

			if (e == ESRCH)
				continue;	/* exited meanwhile */
			if (e == EPERM && status_field(tid, "TracerPid") == (pid_t)syscall(SYS_gettid)) {
				/* auto-attached through a clone we have not seen yet */
			} else if (e == EPERM && ((st = task_state(t->pid, tid)) == 'Z' || st == 'X' ||
						  !st)) {
				/*
				 * Past its exit, which the kernel refuses to
				 * trace with EPERM: a zombie leader, or a
				 * thread being reaped (its entry going or gone).
				 */
				continue;
			} else {
				seize_error(t->pid, tid, e, err_msg, err_len);
				err = -e;
				break;
			}
		}
		th = thread_add(t, tid);
		if (!th) {
			err = -ENOMEM;
			snprintf(err_msg, err_len, "out of memory");
			break;
		}
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
		added++;
	}
	free(tids);
	return err < 0 ? err : added;
}

static int read_regs(struct pt_thread *th)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, th->tid, 0, &r) < 0)
		return -errno;
	memcpy(&th->regs, &r, sizeof(r));
	return 0;
}

static int do_freeze(struct pt_target *t, char *err_msg, size_t err_len)
{
	size_t i;
	int err;

	for (;;) {
		err = seize_new(t, err_msg, err_len);
		if (err < 0)
			return err;
		if (!err && !t->nr) {
			snprintf(err_msg, err_len, "pid %d: no such process", t->pid);
			return -ESRCH;
		}
		if (!err)
			break;
		/* t->nr grows while we wait (clone events): index, no pointer */
		for (i = 0; i < t->nr; i++) {
			err = wait_stopped(t, i);
			if (err == -ENOMEM) {
				snprintf(err_msg, err_len, "out of memory");
				return err;
			}
		}
	}
	for (i = 0; i < t->nr; i++) {
		struct pt_thread *th = &t->threads[i];

		if (th->state == FREEZE_THREAD_EXITED)
			continue;
		if (th->tid == t->pid && !th->stopped) {
			snprintf(err_msg, err_len, "pid %d exited while freezing", t->pid);
			return -ESRCH;
		}
		if (read_regs(th) < 0) {
			th->state = FREEZE_THREAD_EXITED;
			continue;
		}
		th->state = FREEZE_THREAD_FROZEN;
	}
	if (!thread_find(t, t->pid) || thread_find(t, t->pid)->state == FREEZE_THREAD_EXITED) {
		/* the leader may be a zombie; the process lives while a thread does */
		for (i = 0; i < t->nr; i++)
			if (t->threads[i].state == FREEZE_THREAD_FROZEN)
				return 0;
		snprintf(err_msg, err_len, "pid %d exited while freezing", t->pid);
		return -ESRCH;
	}
	return 0;
}

/* ---- hooks ---- */

static int write_frame(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)addr, len };
	const uint64_t *w = buf;
	size_t i;

	if (process_vm_writev(tid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	for (i = 0; i < len / 8; i++)
		if (ptrace(PTRACE_POKEDATA, tid, (void *)(addr + 8 * i), (void *)w[i]) < 0)
			return -errno;
	return 0;
}

/*
 * Point a stopped thread at the trampoline as the UAPI's "hook frame"
 * says: rsp at a struct crdbg_hook_frame (return_via USER) below the red
 * zone, rip at the trampoline, rdi = arg, DF/TF clear, everything else as
 * interrupted. The thread enters it when it is next let go.
 */
static int hook_start(struct pt_thread *th, char *err_msg, size_t err_len)
{
	struct crdbg_hook_frame frame;
	struct user_regs_struct r;
	struct crdbg_regs regs;
	uint64_t addr;
	int err;

	if (ptrace(PTRACE_GETREGS, th->tid, 0, &r) < 0)
		goto fail;
	memcpy(&regs, &r, sizeof(regs));
	addr = crdbg_hook_frame_init(&frame, &regs, th->hook_arg, CRDBG_HOOK_RETURN_USER,
				     ((uint64_t)th->tid << 32) ^ r.rip);
	err = write_frame(th->tid, addr, &frame, sizeof(frame));
	if (err < 0) {
		errno = -err;
		goto fail;
	}
	r.rsp = addr;
	r.rip = th->hook_trampoline;
	r.rdi = th->hook_arg;
	r.orig_rax = (unsigned long long)-1;	/* no syscall restart on this return */
	r.eflags &= ~((1ULL << 10) | (1ULL << 8));	/* DF, TF */
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &r) < 0)
		goto fail;
	th->hook = false;
	return 0;
fail:
	th->hook = false;
	snprintf(err_msg, err_len, "cannot push the hook on thread %d: %s", th->tid,
		 strerror(errno));
	return -errno;
}

/* Set up every pending hook of t (threads still stopped). */
static int start_hooks(struct pt_target *t, char *err_msg, size_t err_len)
{
	int err = 0, e;
	size_t i;

	for (i = 0; i < t->nr; i++) {
		struct pt_thread *th = &t->threads[i];

		if (th->state == FREEZE_THREAD_EXITED || !th->hook || !th->stopped)
			continue;
		e = hook_start(th, err_msg, err_len);
		err = err ?: e;
	}
	return err;
}

/* ---- ending a group stop ---- */

/*
 * Let a held thread go. One that died meanwhile (its process exited as
 * soon as another thread ran) cannot be detached: its tracer must reap it,
 * or the process never goes away (its parent waits forever).
 */
static void detach_thread(struct pt_thread *th, int sig)
{
	int st;

	while (ptrace(PTRACE_DETACH, th->tid, 0, sig) < 0 && errno == ESRCH) {
		if (waitpid(th->tid, &st, __WALL) < 0 && errno != EINTR)
			break;
		if (!WIFSTOPPED(st))
			break;		/* it exited: reaped */
	}
	th->stopped = false;
}

/* SIGCONT is queued on tid itself (SigPnd of its status: not the shared queue). */
static bool sigcont_queued(pid_t pid, pid_t tid)
{
	char path[64], line[256];
	unsigned long long pnd = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigPnd: %llx", &pnd) == 1)
			break;
	fclose(f);
	return pnd & (1ULL << (SIGCONT - 1));
}

/*
 * Only SIGCONT ends a group stop (the hand-over's, or CRIU's), and a
 * program that handles SIGCONT would run its handler: raw CRIU sends none.
 * So SIGCONT goes to one thread, with tgkill (its own queue: no other
 * thread can take it) and every other signal blocked for the moment; that
 * thread dequeues it into a signal-delivery stop, and is detached later
 * with no signal, which drops it. A SIGCONT the thread ignores is not even
 * queued. Every other thread stays in its ptrace stop meanwhile (the
 * stop's end only marks a trap for a seized thread): nothing runs in user
 * mode until the caller detaches them, after queueing the SIGCONTs the
 * group stop discarded (queue_sigconts()). Returns the thread that took
 * the SIGCONT.
 */
static int end_group_stop(struct pt_target *t, struct pt_thread **held, char *err_msg,
			  size_t err_len)
{
	uint64_t old, only_cont = ~(1ULL << (SIGCONT - 1));
	struct pt_thread *th = NULL;
	int st, tries, err = 0;
	size_t i;

	*held = NULL;
	for (i = 0; i < t->nr && !th; i++)
		if (t->threads[i].state != FREEZE_THREAD_EXITED && t->threads[i].stopped &&
		    t->threads[i].group_stop)
			th = &t->threads[i];
	if (!th)
		return 0;
	*held = th;
	if (ptrace(PTRACE_GETSIGMASK, th->tid, sizeof(old), &old) < 0 ||
	    ptrace(PTRACE_SETSIGMASK, th->tid, sizeof(only_cont), &only_cont) < 0 ||
	    syscall(SYS_tgkill, t->pid, th->tid, SIGCONT) < 0) {
		err = -errno;
		snprintf(err_msg, err_len, "pid %d: cannot end its group stop: %s", t->pid,
			 strerror(errno));
		return err;
	}
	/* a trap (the stop's end) comes first, then the signal; a few at most */
	for (tries = 0; tries < 16 && sigcont_queued(t->pid, th->tid); tries++) {
		if (ptrace(PTRACE_CONT, th->tid, 0, 0) < 0)
			break;
		while (waitpid(th->tid, &st, __WALL) < 0 && errno == EINTR)
			;
		if (!WIFSTOPPED(st)) {
			th->state = FREEZE_THREAD_EXITED;
			th->stopped = false;
			*held = NULL;
			return 0;
		}
		if ((st >> 16) == 0 && WSTOPSIG(st) != SIGCONT)
			requeue_later(th, WSTOPSIG(st));
	}
	if (ptrace(PTRACE_SETSIGMASK, th->tid, sizeof(old), &old) < 0)
		err = -errno;
	th->group_stop = false;
	if (err)
		snprintf(err_msg, err_len, "pid %d: cannot restore a signal mask: %s", t->pid,
			 strerror(-err));
	return err;
}

/*
 * The SIGCONTs a group stop discarded, queued again while every thread of
 * t is still held (in a ptrace stop, the group stop already ended: sent
 * during the stop, a SIGCONT would end it). A standard signal already
 * pending is not queued twice. A thread gone meanwhile is skipped.
 */
static void queue_sigconts(const struct pt_target *t, const struct pt_sigcont *sc)
{
	size_t i;

	if (!sc)
		return;
	if (sc->shared)
		kill(t->pid, SIGCONT);
	for (i = 0; i < sc->nr; i++)
		syscall(SYS_tgkill, t->pid, sc->tids[i], SIGCONT);
}

/* ---- ops ---- */

/*
 * Thaw: hooks, then (end_stop: the process is in a group stop we are to
 * end) the stop ended without a SIGCONT it sees, then the SIGCONTs sc
 * says the stop discarded queued again, then every thread let go.
 */
static int pt_release(struct pt_target *t, bool end_stop, const struct pt_sigcont *sc,
		      char *err_msg, size_t err_len)
{
	int err = start_hooks(t, err_msg, err_len), e = 0;
	struct pt_thread *held = NULL;
	size_t i;

	if (end_stop)
		e = end_group_stop(t, &held, err_msg, err_len);
	err = err ?: e;
	queue_sigconts(t, sc);
	for (i = 0; i < t->nr; i++) {
		struct pt_thread *th = &t->threads[i];

		if (th->state == FREEZE_THREAD_EXITED || th == held)
			continue;
		if (th->stopped)
			detach_thread(th, th->pending_sig);
		requeue_signals(t->pid, th);
	}
	if (held) {
		detach_thread(held, 0);
		requeue_signals(t->pid, held);
	}
	return err;
}

static struct pt_sigcont *sigcont_take(struct ptrace_backend *pb, pid_t pid)
{
	struct pt_sigcont **pp, *sc;

	for (pp = &pb->sigconts; *pp; pp = &(*pp)->next)
		if ((*pp)->pid == pid) {
			sc = *pp;
			*pp = sc->next;
			return sc;
		}
	return NULL;
}

static void sigcont_free(struct pt_sigcont *sc)
{
	if (!sc)
		return;
	free(sc->tids);
	free(sc);
}

static int pt_thaw_target(struct ptrace_backend *pb, struct pt_target *t, char *err_msg,
			  size_t err_len)
{
	struct pt_sigcont *sc = sigcont_take(pb, t->pid);
	int err = pt_release(t, true, sc, err_msg, err_len);

	sigcont_free(sc);
	return err;
}

/* Turn a ptrace freeze into a SIGSTOP group stop and detach (see top). */
static int pt_hand_over(struct pt_target *t, char *err_msg, size_t err_len)
{
	struct pt_thread *first = NULL;
	int st, err = 0;
	size_t i;

	for (i = 0; i < t->nr; i++) {
		struct pt_thread *th = &t->threads[i];

		if (th->state == FREEZE_THREAD_EXITED || !th->stopped || th->group_stop)
			continue;
		if (th->pending_sig) {
			requeue_later(th, th->pending_sig);
			th->pending_sig = 0;
		}
		if (!first)
			first = th;
	}
	if (first) {
		syscall(SYS_tgkill, t->pid, first->tid, SIGSTOP);
		ptrace(PTRACE_CONT, first->tid, 0, 0);
		for (;;) {
			if (waitpid(first->tid, &st, __WALL) < 0) {
				if (errno == EINTR)
					continue;
				err = -errno;
				break;
			}
			if (!WIFSTOPPED(st)) {
				first->state = FREEZE_THREAD_EXITED;
				err = -ESRCH;
				break;
			}
			if ((st >> 16) == PTRACE_EVENT_STOP && is_stop_signal(WSTOPSIG(st)))
				break;	/* in the group stop */
			if ((st >> 16) == 0 && WSTOPSIG(st) == SIGSTOP) {
				ptrace(PTRACE_CONT, first->tid, 0, SIGSTOP);
				continue;
			}
			if ((st >> 16) == 0)
				requeue_later(first, WSTOPSIG(st));
			ptrace(PTRACE_CONT, first->tid, 0, 0);
		}
		first->group_stop = true;
		if (err < 0)
			snprintf(err_msg, err_len, "pid %d: hand-over to a group stop failed: %s",
				 t->pid, strerror(-err));
	}
	/* the group stop is pending for every other thread: let them enter it */
	for (i = 0; i < t->nr && !err; i++) {
		struct pt_thread *th = &t->threads[i];

		if (th->state == FREEZE_THREAD_EXITED || !th->stopped || th->group_stop)
			continue;
		ptrace(PTRACE_CONT, th->tid, 0, 0);
		for (;;) {
			if (waitpid(th->tid, &st, __WALL) < 0 && errno == EINTR)
				continue;
			if (!WIFSTOPPED(st)) {
				th->state = FREEZE_THREAD_EXITED;
				break;
			}
			if ((st >> 16) == PTRACE_EVENT_STOP && is_stop_signal(WSTOPSIG(st)))
				break;
			if ((st >> 16) == 0)
				requeue_later(th, WSTOPSIG(st));
			ptrace(PTRACE_CONT, th->tid, 0, 0);
		}
		th->group_stop = true;
	}
	for (i = 0; i < t->nr; i++) {
		struct pt_thread *th = &t->threads[i];

		if (th->state == FREEZE_THREAD_EXITED || !th->stopped)
			continue;
		ptrace(PTRACE_DETACH, th->tid, 0, 0);
		th->stopped = false;
	}
	for (i = 0; i < t->nr; i++)
		if (t->threads[i].state != FREEZE_THREAD_EXITED)
			requeue_signals(t->pid, &t->threads[i]);
	if (!err)
		wait_settled(t->pid);
	return err;
}

static int pt_freeze(struct freeze_backend *b, pid_t pid, unsigned int flags,
		     char *err_msg, size_t err_len)
{
	struct ptrace_backend *pb = to_pt(b);
	struct pt_target *t;
	int err;

	if (target_find(pb, pid)) {
		snprintf(err_msg, err_len, "pid %d is already frozen by this handle", pid);
		return -EALREADY;
	}
	if (pid == getpid()) {
		snprintf(err_msg, err_len, "crdbg cannot freeze itself");
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err_msg, err_len, "out of memory");
		return -ENOMEM;
	}
	t->pid = pid;
	t->flags = flags;
	err = do_freeze(t, err_msg, err_len);
	if (err < 0) {
		detach_all(t);
		target_free(t);
		return err;
	}
	t->next = pb->targets;
	pb->targets = t;
	return 0;
}

static int pt_thaw(struct freeze_backend *b, pid_t pid, char *err_msg, size_t err_len)
{
	struct ptrace_backend *pb = to_pt(b);
	struct pt_target *t = target_find(pb, pid);
	int err;

	if (t) {
		target_unlink(pb, t);
		err = pt_thaw_target(pb, t, err_msg, err_len);
		target_free(t);
		return err;
	}
	/* not ours: a freeze handed over to a group stop earlier */
	err = process_stopped(pid, err_msg, err_len);
	if (err < 0)
		return err;
	if (err == 0) {
		snprintf(err_msg, err_len, "pid %d is not frozen", pid);
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err_msg, err_len, "out of memory");
		return -ENOMEM;
	}
	t->pid = pid;
	err = do_freeze(t, err_msg, err_len);
	if (err < 0)
		detach_all(t);
	else
		err = pt_thaw_target(pb, t, err_msg, err_len);
	target_free(t);
	return err;
}

static size_t fill_threads(const struct pt_target *t, struct freeze_thread *out, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < t->nr; i++) {
		const struct pt_thread *th = &t->threads[i];

		if (th->state == FREEZE_THREAD_EXITED)
			continue;
		if (n < max) {
			out[n].tid = th->tid;
			out[n].state = th->hook ? FREEZE_THREAD_HOOK_PENDING : th->state;
			out[n].regs = th->regs;
		}
		n++;
	}
	return n;
}

static int pt_query(struct freeze_backend *b, pid_t pid, struct freeze_thread *threads,
		    size_t max, char *err_msg, size_t err_len)
{
	struct ptrace_backend *pb = to_pt(b);
	struct pt_target *t = target_find(pb, pid);
	size_t i, n;
	int err;

	if (t)
		return (int)fill_threads(t, threads, max);

	/* A handed-over freeze: attach for a moment, read, leave it stopped. */
	err = process_stopped(pid, err_msg, err_len);
	if (err < 0)
		return err;
	if (err == 0) {
		snprintf(err_msg, err_len, "pid %d is not frozen (run 'crdbg freeze %d' first)",
			 pid, pid);
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->pid = pid;
	err = do_freeze(t, err_msg, err_len);
	if (err >= 0) {
		n = fill_threads(t, threads, max);
		err = (int)n;
	}
	for (i = 0; i < t->nr; i++)
		if (t->threads[i].group_stop && t->threads[i].stopped) {
			ptrace(PTRACE_DETACH, t->threads[i].tid, 0, 0);
			t->threads[i].stopped = false;
		}
	/* anything not in a group stop (should not happen) goes back to one */
	if (err >= 0 && pt_hand_over(t, err_msg, err_len) < 0)
		err = -EIO;
	else if (err < 0)
		detach_all(t);
	target_free(t);
	return err;
}

static int pt_push_hook(struct freeze_backend *b, pid_t pid, pid_t tid, uint64_t trampoline,
			uint64_t arg, char *err_msg, size_t err_len)
{
	struct pt_target *t = target_find(to_pt(b), pid);
	size_t i;
	int n = 0;

	if (!t) {
		snprintf(err_msg, err_len,
			 "pid %d is not frozen by this handle (the ptrace backend runs hooks only for its own freezes)",
			 pid);
		return -EINVAL;
	}
	for (i = 0; i < t->nr; i++) {
		struct pt_thread *th = &t->threads[i];

		if (th->state != FREEZE_THREAD_FROZEN || (tid && th->tid != tid))
			continue;
		th->hook = true;
		th->hook_trampoline = trampoline;
		th->hook_arg = arg;
		n++;
	}
	if (!n) {
		snprintf(err_msg, err_len, "pid %d has no frozen thread %d", pid, tid);
		return -ESRCH;
	}
	return 0;
}

static int pt_requeue_sigcont(struct freeze_backend *b, pid_t pid, bool shared,
			      const pid_t *tids, size_t nr, char *err_msg, size_t err_len)
{
	struct ptrace_backend *pb = to_pt(b);
	struct pt_sigcont *sc = calloc(1, sizeof(*sc));

	if (!sc || (nr && !(sc->tids = malloc(nr * sizeof(*tids))))) {
		free(sc);
		snprintf(err_msg, err_len, "out of memory");
		return -ENOMEM;
	}
	sc->pid = pid;
	sc->shared = shared;
	sc->nr = nr;
	if (nr)
		memcpy(sc->tids, tids, nr * sizeof(*tids));
	sigcont_free(sigcont_take(pb, pid));
	sc->next = pb->sigconts;
	pb->sigconts = sc;
	return 0;
}

static void pt_close(struct freeze_backend *b)
{
	struct ptrace_backend *pb = to_pt(b);
	char msg[256];

	while (pb->targets) {
		struct pt_target *t = pb->targets;

		pb->targets = t->next;
		if (t->flags & FREEZE_F_PERSIST) {
			start_hooks(t, msg, sizeof(msg));
			pt_hand_over(t, msg, sizeof(msg));
		} else {
			/* released as it was: a process stopped before stays so */
			pt_release(t, false, NULL, msg, sizeof(msg));
		}
		target_free(t);
	}
	while (pb->sigconts)
		sigcont_free(sigcont_take(pb, pb->sigconts->pid));
	free(pb);
}

static const struct freeze_backend_ops ptrace_ops = {
	.name = "ptrace",
	.close = pt_close,
	.freeze = pt_freeze,
	.thaw = pt_thaw,
	.query = pt_query,
	.push_hook = pt_push_hook,
	.requeue_sigcont = pt_requeue_sigcont,
};

int freeze_ptrace_open(struct freeze_backend **ret, char *err_msg, size_t err_len)
{
	struct ptrace_backend *pb = calloc(1, sizeof(*pb));

	if (!pb) {
		snprintf(err_msg, err_len, "out of memory");
		return -ENOMEM;
	}
	pb->base.ops = &ptrace_ops;
	pb->base.kind = FREEZE_BACKEND_PTRACE;
	*ret = &pb->base;
	return 0;
}
