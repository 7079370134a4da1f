// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg's gate, a CRIU plugin: usr/crs/criu.c writes this shared object
 * into a private directory for each dump and gated restore and runs
 * `criu dump|restore --libdir DIR` with $CRDBG_GATE naming that
 * directory. It replaces action scripts: CRIU runs a script in a new
 * process (fork, exec of a shell) at every action, the post-dump one
 * while the tree is stopped; a plugin's calls are plain function calls
 * inside criu.
 *
 * A dump waits at CRIU's first PTRACE_SEIZE of the tree's root
 * ($CRDBG_GATE_SEIZE), the first thing CRIU does to the tree: criu.c
 * also preloads this object into criu (LD_PRELOAD), so that its ptrace()
 * below is the one CRIU calls. CRIU's set-up after its plugins' init
 * (LSM, irmap cache, CPU and vDSO checks, cgroups, the inventory: tens of
 * milliseconds) then runs while the tree still runs, not while crdbg
 * holds it frozen. Where the preload did not take (a secure exec), the
 * dump waits at init(DUMP) instead, as a restore always does:
 * init(DUMP) comes after CRIU's start-up and before it looks at any
 * task, init(RESTORE) before it reads an image or creates a task. Either
 * wait writes "ready" into DIR/status and waits on DIR/gate until crdbg
 * writes "go" (the tree frozen; the checkpoint verified); end of file
 * instead fails it and CRIU gives up before touching anything.
 * exit(DUMP, ret) comes once every image is written and closed, before
 * CRIU lets go of the tree: "dumped" (ret 0) or "failed". A restore
 * is held once more at its end, every restored thread stopped under
 * CRIU's ptrace, where this plugin pushes crdbg's CRS hook on the
 * threads itself, so that CRIU's own detach releases the tree
 * (gate_release()). crdbg holds both FIFOs open read-write, so no open
 * here blocks while it lives. The words, files and line formats are
 * <crdbg/criu-gate.h>'s, shared with crdbg.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criu/criu-plugin.h>
#include <crdbg/criu-gate.h>
#include <linux/crdbg.h>

typedef long ptrace_fn(enum __ptrace_request, pid_t, void *, void *);
static long gate_ptrace(enum __ptrace_request request, ...);
static bool detached_early(pid_t tid, ptrace_fn *next);

/* A line in CRIU's own log (criu exports print_on_level for plugins). */
static void criu_log(const char *fmt, int pid)
{
	void (*print)(unsigned int, const char *, ...);

	*(void **)&print = dlsym(RTLD_DEFAULT, "print_on_level");
	if (print)
		print(3 /* LOG_INFO */, fmt, pid);
}

/* criu's children (helpers it runs) do not inherit the preload. */
__attribute__((constructor)) static void gate_drop_preload(void)
{
	if (getenv(CRDBG_GATE_SEIZE_ENV) || getenv(CRDBG_GATE_DETACH_ENV))
		unsetenv("LD_PRELOAD");
}

/*
 * Is our ptrace() the one CRIU calls? Only when this object is preloaded
 * (in criu's global scope before libc); a plugin loaded by --libdir
 * alone is not.
 */
static bool seize_gated(void)
{
	return getenv(CRDBG_GATE_SEIZE_ENV) && dlsym(RTLD_DEFAULT, "ptrace") == (void *)gate_ptrace;
}

static int gate_open(const char *name, int flags)
{
	const char *dir = getenv(CRDBG_GATE_ENV);
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -1;
	return open(path, flags | O_CLOEXEC, 0600);
}

static int say(const char *what)
{
	ssize_t len = (ssize_t)strlen(what), n;
	int fd = gate_open(CRDBG_GATE_STATUS, O_WRONLY | O_NONBLOCK);

	if (fd < 0)
		return -1;
	do
		n = write(fd, what, (size_t)len);
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == len ? 0 : -1;
}

/* Say word, then wait for crdbg's "go": 0, or -1 (end of file: crdbg gone or refusing). */
static int say_and_wait(const char *word)
{
	static const char line[] = CRDBG_GATE_LINE(CRDBG_GATE_GO);
	char go[sizeof(line) - 1];
	ssize_t n;
	int fd;

	/* without a writer (crdbg gone) the read sees end of file at once */
	fd = gate_open(CRDBG_GATE_FIFO, O_RDONLY | O_NONBLOCK);
	if (fd < 0 || fcntl(fd, F_SETFL, 0) || say(word)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	do
		n = read(fd, go, sizeof(go));
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == (ssize_t)sizeof(go) && !memcmp(go, line, sizeof(go)) ? 0 : -1;
}

static int gate_init(int stage)
{
	if ((stage != CR_PLUGIN_STAGE__DUMP && stage != CR_PLUGIN_STAGE__RESTORE) ||
	    !getenv(CRDBG_GATE_ENV))
		return 0;
	if (stage == CR_PLUGIN_STAGE__DUMP && seize_gated())
		return 0;	/* waits in ptrace() below */
	criu_log("crdbg gate: CRIU waits at its plugins' init (pid %d)\n", getpid());
	return say_and_wait(CRDBG_GATE_LINE(CRDBG_GATE_READY));
}

/*
 * CRIU's ptrace() while preloaded: its first PTRACE_SEIZE of the root
 * waits for crdbg's "go" first. CRIU's alarm (--timeout, armed just
 * before) is set aside meanwhile: a job's cut may hold a part frozen
 * longer while the other nodes freeze. A refused gate fails the seize:
 * CRIU gives up with the tree untouched.
 */
long ptrace(enum __ptrace_request request, ...) __attribute__((alias("gate_ptrace")));

static long gate_ptrace(enum __ptrace_request request, ...)
{
	static ptrace_fn *next;
	static int gated;
	const char *root = getenv(CRDBG_GATE_SEIZE_ENV);
	unsigned int alarm_left;
	void *addr, *data;
	va_list ap;
	pid_t pid;
	int r;

	va_start(ap, request);
	pid = va_arg(ap, pid_t);
	addr = va_arg(ap, void *);
	data = va_arg(ap, void *);
	va_end(ap);
	if (!next)
		*(void **)&next = dlsym(RTLD_NEXT, "ptrace");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	if (request == PTRACE_SEIZE && !gated && root && atoi(root) == pid &&
	    getenv(CRDBG_GATE_ENV)) {
		gated = 1;
		criu_log("crdbg gate: CRIU waits at its first seize of %d\n", pid);
		alarm_left = alarm(0);
		r = say_and_wait(CRDBG_GATE_LINE(CRDBG_GATE_READY));
		if (alarm_left)
			alarm(alarm_left);
		if (r) {
			errno = ECANCELED;
			return -1;
		}
	}
	if (request == PTRACE_DETACH && detached_early(pid, next))
		return 0;
	return next(request, pid, addr, data);
}

/* ---- the release of a restored tree ---- */

enum order_kind { ORDER_HOOK, ORDER_SIGCONT, ORDER_CONT, ORDER_STOPPED };

struct order {
	enum order_kind kind;
	int pid, tid;			/* tid: a sigcont's thread, 0 for the process */
	unsigned long long trampoline, arg;	/* a hook's */
};

static struct order *orders;
static size_t nr_orders, nr_left;	/* nr_left: processes with orders not yet called */
static int refused = -1;	/* -1 until crdbg answered "held" */
static bool released;		/* every order carried out: CRIU detaches next */

/* crdbg's orders in DIR/release (CRDBG_GATE_ORDERS), read once it said "go": 0, or -1. */
static int read_orders(void)
{
	char line[128];
	struct order o, *more;
	int fd = gate_open(CRDBG_GATE_ORDERS, O_RDONLY);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		memset(&o, 0, sizeof(o));
		if (sscanf(line, CRDBG_GATE_ORDER_HOOK, &o.pid, &o.trampoline, &o.arg) == 3)
			o.kind = ORDER_HOOK;
		else if (sscanf(line, CRDBG_GATE_ORDER_SIGCONT, &o.pid, &o.tid) == 2)
			o.kind = ORDER_SIGCONT;
		else if (sscanf(line, CRDBG_GATE_ORDER_CONT, &o.pid) == 1)
			o.kind = ORDER_CONT;
		else if (sscanf(line, CRDBG_GATE_ORDER_STOPPED, &o.pid) == 1)
			o.kind = ORDER_STOPPED;
		else
			continue;
		if (o.pid <= 0 || o.tid < 0 || (o.kind == ORDER_HOOK && !o.trampoline))
			continue;
		more = realloc(orders, (nr_orders + 1) * sizeof(*orders));
		if (!more) {
			fclose(f);
			return -1;
		}
		orders = more;
		/* a process's orders come together */
		nr_left += !nr_orders || orders[nr_orders - 1].pid != o.pid;
		orders[nr_orders++] = o;
	}
	fclose(f);
	return 0;
}

/* A process's report lines, written at the end of its call (report_out()). */
static char reported[16384];
static size_t reported_len;

static void report_out(int pid)
{
	int fd;

	if (!reported_len)
		return;
	fd = gate_open(CRDBG_GATE_REPORT, O_WRONLY | O_APPEND | O_CREAT);
	if (fd < 0 || write(fd, reported, reported_len) != (ssize_t)reported_len)
		criu_log("crdbg gate: cannot write its report on pid %d\n", pid);
	if (fd >= 0)
		close(fd);
	reported_len = 0;
}

static void report(const char *fmt, int pid, int tid, unsigned long long v)
{
	char line[96];
	int n = snprintf(line, sizeof(line), fmt, pid, tid, v);

	if (reported_len + (size_t)n > sizeof(reported))
		report_out(pid);
	memcpy(reported + reported_len, line, (size_t)n);
	reported_len += (size_t)n;
}

/*
 * Point thread tid (stopped under CRIU's ptrace, its registers final) at
 * the trampoline with the UAPI's hook frame (return_via USER), as
 * crdbg's ptrace backend does: the trampoline runs the CRS hook, then
 * puts every register back in user space. Its pc goes in the report.
 */
static void push_hook(int pid, int tid, const struct order *o)
{
	struct crdbg_hook_frame frame;
	struct user_regs_struct r;
	struct crdbg_regs regs;
	struct iovec local = { &frame, sizeof(frame) }, remote;
	unsigned long long addr;

	if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0) {
		report(CRDBG_GATE_REPORT_FAIL, pid, tid, (unsigned long long)errno);
		return;
	}
	memcpy(&regs, &r, sizeof(regs));
	addr = crdbg_hook_frame_init(&frame, &regs, o->arg, CRDBG_HOOK_RETURN_USER,
				     ((unsigned long long)tid << 32) ^ r.rip);
	remote.iov_base = (void *)addr;
	remote.iov_len = sizeof(frame);
	if (process_vm_writev(tid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(frame)) {
		report(CRDBG_GATE_REPORT_FAIL, pid, tid, (unsigned long long)errno);
		return;
	}
	report(CRDBG_GATE_REPORT_PC, pid, tid, r.rip);
	r.rsp = addr;
	r.rip = o->trampoline;
	r.rdi = o->arg;
	r.orig_rax = (unsigned long long)-1;	/* no syscall restart on this return */
	r.eflags &= ~((1ULL << 10) | (1ULL << 8));	/* DF, TF */
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0)
		report(CRDBG_GATE_REPORT_FAIL, pid, tid, (unsigned long long)errno);
}

/* Every thread of pid, each once (CRIU traces them: none comes or goes). */
static void hook_threads(int pid, const struct order *o)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d) {
		report(CRDBG_GATE_REPORT_FAIL, pid, 0, (unsigned long long)errno);
		return;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			push_hook(pid, atoi(de->d_name), o);
	closedir(d);
}

/* A SIGSTOP pending on pid (CRIU's: it dumped the process stopped)? */
static bool stop_pending(int pid)
{
	char path[64], line[128];
	unsigned long long pnd = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ShdPnd: %llx", &pnd) == 1)
			break;
	fclose(f);
	return pnd & (1ULL << (SIGSTOP - 1));
}

/*
 * Wait up to a second for tid, let go by PTRACE_CONT, to stop again: never
 * hold criu (and with it the tree) on a thread that runs on instead.
 */
static bool stopped_again(int tid, int *st)
{
	for (int i = 0; i < 1000; i++) {
		int r = waitpid(tid, st, __WALL | WNOHANG);

		if (r == tid)
			return WIFSTOPPED(*st);
		if (r < 0)
			return false;
		usleep(1000);
	}
	return false;
}

/*
 * CRIU stops each process it dumped in a group stop (finalize_restore()
 * queues a SIGSTOP before this hook runs), and crdbg's ptrace freeze
 * hands a tree to CRIU in one: a stop the program never had. End it
 * before it begins, without a SIGCONT the program sees: a SIGCONT to one
 * thread flushes the SIGSTOP, and with every other signal blocked for
 * the moment, that thread takes it into a signal-delivery stop, from
 * which CRIU's detach (no signal) drops it. The SIGCONT's trap for a
 * seized thread (PTRACE_EVENT_STOP) may come first: passed over.
 */
static void cont_quietly(int pid)
{
	unsigned long long saved, only = ~(1ULL << (SIGCONT - 1));
	bool taken = false;
	int st, i;

	if (!stop_pending(pid))
		return;
	if (ptrace(PTRACE_GETSIGMASK, pid, sizeof(saved), &saved) < 0 ||
	    ptrace(PTRACE_SETSIGMASK, pid, sizeof(only), &only) < 0) {
		report(CRDBG_GATE_REPORT_FAIL, pid, pid, (unsigned long long)errno);
		return;
	}
	syscall(SYS_tgkill, pid, pid, SIGCONT);
	for (i = 0; i < 8 && !taken; i++) {
		if (ptrace(PTRACE_CONT, pid, 0, 0) < 0 || !stopped_again(pid, &st))
			break;
		taken = WSTOPSIG(st) == SIGCONT && !(st >> 16);
	}
	if (ptrace(PTRACE_SETSIGMASK, pid, sizeof(saved), &saved) < 0 || !taken)
		report(CRDBG_GATE_REPORT_FAIL, pid, pid, (unsigned long long)(taken ? errno : EAGAIN));
}

/*
 * RESUME_DEVICES_LATE, once per restored process: CRIU 3.17 calls it when
 * every restored thread is stopped under its ptrace at the end of the
 * restore with its final registers, just before its pre-resume scripts
 * and the detach that lets the tree run. The first call says "held" and
 * waits for crdbg's "go" (the pages verified; a job's part restored on
 * every node), having written its orders into DIR/release first, a line
 * each, carried out in that order: "hook PID TRAMPOLINE ARG" (hex)
 * pushes the CRS hook on every thread of PID, "sigcont PID TID" queues a
 * SIGCONT a group stop of crdbg's took (TID 0: the process's), "cont PID"
 * ends the stop CRIU is putting PID in, if any (cont_quietly()). Each
 * call carries out its process's orders; the hooked threads' pcs, and
 * every order that failed, go into DIR/report ("pc PID TID PC", "fail
 * PID TID ERRNO"), and the call for the last process with orders says
 * "released": CRIU detaches next (its exit comes only once the tree has
 * ended: a restore that is not detached waits for it). CRIU's
 * detach then lets every thread go, into the hook first. End of file
 * instead of "go" (crdbg gone, the pages corrupt, the job's restart
 * called off): every restored process is killed before it runs an
 * instruction of its own. criu ignores what this returns; -ENOTSUP lets
 * the other plugins' hooks run.
 */
static int gate_release(int pid)
{
	bool ordered = false;
	size_t i;

	if (!getenv(CRDBG_GATE_ENV))
		return -ENOTSUP;
	if (refused < 0) {
		/*
		 * crdbg's death must not kill criu now: its traced tree would
		 * run on, unchecked. It is an end of file at the gate instead.
		 */
		prctl(PR_SET_PDEATHSIG, 0);
		criu_log("crdbg gate: CRIU holds the restored tree for crdbg (pid %d first)\n", pid);
		refused = say_and_wait(CRDBG_GATE_LINE(CRDBG_GATE_HELD)) || read_orders();
		criu_log(refused ? "crdbg gate: refused: pid %d and the rest of the tree are killed\n" :
				   "crdbg gate: crdbg's orders read (pid %d first)\n", pid);
	}
	if (refused) {
		kill(pid, SIGKILL);
		return -ENOTSUP;
	}
	for (i = 0; i < nr_orders; i++) {
		const struct order *o = &orders[i];

		if (o->pid != pid)
			continue;
		ordered = true;
		if (o->kind == ORDER_HOOK)
			hook_threads(pid, o);
		else if (o->kind == ORDER_SIGCONT && o->tid)
			syscall(SYS_tgkill, pid, o->tid, SIGCONT);
		else if (o->kind == ORDER_SIGCONT)
			kill(pid, SIGCONT);
		else if (o->kind == ORDER_CONT)
			cont_quietly(pid);
		else if (o->kind == ORDER_STOPPED && !stop_pending(pid))
			/*
			 * It ran at the checkpoint, so CRIU queued no stop (a
			 * launcher's agent): one queued now is taken at its
			 * detach, before it runs an instruction.
			 */
			kill(pid, SIGSTOP);
	}
	report_out(pid);
	nr_left -= ordered;
	/* the last process with orders: CRIU detaches next */
	if (!nr_left && !released) {
		released = true;
		criu_log("crdbg gate: every order carried out (pid %d last): CRIU detaches next\n", pid);
		if (dlsym(RTLD_DEFAULT, "ptrace") != (void *)gate_ptrace)
			criu_log("crdbg gate: not preloaded: CRIU detaches pid %d first, in tree order\n", pid);
		say(CRDBG_GATE_LINE(CRDBG_GATE_RELEASED));
	}
	return -ENOTSUP;
}

/* A process's state letter (/proc/PID/stat), or 0. */
static char task_state(int pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static pid_t *early;		/* the threads detach_children_first() let go */
static size_t nr_early;

static void detach_process(int pid, ptrace_fn *next)
{
	char path[64];
	struct dirent *de;
	pid_t *more;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);

		if (de->d_name[0] == '.')
			continue;
		/*
		 * Taken as let go even when the detach fails: a thread that
		 * died meanwhile went with its process, which an earlier
		 * thread of it, let go first, ended (exit_group); CRIU's own
		 * detach of it would fail the whole restore after the fact.
		 */
		next(PTRACE_DETACH, tid, NULL, NULL);
		more = realloc(early, (nr_early + 1) * sizeof(*early));
		if (!more)
			continue;
		early = more;
		early[nr_early++] = tid;
	}
	closedir(d);
}

/*
 * CRIU detaches the restored tree root first (finalize_restore_detach(),
 * in tree order): a parent would run while its children are still held
 * under CRIU's ptrace, see them so ('t'), and could even reap or kill one
 * there, which fails CRIU's detach of it and makes CRIU kill the whole
 * tree. So at CRIU's first detach after the release (this object is
 * preloaded into criu, as for a dump, so CRIU's ptrace() is ours), every
 * process with orders is let go here, in the reverse of crdbg's order
 * (its metadata's: parents before children), children first; a process
 * that stays stopped has entered its stop before its parent goes. CRIU's
 * own detach of those threads then does nothing.
 */
static void detach_children_first(ptrace_fn *next)
{
	size_t i = nr_orders;
	int last = 0, k;

	while (i-- > 0) {
		const struct order *o = &orders[i];

		if (o->pid == last)
			continue;
		last = o->pid;
		detach_process(o->pid, next);
		for (k = 0; o->kind == ORDER_STOPPED && k < 200 && task_state(o->pid) != 'T'; k++)
			usleep(1000);
	}
}

static bool detached_early(pid_t tid, ptrace_fn *next)
{
	static bool done;
	size_t i;

	if (!released || refused || !getenv(CRDBG_GATE_DETACH_ENV))
		return false;
	if (!done) {
		done = true;
		detach_children_first(next);
	}
	for (i = 0; i < nr_early; i++)
		if (early[i] == tid)
			return true;
	return false;
}

static void gate_exit(int stage, int ret)
{
	if (stage == CR_PLUGIN_STAGE__DUMP && getenv(CRDBG_GATE_ENV))
		say(ret ? CRDBG_GATE_LINE(CRDBG_GATE_FAILED) : CRDBG_GATE_LINE(CRDBG_GATE_DUMPED));
}

CR_PLUGIN_REGISTER("crdbg_gate", gate_init, gate_exit)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, gate_release)
