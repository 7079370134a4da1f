// SPDX-License-Identifier: GPL-2.0
/*
 * The designated checkpoint thread (the "MPI designated thread" of the
 * MPIR checkpoint interface, Documentation/checkpoint.md).
 * A constructor starts it in every process that loads libcrdbg (and again
 * in a forked child). crdbg's request signal is forwarded by the handler
 * over a pipe; the thread prepares, calls MPIR_checkpoint_debugger_detach()
 * and answers crdbg, which then freezes and dumps the process. See
 * <crdbg/mpir-checkpoint.h> for the wire contract.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "runtime.h"

extern volatile int MPIR_debug_with_checkpoint;
extern volatile int MPIR_checkpoint_debug_gate;
int MPIR_checkpoint_debugger_detach(void);

/* Provided by hook-trampoline.S when it is linked in. */
extern char crdbg_hook_trampoline[] __attribute__((weak));

CRDBG_EXPORT struct crdbg_rt_info crdbg_runtime_info = {
	.magic = CRDBG_RT_MAGIC,
	.version = CRDBG_RT_VERSION,
};

struct agent_request {
	pid_t sender;
	int code;
};

static int agent_pipe[2] = { -1, -1 };

int crdbg_rt_gettid(void)
{
	return (int)syscall(SYS_gettid);
}

bool crdbg_rt_is_designated(void)
{
	return crdbg_runtime_info.designated_tid != 0 &&
	       crdbg_rt_gettid() == crdbg_runtime_info.designated_tid;
}

int crdbg_rt_count_threads(void)
{
	char buf[1024];
	int fd, n = 0;
	long len, off;

	fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((len = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < len;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);

			if (d->d_name[0] != '.')
				n++;
			off += d->d_reclen;
		}
	}
	close(fd);
	return len < 0 ? -1 : n;
}

void crdbg_rt_update_hostname(void)
{
	struct utsname u;

	if (uname(&u) == 0) {
		size_t len = strnlen(u.nodename, sizeof(u.nodename));

		if (len > 0 && len < CRDBG_RT_CMD_LEN) {
			memcpy(crdbg_rt_hostname, u.nodename, len);
			crdbg_rt_hostname[len] = '\0';
		}
	}
}

/* Async-signal-safe decimal formatting. */
static size_t fmt_uint(char *out, unsigned long v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

void crdbg_rt_announce(void)
{
	static const char prefix[] = CRS_DEBUG_INFO_PREFIX;
	char line[sizeof(prefix) + 256 + 32];
	size_t len = 0, hl = strnlen(crdbg_rt_hostname, 255);
	ssize_t w;
	size_t done = 0;

	memcpy(line, prefix, sizeof(prefix) - 1);
	len = sizeof(prefix) - 1;
	memcpy(line + len, crdbg_rt_hostname, hl);
	len += hl;
	line[len++] = ':';
	len += fmt_uint(line + len, (unsigned long)getpid());
	line[len++] = '\n';
	while (done < len) {
		w = write(STDERR_FILENO, line + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
}

static void agent_signal(int sig, siginfo_t *si, void *uc)
{
	struct agent_request req = { .sender = si->si_pid, .code = si->si_value.sival_int };
	int saved_errno = errno;

	(void)sig;
	(void)uc;
	if (si->si_code == SI_QUEUE && agent_pipe[1] >= 0)
		(void)!write(agent_pipe[1], &req, sizeof(req));
	errno = saved_errno;
}

static void serve(const struct agent_request *req)
{
	union sigval v = { .sival_ptr = &crdbg_runtime_info };

	if (req->code != CRDBG_RT_REQ_CHECKPOINT)
		return;
	/*
	 * Nothing to marshal in a non-MPI process. A debugger that is
	 * attached breaks in the detach marker, parks the other threads in
	 * the waitpoint and detaches; then crdbg freezes us.
	 */
	MPIR_checkpoint_debugger_detach();
	crdbg_runtime_info.requests++;
	sigqueue(req->sender, CRDBG_RT_SIGNAL, v);
}

static void *agent_main(void *unused)
{
	struct agent_request req;
	sigset_t set;
	ssize_t n;

	(void)unused;
	/*
	 * Named from inside: naming another thread opens its
	 * /proc/self/task/TID/comm, and a child stopped by a signal in that
	 * window (right after fork) would keep a descriptor CRIU cannot
	 * reopen on restore, before the thread exists.
	 */
	prctl(PR_SET_NAME, "crdbg-ckpt");
	crdbg_runtime_info.designated_tid = crdbg_rt_gettid();
	/* Take only crdbg's signal, so the program's signals go elsewhere. */
	sigfillset(&set);
	sigdelset(&set, CRDBG_RT_SIGNAL);
	pthread_sigmask(SIG_SETMASK, &set, NULL);
	for (;;) {
		n = read(agent_pipe[0], &req, sizeof(req));
		if (n == (ssize_t)sizeof(req))
			serve(&req);
		else if (n == 0 || (n < 0 && errno != EINTR))
			return NULL;
	}
}

static void fill_commands(void)
{
	const char *store = getenv("CRDBG_STORE");
	const char *bin = getenv("CRDBG_BIN");

	if (!bin || !*bin)
		bin = "crdbg";
	crdbg_rt_update_hostname();
	if (store && *store) {
		snprintf(crdbg_rt_checkpoint_command, CRDBG_RT_CMD_LEN, "%s checkpoint --store %s %d", bin, store,
			 (int)getpid());
		snprintf(crdbg_rt_restart_command, CRDBG_RT_CMD_LEN, "%s restart --debug --store %s", bin, store);
		snprintf(crdbg_rt_listing_command, CRDBG_RT_CMD_LEN, "%s list --store %s", bin, store);
	} else {
		snprintf(crdbg_rt_checkpoint_command, CRDBG_RT_CMD_LEN, "%s checkpoint %d", bin, (int)getpid());
		snprintf(crdbg_rt_restart_command, CRDBG_RT_CMD_LEN, "%s restart --debug", bin);
		snprintf(crdbg_rt_listing_command, CRDBG_RT_CMD_LEN, "%s list", bin);
	}
}

static void agent_start(void)
{
	struct sigaction sa;
	pthread_attr_t attr;
	pthread_t th;
	sigset_t all, old;
	bool started;

	crdbg_runtime_info.designated_tid = 0;
	crdbg_runtime_info.trampoline = (uint64_t)(uintptr_t)crdbg_hook_trampoline;
	crdbg_runtime_info.hook_entry = (uint64_t)(uintptr_t)crdbg_hook_entry;
	fill_commands();
	if (agent_pipe[0] >= 0) {
		close(agent_pipe[0]);
		close(agent_pipe[1]);
	}
	if (pipe2(agent_pipe, O_CLOEXEC) < 0) {
		agent_pipe[0] = agent_pipe[1] = -1;
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = agent_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(CRDBG_RT_SIGNAL, &sa, NULL);

	/* The thread starts with every signal blocked (it narrows that itself). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	started = pthread_create(&th, &attr, agent_main, NULL) == 0;
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* Wait until the thread knows its tid: a request may come right away. */
	while (started && !__atomic_load_n(&crdbg_runtime_info.designated_tid, __ATOMIC_SEQ_CST))
		sched_yield();
}

static void agent_child_after_fork(void)
{
	agent_start();
}

__attribute__((constructor)) static void agent_init(void)
{
	crdbg_runtime_info.debug_with_checkpoint = (uint64_t)(uintptr_t)&MPIR_debug_with_checkpoint;
	crdbg_runtime_info.debug_gate = (uint64_t)(uintptr_t)&MPIR_checkpoint_debug_gate;
	if (getenv("CRDBG_NO_AGENT"))
		return;
	agent_start();
	pthread_atfork(NULL, NULL, agent_child_after_fork);
}
