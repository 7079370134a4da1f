// SPDX-License-Identifier: GPL-2.0
/*
 * Races: freeze, hook, tracer attach/detach, thaw, socket close and
 * SIGKILL in a seeded random order against targets that keep creating and
 * ending threads. Every request must complete with 0 or a clean errno,
 * nothing stays frozen, and (checked by the group) the kernel log stays
 * clean.
 */
#include <sys/ptrace.h>

#include "kmod-test.h"

#define ROUNDS 2000

static void *churn_thread(void *p)
{
	struct kt_shared *sh = p;

	__atomic_add_fetch(&sh->created, 1, __ATOMIC_SEQ_CST);
	if (sh->created % 3)
		kt_msleep(1);
	return NULL;
}

static pid_t spawn_churn(struct kt_shared *sh)
{
	pid_t pid = fork();

	if (pid == 0) {
		static struct kt_spin_arg a;
		pthread_t th;

		kt_child_setup();
		a.sh = sh;
		pthread_create(&th, NULL, kt_spin_thread, &a);
		for (;;) {
			if (pthread_create(&th, NULL, churn_thread, sh) == 0)
				pthread_detach(th);
			else
				kt_msleep(1);
		}
	}
	while (pid > 0 && !sh->nr_started)
		kt_msleep(1);
	return pid;
}

static uint64_t rng = 0x243f6a8885a308d3ULL;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)(rng % n);
}

static int clean_errno(int ret)
{
	return ret == 0 || ret == -ESRCH || ret == -ENOENT || ret == -EALREADY ||
	       ret == -EBUSY;
}

FIXTURE(stress) {
	int unused;
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

TEST_F_TIMEOUT(stress, random_interleavings, 240)
{
	struct freeze_backend *b = NULL;
	struct kt_shared *sh = kt_shared_new();
	struct freeze_thread t[KT_MAX_THREADS];
	struct kt_status st;
	char err[256];
	pid_t pid;
	int i, ret, status, ops = 0;

	ASSERT_NE(NULL, sh);
	pid = spawn_churn(sh);
	ASSERT_LT(0, pid);
	if (kt_open(&b, err, sizeof(err)) == -ENOENT)
		SKIP(return, "crdbg.ko is not loaded");

	for (i = 0; i < ROUNDS; i++) {
		int tid = sh->tids[0];

		if (!b)
			ASSERT_EQ(0, kt_open(&b, err, sizeof(err)));
		switch (rnd(9)) {
		case 0:
		case 1:
			ret = freeze_process(b, pid, rnd(2) ? FREEZE_F_PERSIST : 0, err, sizeof(err));
			break;
		case 2:
			ret = freeze_thaw(b, pid, err, sizeof(err));
			break;
		case 3:
			ret = freeze_query(b, pid, t, KT_MAX_THREADS, err, sizeof(err));
			if (ret > 0)
				ret = 0;
			break;
		case 4:
			ret = freeze_push_hook(b, pid, rnd(2) ? tid : 0,
					(uint64_t)(uintptr_t)crdbg_hook_trampoline, i, err,
					sizeof(err));
			break;
		case 5:		/* a tracer comes and goes */
			ret = 0;
			if (ptrace(PTRACE_SEIZE, tid, 0, 0) == 0) {
				ptrace(PTRACE_INTERRUPT, tid, 0, 0);
				waitpid(tid, &status, __WALL);
				if (rnd(2) && ptrace(PTRACE_CONT, tid, 0, 0) == 0) {
					kt_msleep(1);	/* runs: the tracer is in charge */
					ptrace(PTRACE_INTERRUPT, tid, 0, 0);
					waitpid(tid, &status, __WALL);
				}
				ptrace(PTRACE_DETACH, tid, 0, 0);
			}
			break;
		case 6:		/* the owner goes away */
			freeze_backend_close(b);
			b = NULL;
			ret = 0;
			break;
		case 7:		/* the target dies; a new one takes its place */
			if (rnd(3))
				continue;
			kill(pid, SIGKILL);
			if (rnd(2) && b)
				freeze_process(b, pid, 0, err, sizeof(err));
			waitpid(pid, NULL, 0);
			memset((void *)sh, 0, sizeof(*sh));
			pid = spawn_churn(sh);
			ASSERT_LT(0, pid);
			ret = 0;
			break;
		default:
			kt_msleep(rnd(5));
			ret = 0;
			break;
		}
		EXPECT_TRUE(clean_errno(ret)) TH_LOG("round %d: %d %s", i, ret, err);
		ops++;
	}
	if (b) {
		freeze_thaw(b, pid, err, sizeof(err));
		freeze_backend_close(b);
	}
	kt_kill(pid);
	ASSERT_EQ(0, kt_open(&b, err, sizeof(err)));
	freeze_backend_close(b);
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, kt_status(&st, err, sizeof(err)));
		if (!st.nr_frozen)
			break;
		kt_msleep(10);
	}
	EXPECT_EQ(0, st.nr_frozen);
	TH_LOG("%d operations", ops);
}

TEST_HARNESS_MAIN
