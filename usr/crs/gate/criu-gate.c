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
 * CRIU lets go of the tree: "dumped" (ret 0) or "failed". The
 * restore's RESUME_DEVICES_LATE hook (CRIU 3.17 calls it for each
 * restored process once every thread is stopped under its ptrace at the
 * end of the restore, just before its pre-resume scripts and the
 * detach) says "held" on the first call and, with $CRDBG_GATE_HOLD,
 * waits for another "go": crdbg freezes the tree meanwhile. crdbg holds both FIFOs
 * open read-write, so no open here blocks while it lives.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include <criu/criu-plugin.h>

static long gate_ptrace(enum __ptrace_request request, ...);

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
	if (getenv("CRDBG_GATE_SEIZE"))
		unsetenv("LD_PRELOAD");
}

/*
 * Is our ptrace() the one CRIU calls? Only when this object is preloaded
 * (in criu's global scope before libc); a plugin loaded by --libdir
 * alone is not.
 */
static bool seize_gated(void)
{
	return getenv("CRDBG_GATE_SEIZE") && dlsym(RTLD_DEFAULT, "ptrace") == (void *)gate_ptrace;
}

static int gate_open(const char *name, int flags)
{
	const char *dir = getenv("CRDBG_GATE");
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -1;
	return open(path, flags | O_CLOEXEC);
}

static int say(const char *what)
{
	ssize_t len = (ssize_t)strlen(what), n;
	int fd = gate_open("status", O_WRONLY | O_NONBLOCK);

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
	char go[3];
	ssize_t n;
	int fd;

	/* without a writer (crdbg gone) the read sees end of file at once */
	fd = gate_open("gate", O_RDONLY | O_NONBLOCK);
	if (fd < 0 || fcntl(fd, F_SETFL, 0) || say(word)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	do
		n = read(fd, go, sizeof(go));
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == 3 && !memcmp(go, "go\n", 3) ? 0 : -1;
}

static int gate_init(int stage)
{
	if ((stage != CR_PLUGIN_STAGE__DUMP && stage != CR_PLUGIN_STAGE__RESTORE) ||
	    !getenv("CRDBG_GATE"))
		return 0;
	if (stage == CR_PLUGIN_STAGE__DUMP && seize_gated())
		return 0;	/* waits in ptrace() below */
	criu_log("crdbg gate: CRIU waits at its plugins' init (pid %d)\n", getpid());
	return say_and_wait("ready\n");
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
	static long (*next)(enum __ptrace_request, pid_t, void *, void *);
	static int gated;
	const char *root = getenv("CRDBG_GATE_SEIZE");
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
	    getenv("CRDBG_GATE")) {
		gated = 1;
		criu_log("crdbg gate: CRIU waits at its first seize of %d\n", pid);
		alarm_left = alarm(0);
		r = say_and_wait("ready\n");
		if (alarm_left)
			alarm(alarm_left);
		if (r) {
			errno = ECANCELED;
			return -1;
		}
	}
	return next(request, pid, addr, data);
}

static void gate_exit(int stage, int ret)
{
	if (stage == CR_PLUGIN_STAGE__DUMP && getenv("CRDBG_GATE"))
		say(ret ? "failed\n" : "dumped\n");
}

/*
 * Once per restore (every restored thread is stopped by then): "held",
 * so that crdbg looks for the hand-over from now on rather than every
 * so often; with $CRDBG_GATE_HOLD, then wait for its "go". CRIU only
 * logs what this returns; -ENOTSUP lets the other plugins' hooks run.
 */
static int gate_hold(int pid)
{
	static int held;

	(void)pid;
	if (held || !getenv("CRDBG_GATE"))
		return -ENOTSUP;
	held = 1;
	if (getenv("CRDBG_GATE_HOLD"))
		say_and_wait("held\n");
	else
		say("held\n");
	return -ENOTSUP;
}

CR_PLUGIN_REGISTER("crdbg_gate", gate_init, gate_exit)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, gate_hold)
