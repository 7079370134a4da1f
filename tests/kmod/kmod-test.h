/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the crdbg.ko guest tests: a spinning target process
 * whose threads count in shared memory, the kmod backend, and GET_STATUS.
 */
#ifndef CRDBG_KMOD_TEST_H
#define CRDBG_KMOD_TEST_H

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/crdbg.h>

#include <crdbg/freeze.h>
#include <crdbg/nl.h>

#include "kselftest_harness.h"

#define KT_MAX_THREADS 128

/* The trampoline (usr/runtime/hook-trampoline.S) calls this; tests that
 * push hooks define their own. */
void crdbg_hook_trampoline(void);
void crdbg_hook_entry(uint64_t arg);
#ifndef KT_OWN_HOOK_ENTRY
void crdbg_hook_entry(uint64_t arg)
{
	(void)arg;
}
#endif

struct kt_shared {
	volatile uint64_t count[KT_MAX_THREADS];	/* per spinning thread */
	volatile int tids[KT_MAX_THREADS];
	volatile int nr_started;
	volatile int stop;
	volatile uint64_t created;			/* threads made by the creator */
};

static inline void kt_msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static inline struct kt_shared *kt_shared_new(void)
{
	void *p = mmap(NULL, sizeof(struct kt_shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

struct kt_spin_arg {
	struct kt_shared *sh;
	int idx;
};

static void *kt_spin_thread(void *p)
{
	struct kt_spin_arg *a = p;

	a->sh->tids[a->idx] = (int)syscall(SYS_gettid);
	__atomic_add_fetch(&a->sh->nr_started, 1, __ATOMIC_SEQ_CST);
	for (;;)
		a->sh->count[a->idx]++;
	return NULL;
}

/* Exits (it is a forked child) when the parent dies. */
static inline void kt_child_setup(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/* Fork a process with @n spinning threads (the main thread waits). */
static inline pid_t kt_spawn_spinner(struct kt_shared *sh, int n)
{
	pid_t pid = fork();

	if (pid == 0) {
		static struct kt_spin_arg args[KT_MAX_THREADS];
		pthread_t th;
		int i;

		kt_child_setup();
		for (i = 0; i < n; i++) {
			args[i].sh = sh;
			args[i].idx = i;
			if (pthread_create(&th, NULL, kt_spin_thread, &args[i]))
				_exit(99);
		}
		for (;;)
			pause();
	}
	while (pid > 0 && sh->nr_started < n)
		kt_msleep(1);
	return pid;
}

static inline uint64_t kt_sum(struct kt_shared *sh, int n)
{
	uint64_t s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += sh->count[i];
	return s;
}

static inline void kt_kill(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static inline int kt_nr_tasks(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Open the kmod backend; 0, or -ENOENT when the module is not loaded. */
static inline int kt_open(struct freeze_backend **b, char *err, size_t len)
{
	return freeze_backend_open(FREEZE_BACKEND_KMOD, b, err, len);
}

struct kt_status {
	char version[32];
	unsigned int nr_frozen;
};

static int kt_parse_status(struct nlattr **attrs, void *arg)
{
	struct kt_status *st = arg;

	if (!attrs[CRDBG_A_VERSION] || !attrs[CRDBG_A_NR_FROZEN])
		return -EPROTO;
	snprintf(st->version, sizeof(st->version), "%s", nla_get_string(attrs[CRDBG_A_VERSION]));
	st->nr_frozen = nla_get_u32(attrs[CRDBG_A_NR_FROZEN]);
	return 0;
}

static inline int kt_status(struct kt_status *st, char *err, size_t len)
{
	struct crdbg_nl nl;
	int ret;

	ret = crdbg_nl_open(&nl, err, len);
	if (ret < 0)
		return ret;
	ret = crdbg_nl_transact(&nl, crdbg_nl_request(&nl, CRDBG_CMD_GET_STATUS, 0),
				kt_parse_status, st, err, len);
	crdbg_nl_close(&nl);
	return ret;
}

#endif /* CRDBG_KMOD_TEST_H */
