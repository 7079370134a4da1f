// SPDX-License-Identifier: GPL-2.0
/*
 * libcrdbg without CRIU: every seed-000 symbol is exported with C linkage,
 * the hook entry implements Table 5.2, and the designated thread answers
 * the checkpoint request protocol of <crdbg/mpir-checkpoint.h>.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include <crdbg/mpir-checkpoint.h>

#define LIB "build/usr/libcrdbg.so"

struct rt {
	void *h;
	volatile int *checkpointable, *debug, *gate;
	int (*detach)(void);
	void (*waitpoint)(void);
	void (*breakpoint)(void);
	void (*crs_hook)(int);
	void (*hook_entry)(uint64_t);
	struct crdbg_rt_info *info;
};

static int rt_open(struct rt *rt)
{
	rt->h = dlopen(LIB, RTLD_NOW | RTLD_GLOBAL);
	if (!rt->h)
		return -1;
	rt->checkpointable = dlsym(rt->h, "MPIR_checkpointable");
	rt->debug = dlsym(rt->h, "MPIR_debug_with_checkpoint");
	rt->gate = dlsym(rt->h, "MPIR_checkpoint_debug_gate");
	rt->detach = (int (*)(void))dlsym(rt->h, "MPIR_checkpoint_debugger_detach");
	rt->waitpoint = (void (*)(void))dlsym(rt->h, "MPIR_checkpoint_debugger_waitpoint");
	rt->breakpoint = (void (*)(void))dlsym(rt->h, "MPIR_checkpoint_debugger_breakpoint");
	rt->crs_hook = (void (*)(int))dlsym(rt->h, "MPIR_checkpoint_debugger_crs_hook");
	rt->hook_entry = (void (*)(uint64_t))dlsym(rt->h, "crdbg_hook_entry");
	rt->info = dlsym(rt->h, "crdbg_runtime_info");
	return 0;
}

/* Poll (bounded) until n threads wait in the breakpoint function. */
static int wait_parked(struct rt *rt, int n)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (__atomic_load_n(&rt->info->parked, __ATOMIC_SEQ_CST) == n)
			return 0;
		usleep(10000);
	}
	return -1;
}

struct worker {
	struct rt *rt;
	int mode;		/* 0 crs_hook, 1 waitpoint, 2 hook_entry */
	uint64_t arg;
	atomic_int done;
	pthread_t th;
};

static void *worker_main(void *p)
{
	struct worker *w = p;

	if (w->mode == 0)
		w->rt->crs_hook((int)w->arg);
	else if (w->mode == 1)
		w->rt->waitpoint();
	else
		w->rt->hook_entry(w->arg);
	atomic_store(&w->done, 1);
	return NULL;
}

static void start_worker(struct worker *w, struct rt *rt, int mode, uint64_t arg)
{
	w->rt = rt;
	w->mode = mode;
	w->arg = arg;
	atomic_store(&w->done, 0);
	pthread_create(&w->th, NULL, worker_main, w);
}

FIXTURE(rt) {
	struct rt rt;
};

FIXTURE_SETUP(rt)
{
	ASSERT_EQ(0, rt_open(&self->rt)) TH_LOG("dlopen %s: %s (run from the repo root after make)",
						LIB, dlerror());
}

FIXTURE_TEARDOWN(rt)
{
}

TEST_F(rt, symbols_exported)
{
	static const char *const names[] = {
		"MPIR_checkpointable", "MPIR_debug_with_checkpoint", "MPIR_checkpoint_debug_gate",
		"MPIR_checkpoint_debugger_detach", "MPIR_checkpoint_debugger_waitpoint",
		"MPIR_checkpoint_debugger_breakpoint", "MPIR_checkpoint_debugger_crs_hook",
		"MPIR_checkpoint_command", "MPIR_restart_command",
		"MPIR_checkpoint_listing_command", "MPIR_controller_hostname",
		"crdbg_hook_entry", "crdbg_runtime_info",
	};
	char **cmd;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		EXPECT_NE(NULL, dlsym(self->rt.h, names[i])) TH_LOG("missing %s", names[i]);
	EXPECT_EQ(1, *self->rt.checkpointable);
	EXPECT_EQ(0, *self->rt.debug);
	EXPECT_EQ(0, *self->rt.gate);
	EXPECT_EQ(0, self->rt.detach());
	cmd = dlsym(self->rt.h, "MPIR_checkpoint_command");
	ASSERT_NE(NULL, cmd);
	EXPECT_EQ(0, strncmp(*cmd, "crdbg checkpoint", 16));
	cmd = dlsym(self->rt.h, "MPIR_restart_command");
	EXPECT_EQ(0, strncmp(*cmd, "crdbg restart", 13));
	cmd = dlsym(self->rt.h, "MPIR_checkpoint_listing_command");
	EXPECT_EQ(0, strncmp(*cmd, "crdbg list", 10));
	cmd = dlsym(self->rt.h, "MPIR_controller_hostname");
	EXPECT_NE(0, strlen(*cmd));
	EXPECT_EQ(CRDBG_RT_MAGIC, self->rt.info->magic);
	EXPECT_NE(0, self->rt.info->designated_tid);
}

/* Scenario 1: no debugger before or after: gate opens, nobody waits. */
TEST_F(rt, scenario1_no_debugger)
{
	struct worker w;

	*self->rt.debug = 0;
	*self->rt.gate = 0;
	start_worker(&w, &self->rt, 2, CRDBG_CRS_STATE_CONTINUE | CRDBG_HOOK_DEBUG_KEEP);
	pthread_join(w.th, NULL);
	EXPECT_EQ(1, atomic_load(&w.done));
	EXPECT_EQ(0, *self->rt.debug);
	EXPECT_EQ(1, *self->rt.gate);
	EXPECT_EQ(0, self->rt.info->parked);
}

/* Scenario 2: no debugger before, debugger after: every thread waits. */
TEST_F(rt, scenario2_debugger_after)
{
	struct worker w[3];
	int i;

	*self->rt.debug = 0;
	*self->rt.gate = 0;
	for (i = 0; i < 3; i++)
		start_worker(&w[i], &self->rt, 2, CRDBG_CRS_STATE_RESTART | CRDBG_HOOK_DEBUG_SET);
	ASSERT_EQ(0, wait_parked(&self->rt, 3));
	EXPECT_EQ(1, *self->rt.debug);
	EXPECT_EQ(0, *self->rt.gate);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, atomic_load(&w[i].done));
	/* The debugger opens the gate. */
	*self->rt.gate = 1;
	for (i = 0; i < 3; i++) {
		pthread_join(w[i].th, NULL);
		EXPECT_EQ(1, atomic_load(&w[i].done));
	}
	EXPECT_EQ(0, self->rt.info->parked);
}

/*
 * Scenario 3: debugger before and after: threads the debugger parked in
 * the waitpoint stay there through the hook, and new hook calls wait too.
 */
TEST_F(rt, scenario3_debugger_before_and_after)
{
	struct worker parked, hooked;

	*self->rt.debug = 1;
	*self->rt.gate = 0;
	start_worker(&parked, &self->rt, 1, 0);
	ASSERT_EQ(0, wait_parked(&self->rt, 1));
	start_worker(&hooked, &self->rt, 0, CRDBG_CRS_STATE_CONTINUE);
	ASSERT_EQ(0, wait_parked(&self->rt, 2));
	EXPECT_EQ(1, *self->rt.debug);
	EXPECT_EQ(0, *self->rt.gate);
	EXPECT_EQ(0, atomic_load(&parked.done));
	EXPECT_EQ(0, atomic_load(&hooked.done));
	*self->rt.gate = 1;
	pthread_join(parked.th, NULL);
	pthread_join(hooked.th, NULL);
}

/*
 * Scenario 4: debugger before, none after: the hook opens the gate and
 * releases the threads the debugger had parked.
 */
TEST_F(rt, scenario4_debugger_before_only)
{
	struct worker parked, hooked;

	*self->rt.debug = 1;
	*self->rt.gate = 0;
	start_worker(&parked, &self->rt, 1, 0);
	ASSERT_EQ(0, wait_parked(&self->rt, 1));
	start_worker(&hooked, &self->rt, 2, CRDBG_CRS_STATE_RESTART | CRDBG_HOOK_DEBUG_CLEAR);
	pthread_join(hooked.th, NULL);
	pthread_join(parked.th, NULL);
	EXPECT_EQ(1, atomic_load(&parked.done));
	EXPECT_EQ(0, *self->rt.debug);
	EXPECT_EQ(1, *self->rt.gate);
	EXPECT_EQ(0, self->rt.info->parked);
}

/*
 * A thread already waiting further up its stack never waits twice: the
 * hook runs on top of a thread parked in the breakpoint (here from a
 * signal handler, as a pushed hook frame would) and returns at once.
 */
static struct rt *nested_rt;
static atomic_int nested_done;

static void nested_hook(int sig)
{
	(void)sig;
	nested_rt->crs_hook(CRDBG_CRS_STATE_CONTINUE);
	atomic_store(&nested_done, 1);
}

TEST_F(rt, breakpoint_not_reentered)
{
	struct worker parked;
	int i;

	nested_rt = &self->rt;
	atomic_store(&nested_done, 0);
	signal(SIGUSR1, nested_hook);
	*self->rt.debug = 1;
	*self->rt.gate = 0;
	start_worker(&parked, &self->rt, 1, 0);
	ASSERT_EQ(0, wait_parked(&self->rt, 1));
	pthread_kill(parked.th, SIGUSR1);
	for (i = 0; i < 1000 && !atomic_load(&nested_done); i++)
		usleep(10000);
	EXPECT_EQ(1, atomic_load(&nested_done));
	EXPECT_EQ(1, self->rt.info->parked);
	EXPECT_EQ(0, atomic_load(&parked.done));
	*self->rt.gate = 1;
	pthread_join(parked.th, NULL);
	EXPECT_EQ(0, self->rt.info->parked);
}

static int count_tasks(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/* Request protocol: a child using libcrdbg answers with its info block. */
TEST(designated_thread_answers)
{
	struct crdbg_rt_info info;
	struct iovec local, remote;
	sigset_t set;
	siginfo_t si;
	struct timespec ts = { .tv_sec = 10 };
	union sigval v = { .sival_int = CRDBG_RT_REQ_CHECKPOINT };
	char path[64], comm[32] = "";
	FILE *f;
	pid_t child;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, CRDBG_RT_SIGNAL);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &set, NULL));
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		if (!dlopen(LIB, RTLD_NOW))
			_exit(2);
		for (;;)
			pause();
	}
	/* Wait until the child maps the library and its thread runs. */
	for (sig = 0; sig < 500 && count_tasks(child) < 2; sig++)
		usleep(10000);
	ASSERT_EQ(0, sigqueue(child, CRDBG_RT_SIGNAL, v));
	sig = sigtimedwait(&set, &si, &ts);
	ASSERT_EQ(CRDBG_RT_SIGNAL, sig);
	EXPECT_EQ(child, si.si_pid);
	local.iov_base = &info;
	local.iov_len = sizeof(info);
	remote.iov_base = si.si_value.sival_ptr;
	remote.iov_len = sizeof(info);
	ASSERT_EQ((ssize_t)sizeof(info), process_vm_readv(child, &local, 1, &remote, 1, 0));
	EXPECT_EQ(CRDBG_RT_MAGIC, info.magic);
	EXPECT_EQ(CRDBG_RT_VERSION, info.version);
	EXPECT_EQ(1, info.requests);
	EXPECT_NE(0, info.debug_with_checkpoint);
	EXPECT_NE(0, info.debug_gate);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", child, info.designated_tid);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	EXPECT_NE(NULL, fgets(comm, sizeof(comm), f));
	fclose(f);
	EXPECT_EQ(0, strcmp(comm, "crdbg-ckpt\n"));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

TEST_HARNESS_MAIN
