// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg.ko freeze, thaw and query: exactness (no counter moves while
 * frozen, also across a ptrace attach/detach), threads blocked in the
 * kernel, threads created while frozen, socket-owned versus persistent
 * freezes, SIGKILL and exec of a frozen target.
 */
#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "kmod-test.h"

#define NTHREADS 8

FIXTURE(frozen) {
	struct freeze_backend *b;
	struct kt_shared *sh;
	pid_t pid;
	char err[256];
};

FIXTURE_SETUP(frozen)
{
	int ret;

	/* Fork first: a child must not inherit (and keep open) our socket. */
	self->sh = kt_shared_new();
	ASSERT_NE(NULL, self->sh);
	self->pid = kt_spawn_spinner(self->sh, NTHREADS);
	ASSERT_LT(0, self->pid);
	ret = kt_open(&self->b, self->err, sizeof(self->err));
	if (ret == -ENOENT)
		SKIP(return, "crdbg.ko is not loaded: %s", self->err);
	ASSERT_EQ(0, ret) TH_LOG("%s", self->err);
}

FIXTURE_TEARDOWN(frozen)
{
	kt_kill(self->pid);
	freeze_backend_close(self->b);
	if (self->sh)
		munmap(self->sh, sizeof(*self->sh));
}

static int all_frozen(struct freeze_thread *t, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (t[i].state != FREEZE_THREAD_FROZEN)
			return 0;
	return 1;
}

TEST_F(frozen, status_counts_frozen)
{
	struct kt_status st;

	ASSERT_EQ(0, kt_status(&st, self->err, sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_STREQ("0.1.0", st.version);
	EXPECT_EQ(0, st.nr_frozen);
	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	ASSERT_EQ(0, kt_status(&st, self->err, sizeof(self->err)));
	EXPECT_EQ(1, st.nr_frozen);
	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	ASSERT_EQ(0, kt_status(&st, self->err, sizeof(self->err)));
	EXPECT_EQ(0, st.nr_frozen);
}

TEST_F(frozen, drift_zero_and_thaw)
{
	struct freeze_thread t1[NTHREADS + 4], t2[NTHREADS + 4];
	uint64_t a, b;
	int n, i;

	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	a = kt_sum(self->sh, NTHREADS);
	n = freeze_query(self->b, self->pid, t1, NTHREADS + 4, self->err, sizeof(self->err));
	ASSERT_EQ(NTHREADS + 1, n) TH_LOG("%s", self->err);
	EXPECT_TRUE(all_frozen(t1, n));
	kt_msleep(300);
	b = kt_sum(self->sh, NTHREADS);
	EXPECT_EQ(a, b);
	ASSERT_EQ(n, freeze_query(self->b, self->pid, t2, NTHREADS + 4, self->err,
				   sizeof(self->err)));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(t1[i].tid, t2[i].tid);
		EXPECT_EQ(t1[i].regs.ip, t2[i].regs.ip);
		EXPECT_EQ(t1[i].regs.sp, t2[i].regs.sp);
		EXPECT_NE(0, t1[i].regs.ip);
	}
	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	kt_msleep(100);
	EXPECT_LT(b, kt_sum(self->sh, NTHREADS));
}

TEST_F(frozen, double_freeze_and_bad_thaw)
{
	EXPECT_EQ(-ENOENT, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "not frozen")) TH_LOG("extack: %s", self->err);
	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	EXPECT_EQ(-EALREADY, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "already frozen")) TH_LOG("extack: %s", self->err);
	EXPECT_EQ(-ESRCH, freeze_process(self->b, self->sh->tids[0], 0, self->err,
					 sizeof(self->err)));
	EXPECT_EQ(-EDEADLK, freeze_process(self->b, getpid(), 0, self->err, sizeof(self->err)));
	EXPECT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
}

/* A tracer attaches (SIGSTOP via PTRACE_ATTACH), inspects and detaches. */
TEST_F(frozen, ptrace_attach_detach_keeps_frozen)
{
	struct freeze_thread t[NTHREADS + 4];
	struct user_regs_struct r;
	pid_t tid = self->sh->tids[0];
	uint64_t a;
	int st, n, i;

	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	n = freeze_query(self->b, self->pid, t, NTHREADS + 4, self->err, sizeof(self->err));
	ASSERT_EQ(NTHREADS + 1, n);
	a = kt_sum(self->sh, NTHREADS);

	ASSERT_EQ(0, ptrace(PTRACE_ATTACH, tid, 0, 0));
	ASSERT_EQ(tid, waitpid(tid, &st, __WALL));
	ASSERT_TRUE(WIFSTOPPED(st));
	EXPECT_EQ(SIGSTOP, WSTOPSIG(st));
	ASSERT_EQ(0, ptrace(PTRACE_GETREGS, tid, 0, &r));
	for (i = 0; i < n; i++)
		if (t[i].tid == tid) {
			EXPECT_EQ(t[i].regs.ip, r.rip);	/* what CRIU would dump */
			EXPECT_EQ(t[i].regs.sp, r.rsp);
		}
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, tid, 0, 0));
	kt_msleep(300);
	EXPECT_EQ(a, kt_sum(self->sh, NTHREADS));

	/* PTRACE_SEIZE + INTERRUPT, as CRIU does, then detach */
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, tid, 0, 0));
	ASSERT_EQ(0, ptrace(PTRACE_INTERRUPT, tid, 0, 0));
	ASSERT_EQ(tid, waitpid(tid, &st, __WALL));
	ASSERT_EQ(0, ptrace(PTRACE_GETREGS, tid, 0, &r));
	for (i = 0; i < n; i++)
		if (t[i].tid == tid)
			EXPECT_EQ(t[i].regs.ip, r.rip);
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, tid, 0, 0));
	kt_msleep(300);
	EXPECT_EQ(a, kt_sum(self->sh, NTHREADS));
	n = freeze_query(self->b, self->pid, t, NTHREADS + 4, self->err, sizeof(self->err));
	EXPECT_TRUE(all_frozen(t, n));

	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	kt_msleep(100);
	EXPECT_LT(a, kt_sum(self->sh, NTHREADS));
}

/* The detach problem (Documentation/kmod.md): freeze while a debugger holds a thread stopped. */
TEST_F(frozen, freeze_under_tracer_then_detach)
{
	pid_t tid = self->sh->tids[0];
	uint64_t a;
	int st;

	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, tid, 0, 0));
	ASSERT_EQ(0, ptrace(PTRACE_INTERRUPT, tid, 0, 0));
	ASSERT_EQ(tid, waitpid(tid, &st, __WALL));
	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, tid, 0, 0));
	kt_msleep(100);
	a = kt_sum(self->sh, NTHREADS);
	kt_msleep(300);
	EXPECT_EQ(a, kt_sum(self->sh, NTHREADS));
	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	kt_msleep(100);
	EXPECT_LT(a, kt_sum(self->sh, NTHREADS));
}

/* A job-control stop and SIGCONT do not end a freeze. */
TEST_F(frozen, sigstop_sigcont_stay_frozen)
{
	uint64_t a;

	ASSERT_EQ(0, kill(self->pid, SIGSTOP));
	kt_msleep(100);
	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	ASSERT_EQ(0, kill(self->pid, SIGCONT));
	kt_msleep(100);
	a = kt_sum(self->sh, NTHREADS);
	kt_msleep(300);
	EXPECT_EQ(a, kt_sum(self->sh, NTHREADS));
	ASSERT_EQ(0, kill(self->pid, SIGSTOP));	/* stays pending while frozen */
	ASSERT_EQ(0, kill(self->pid, SIGCONT));
	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	kt_msleep(100);
	EXPECT_LT(a, kt_sum(self->sh, NTHREADS));
}

TEST_F(frozen, socket_close_releases)
{
	uint64_t a;

	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	a = kt_sum(self->sh, NTHREADS);
	kt_msleep(100);
	EXPECT_EQ(a, kt_sum(self->sh, NTHREADS));
	freeze_backend_close(self->b);
	self->b = NULL;
	kt_msleep(100);
	EXPECT_LT(a, kt_sum(self->sh, NTHREADS));
}

TEST_F(frozen, persist_survives_close)
{
	struct freeze_backend *b2 = NULL;
	struct freeze_thread t[NTHREADS + 4];
	uint64_t a;

	ASSERT_EQ(0, freeze_process(self->b, self->pid, FREEZE_F_PERSIST, self->err,
				    sizeof(self->err)));
	a = kt_sum(self->sh, NTHREADS);
	freeze_backend_close(self->b);
	self->b = NULL;
	kt_msleep(200);
	EXPECT_EQ(a, kt_sum(self->sh, NTHREADS));
	ASSERT_EQ(0, kt_open(&b2, self->err, sizeof(self->err)));
	EXPECT_EQ(NTHREADS + 1, freeze_query(b2, self->pid, t, NTHREADS + 4, self->err,
					      sizeof(self->err)));
	EXPECT_EQ(0, freeze_thaw(b2, self->pid, self->err, sizeof(self->err)));
	freeze_backend_close(b2);
	kt_msleep(100);
	EXPECT_LT(a, kt_sum(self->sh, NTHREADS));
}

/* Run by a traced thread of a frozen target: become a shell writing to fd 3. */
static int exec_pipe_fd = -1;

static void exec_helper(void)
{
	dup2(exec_pipe_fd, 3);
	execl("/bin/sh", "sh", "-c", "while :; do echo x >&3; sleep 0.05; done", (char *)NULL);
	_exit(42);
}

static int drain(int fd)
{
	char buf[4096];
	int n = 0;
	ssize_t r;

	while ((r = read(fd, buf, sizeof(buf))) > 0)
		n += (int)r;
	return n;
}

/*
 * exec while frozen: a tracer takes one thread out of the freeze and makes
 * it exec (the only way a frozen process can exec); the other thread dies
 * in de_thread(), the pending hooks are dropped, and once the tracer
 * detaches the new image is frozen too until THAW.
 */
TEST_F(frozen, exec_while_frozen)
{
	struct freeze_thread t[NTHREADS + 4];
	struct user_regs_struct r;
	pid_t tid = self->sh->tids[0];
	int fds[2], st, n, i, live = 0;

	/* this fixture's child has no pipe: make a fresh one-thread target */
	kt_kill(self->pid);
	ASSERT_EQ(0, pipe2(fds, O_NONBLOCK));
	exec_pipe_fd = fds[1];
	memset((void *)self->sh, 0, sizeof(*self->sh));
	self->pid = kt_spawn_spinner(self->sh, 1);
	ASSERT_LT(0, self->pid);
	close(fds[1]);
	tid = self->sh->tids[0];

	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	ASSERT_EQ(0, freeze_push_hook(self->b, self->pid, 0, (uint64_t)(uintptr_t)crdbg_hook_trampoline,
			       1, self->err, sizeof(self->err)));
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, tid, 0, 0));
	ASSERT_EQ(0, ptrace(PTRACE_INTERRUPT, tid, 0, 0));
	ASSERT_EQ(tid, waitpid(tid, &st, __WALL));
	ASSERT_EQ(0, ptrace(PTRACE_GETREGS, tid, 0, &r));
	r.rip = (uint64_t)(uintptr_t)exec_helper;
	r.rsp = ((r.rsp - 512) & ~15ULL) - 8;	/* as after a call */
	r.orig_rax = (uint64_t)-1;
	ASSERT_EQ(0, ptrace(PTRACE_SETREGS, tid, 0, &r));
	ASSERT_EQ(0, ptrace(PTRACE_CONT, tid, 0, 0));

	for (i = 0; i < 5000 && !drain(fds[0]); i++)	/* the shell runs, traced */
		kt_msleep(2);
	ASSERT_GT(5000, i) TH_LOG("the exec'ed shell never wrote");
	ASSERT_EQ(0, ptrace(PTRACE_INTERRUPT, self->pid, 0, 0));
	ASSERT_EQ(self->pid, waitpid(self->pid, &st, __WALL));
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, self->pid, 0, 0));

	kt_msleep(100);
	drain(fds[0]);
	kt_msleep(300);
	EXPECT_EQ(0, drain(fds[0]));	/* the new image is frozen */
	n = freeze_query(self->b, self->pid, t, NTHREADS + 4, self->err, sizeof(self->err));
	ASSERT_LE(1, n) TH_LOG("%s", self->err);
	for (i = 0; i < n; i++) {
		EXPECT_NE(FREEZE_THREAD_HOOK_PENDING, t[i].state);
		if (t[i].state != FREEZE_THREAD_EXITED) {
			live++;
			EXPECT_EQ(self->pid, t[i].tid);
			EXPECT_EQ(FREEZE_THREAD_FROZEN, t[i].state);
		}
	}
	EXPECT_EQ(1, live);
	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	for (i = 0; i < 5000 && !drain(fds[0]); i++)
		kt_msleep(2);
	EXPECT_GT(5000, i) TH_LOG("the shell did not resume after thaw");
	close(fds[0]);
}

TEST_F(frozen, sigkill_while_frozen)
{
	struct kt_status st;
	int status;

	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	ASSERT_EQ(0, kill(self->pid, SIGKILL));
	ASSERT_EQ(self->pid, waitpid(self->pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	self->pid = 0;
	ASSERT_EQ(0, kt_status(&st, self->err, sizeof(self->err)));
	EXPECT_EQ(0, st.nr_frozen);
}

/* Threads blocked in nanosleep, read and futex (pthread_join) freeze too. */
static void *sleeper(void *p)
{
	struct kt_shared *sh = p;
	struct timespec ts = { 3600, 0 };

	__atomic_add_fetch(&sh->nr_started, 1, __ATOMIC_SEQ_CST);
	nanosleep(&ts, NULL);
	return NULL;
}

static void *reader(void *p)
{
	int *fds = p;
	char c;

	if (read(fds[0], &c, 1) == 1)
		_exit(3);	/* nobody writes */
	return NULL;
}

TEST(blocked_threads)
{
	struct freeze_backend *b;
	struct freeze_thread t[8];
	struct kt_shared *sh = kt_shared_new();
	char err[256];
	pid_t pid;
	int n, i;

	if (kt_open(&b, err, sizeof(err)) == -ENOENT)
		SKIP(return, "crdbg.ko is not loaded");
	ASSERT_NE(NULL, sh);
	pid = fork();
	if (pid == 0) {
		static int fds[2];
		pthread_t a, r;

		kt_child_setup();
		if (pipe(fds))
			_exit(1);
		pthread_create(&a, NULL, sleeper, sh);
		pthread_create(&r, NULL, reader, fds);
		pthread_join(a, NULL);	/* futex */
		_exit(0);
	}
	while (!sh->nr_started)
		kt_msleep(1);
	kt_msleep(50);
	ASSERT_EQ(0, freeze_process(b, pid, 0, err, sizeof(err))) TH_LOG("%s", err);
	/*
	 * FREEZE may return after its one-second grace with a woken sleeper
	 * still on its way to the park (PENDING: in the kernel, it cannot
	 * run a user instruction; Documentation/kmod.md). On a loaded machine
	 * that happens: each must still park, in a few seconds at most.
	 */
	for (int tries = 0; tries < 500; tries++) {
		n = freeze_query(b, pid, t, 8, err, sizeof(err));
		ASSERT_EQ(3, n) TH_LOG("%s", err);
		if (all_frozen(t, n))
			break;
		kt_msleep(10);
	}
	for (i = 0; i < n; i++)
		EXPECT_EQ(FREEZE_THREAD_FROZEN, t[i].state) TH_LOG("tid %d", t[i].tid);
	EXPECT_EQ(0, freeze_thaw(b, pid, err, sizeof(err)));
	kt_msleep(50);
	EXPECT_EQ(0, waitpid(pid, NULL, WNOHANG));	/* still sleeping, not EINTR'd out */
	kt_kill(pid);
	freeze_backend_close(b);
}

/* The main thread keeps creating short-lived threads. */
static void *short_lived(void *p)
{
	struct kt_shared *sh = p;

	__atomic_add_fetch(&sh->created, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Number of live tasks of @pid, or -1 if one is missing or not frozen. */
static int every_task_frozen(pid_t pid, struct freeze_thread *t, int n)
{
	char path[64];
	struct dirent *de;
	int live = 0, j;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		int tid = atoi(de->d_name), found = 0;

		if (de->d_name[0] == '.')
			continue;
		for (j = 0; j < n; j++)
			if (t[j].tid == tid && t[j].state == FREEZE_THREAD_FROZEN)
				found = 1;
		if (!found) {
			closedir(d);
			return -1;
		}
		live++;
	}
	closedir(d);
	return live;
}

TEST(threads_created_while_freezing)
{
	struct freeze_backend *b;
	struct freeze_thread t[KT_MAX_THREADS];
	struct kt_shared *sh = kt_shared_new();
	char err[256];
	uint64_t a;
	pid_t pid;
	int n, i, live;

	if (kt_open(&b, err, sizeof(err)) == -ENOENT)
		SKIP(return, "crdbg.ko is not loaded");
	ASSERT_NE(NULL, sh);
	pid = fork();
	if (pid == 0) {
		pthread_t th;

		kt_child_setup();
		for (;;) {
			if (pthread_create(&th, NULL, short_lived, sh) == 0)
				pthread_detach(th);
		}
	}
	while (sh->created < 100)
		kt_msleep(1);
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, freeze_process(b, pid, 0, err, sizeof(err))) TH_LOG("%s", err);
		a = sh->created;
		kt_msleep(100);
		EXPECT_EQ(a, sh->created);
		n = freeze_query(b, pid, t, KT_MAX_THREADS, err, sizeof(err));
		ASSERT_LT(0, n);
		ASSERT_GE(KT_MAX_THREADS, n);
		live = every_task_frozen(pid, t, n);
		EXPECT_LT(0, live);
		ASSERT_EQ(0, freeze_thaw(b, pid, err, sizeof(err)));
		kt_msleep(20);
	}
	/* thawed, it creates threads again (on a loaded machine not within 20 ms) */
	for (i = 0; i < 5000 && sh->created == a; i++)
		kt_msleep(1);
	EXPECT_LT(a, sh->created);
	kt_kill(pid);
	freeze_backend_close(b);
}

TEST_HARNESS_MAIN
