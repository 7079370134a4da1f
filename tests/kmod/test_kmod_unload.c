// SPDX-License-Identifier: GPL-2.0
/*
 * Unloading crdbg.ko thaws everything: a frozen target runs again, a
 * persistent freeze is released too, and a pending hook is dropped (never
 * run into a module that is gone). A hook in flight holds its return fd,
 * which keeps the module loaded: rmmod is refused until the hook has
 * returned through it. Runs last in the group: it reloads the module at
 * the end.
 */
#define KT_OWN_HOOK_ENTRY
#include "kmod-test.h"

#define NTHREADS 2

static struct kt_shared *hook_sh;
static volatile int *hook_gate;	/* shared: the hook waits until it is 1 */
static volatile int *hook_calls;

void crdbg_hook_entry(uint64_t arg)
{
	(void)arg;
	__atomic_add_fetch(hook_calls, 1, __ATOMIC_SEQ_CST);
	while (!*hook_gate)
		kt_msleep(1);
}

static int module_loaded(void)
{
	return system("lsmod | grep -q '^crdbg '") == 0;
}

static int reload(void)
{
	const char *build = getenv("CRDBG_BUILD");
	char cmd[512];

	if (module_loaded())
		return 0;
	snprintf(cmd, sizeof(cmd), "insmod %s/kmod/crdbg.ko", build ? build : "build");
	return system(cmd);
}

FIXTURE(unload) {
	struct freeze_backend *b;
	struct kt_shared *sh;
	pid_t pid;
	char err[256];
};

FIXTURE_SETUP(unload)
{
	int ret;

	if (!module_loaded())
		SKIP(return, "crdbg.ko is not loaded");
	self->sh = kt_shared_new();
	ASSERT_NE(NULL, self->sh);
	hook_sh = self->sh;
	hook_calls = (volatile int *)&self->sh->tids[KT_MAX_THREADS - 1];
	hook_gate = (volatile int *)&self->sh->tids[KT_MAX_THREADS - 2];
	self->pid = kt_spawn_spinner(self->sh, NTHREADS);
	ASSERT_LT(0, self->pid);
	ret = kt_open(&self->b, self->err, sizeof(self->err));
	ASSERT_EQ(0, ret) TH_LOG("%s", self->err);
}

FIXTURE_TEARDOWN(unload)
{
	kt_kill(self->pid);
	freeze_backend_close(self->b);
	EXPECT_EQ(0, reload());
}

static int rmmod(struct freeze_backend **b)
{
	/* our own socket holds no module reference, but close it first anyway */
	freeze_backend_close(*b);
	*b = NULL;
	return system("rmmod crdbg");
}

TEST_F(unload, unload_thaws_persistent_freeze)
{
	uint64_t a;

	ASSERT_EQ(0, freeze_process(self->b, self->pid, FREEZE_F_PERSIST, self->err,
				    sizeof(self->err)));
	a = kt_sum(self->sh, NTHREADS);
	kt_msleep(100);
	ASSERT_EQ(a, kt_sum(self->sh, NTHREADS));
	ASSERT_EQ(0, rmmod(&self->b));
	kt_msleep(100);
	EXPECT_LT(a, kt_sum(self->sh, NTHREADS));
}

TEST_F(unload, unload_drops_pending_hook)
{
	uint64_t a;

	ASSERT_EQ(0, freeze_process(self->b, self->pid, FREEZE_F_PERSIST, self->err,
				    sizeof(self->err)));
	ASSERT_EQ(0, freeze_push_hook(self->b, self->pid, 0, (uint64_t)(uintptr_t)crdbg_hook_trampoline,
			       0, self->err, sizeof(self->err)));
	a = kt_sum(self->sh, NTHREADS);
	ASSERT_EQ(0, rmmod(&self->b));
	kt_msleep(200);
	EXPECT_LT(a, kt_sum(self->sh, NTHREADS));
	EXPECT_EQ(0, *hook_calls);
	EXPECT_EQ(0, waitpid(self->pid, NULL, WNOHANG));
}

TEST_F(unload, unload_refused_during_hook)
{
	uint64_t a;
	int i;

	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	ASSERT_EQ(0, freeze_push_hook(self->b, self->pid, self->sh->tids[0],
			       (uint64_t)(uintptr_t)crdbg_hook_trampoline, 0, self->err,
			       sizeof(self->err)));
	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	for (i = 0; i < 5000 && !*hook_calls; i++)
		kt_msleep(1);
	ASSERT_EQ(1, *hook_calls);
	a = self->sh->count[0];
	kt_msleep(50);
	ASSERT_EQ(a, self->sh->count[0]);	/* thread 0 is inside its hook */
	freeze_backend_close(self->b);
	self->b = NULL;
	EXPECT_NE(0, system("rmmod crdbg 2>/dev/null"));	/* its return fd holds the module */
	EXPECT_TRUE(module_loaded());
	*hook_gate = 1;
	kt_msleep(200);
	EXPECT_LT(a, self->sh->count[0]);	/* back in its loop */
	EXPECT_EQ(0, waitpid(self->pid, NULL, WNOHANG));
	EXPECT_EQ(0, system("rmmod crdbg"));	/* the hook returned: nothing holds it */
}

TEST_HARNESS_MAIN
