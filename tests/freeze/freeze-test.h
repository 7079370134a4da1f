/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Target processes for the freeze tests and the freeze benchmark: a
 * forked child whose threads spin on counters, block in the kernel, or
 * create threads, all visible to the parent through a shared mapping.
 */
#ifndef CRDBG_FREEZE_TEST_H
#define CRDBG_FREEZE_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FT_MAX_THREADS	256

struct ft_shared {
	volatile uint64_t counter[FT_MAX_THREADS];	/* one per spinner */
	volatile int nr_spinners;	/* how many spinners to start */
	volatile int started;		/* threads that reached their loop */
	volatile uint32_t futex_word;
	volatile uint64_t blocked_done[3];	/* nanosleep, read, futex rounds */
	volatile int spawn;		/* spawner: threads created so far */
	int pipe_fd[2];
	int flags;
};

#define FT_BLOCKERS	(1 << 0)	/* threads in nanosleep, read, futex */
#define FT_SPAWNER	(1 << 1)	/* the main thread keeps creating short-lived threads */
#define FT_MAIN_SPINS	(1 << 2)	/* the main thread spins on counter[nr_spinners] */

static inline void ft_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

#define FT_PF_EXITING	0x00000004	/* include/linux/sched.h */

/* Is tid of pid past its exit (in do_exit: it runs no user code again)? */
static inline bool ft_task_exiting(pid_t pid, const char *tid)
{
	char path[96], buf[512], *p;
	unsigned long flags = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;	/* gone already */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strrchr(buf, ')');
	/* after the name: state ppid pgrp session tty_nr tpgid flags */
	return !p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %lu", &flags) != 1 ||
	       (flags & FT_PF_EXITING);
}

/* pid's threads; with live, only those not exiting. */
static inline int ft_count_tasks(pid_t pid, bool live)
{
	char path[64];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		if (d->d_name[0] >= '0' && d->d_name[0] <= '9' &&
		    (!live || !ft_task_exiting(pid, d->d_name)))
			n++;
	closedir(dir);
	return n;
}

static inline int ft_nr_tasks(pid_t pid)
{
	return ft_count_tasks(pid, false);
}

/*
 * Threads that can still run user code: a thread that has exited but
 * is still listed (the spawner's, whose join returned just before the
 * freeze) cannot be frozen and need not be.
 */
static inline int ft_nr_live_tasks(pid_t pid)
{
	return ft_count_tasks(pid, true);
}

static inline struct ft_shared *ft_shared_new(void)
{
	void *p = mmap(NULL, sizeof(struct ft_shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The loop every spinner runs; its name shows up in `crdbg threads`. */
__attribute__((noinline)) static void ft_spin_counter(volatile uint64_t *c)
{
	for (;;)
		(*c)++;
}

static struct ft_shared *ft_sh;

static inline void ft_started(void)
{
	__atomic_add_fetch(&ft_sh->started, 1, __ATOMIC_SEQ_CST);
}

static inline void *ft_spin_thread(void *arg)
{
	ft_started();
	ft_spin_counter(arg);
	return NULL;
}

static inline void *ft_sleep_thread(void *arg)
{
	struct timespec ts = { 0, 100 * 1000000L };

	(void)arg;
	ft_started();
	for (;;) {
		nanosleep(&ts, NULL);
		ft_sh->blocked_done[0]++;
	}
	return NULL;
}

static inline void *ft_read_thread(void *arg)
{
	char c;

	(void)arg;
	ft_started();
	for (;;)
		if (read(ft_sh->pipe_fd[0], &c, 1) == 1)
			ft_sh->blocked_done[1]++;
	return NULL;
}

static inline void *ft_futex_thread(void *arg)
{
	(void)arg;
	ft_started();
	for (;;) {
		/* shared (not PRIVATE) futex: the test process wakes it */
		syscall(SYS_futex, &ft_sh->futex_word, FUTEX_WAIT, 0, NULL, NULL, 0);
		if (ft_sh->futex_word) {
			ft_sh->futex_word = 0;
			ft_sh->blocked_done[2]++;
		}
	}
	return NULL;
}

static inline void *ft_exit_thread(void *arg)
{
	return arg;
}

static inline void ft_start(void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	if (pthread_create(&t, &a, fn, arg))
		_exit(3);
	pthread_attr_destroy(&a);
}

/* The child: never returns. */
static inline void ft_child_main(struct ft_shared *sh)
{
	int i, fd;

	ft_sh = sh;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setsid();
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	for (i = 0; i < sh->nr_spinners; i++)
		ft_start(ft_spin_thread, (void *)&sh->counter[i]);
	if (sh->flags & FT_BLOCKERS) {
		ft_start(ft_sleep_thread, NULL);
		ft_start(ft_read_thread, NULL);
		ft_start(ft_futex_thread, NULL);
	}
	if (sh->flags & FT_SPAWNER) {
		/* create, let exit, join, again: a clone is nearly always in flight */
		pthread_attr_t a;
		pthread_t t;

		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 64 * 1024);
		for (;;) {
			if (pthread_create(&t, &a, ft_exit_thread, NULL))
				_exit(3);
			pthread_join(t, NULL);
			sh->spawn++;
		}
	}
	if (sh->flags & FT_MAIN_SPINS) {
		ft_started();
		ft_spin_counter(&sh->counter[sh->nr_spinners]);
	}
	for (;;)
		pause();
}

/* Fork a target; returns its pid after every thread reached its loop. */
static inline pid_t ft_spawn(struct ft_shared *sh, int spinners, int flags)
{
	int expect = spinners + ((flags & FT_BLOCKERS) ? 3 : 0) + !!(flags & FT_MAIN_SPINS);
	pid_t pid;

	memset((void *)sh, 0, sizeof(*sh));
	sh->nr_spinners = spinners;
	sh->flags = flags;
	if ((flags & FT_BLOCKERS) && pipe(sh->pipe_fd) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid)
		ft_child_main(sh);
	/*
	 * Up to 90 s of the clock: at nice 10 beside two emulated guests,
	 * 60 spinners take tens of seconds to have each run once.
	 */
	for (time_t end = time(NULL) + 90; time(NULL) < end;) {
		int k, all = 1;

		if (sh->started >= expect) {
			for (k = 0; k < spinners; k++)
				all &= sh->counter[k] > 0;
			if (all && (!(flags & FT_SPAWNER) || sh->spawn > 10))
				return pid;
		}
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -ETIMEDOUT;
}

/*
 * The user PC of a blocked thread as the kernel sees it, independent of
 * any freeze backend: the last field of /proc/PID/task/TID/syscall.
 * Returns 0 when the thread is running or the file cannot be read.
 */
static inline uint64_t ft_kernel_pc(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *last;
	ssize_t len;
	int fd, tries = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
again:
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	/*
	 * "running" until the parked thread is off its CPU: the kernel shows
	 * a task's registers only then (seen once under TCG right after
	 * QUERY said frozen). Wait for that, up to a second.
	 */
	if (!strncmp(buf, "running", 7)) {
		if (++tries > 100)
			return 0;
		usleep(10000);
		goto again;
	}
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	last = strrchr(buf, ' ');
	return last ? strtoull(last + 1, NULL, 0) : 0;
}

static inline void ft_kill(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

#endif /* CRDBG_FREEZE_TEST_H */
