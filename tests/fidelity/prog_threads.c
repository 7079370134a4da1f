// SPDX-License-Identifier: GPL-2.0
/*
 * Threads: four workers, each with its own name, TLS value and signal
 * mask; one holds a mutex, one is blocked on it (a futex wait), one waits
 * on a condition variable, one sleeps. After the word: same tids, names,
 * TLS and masks, and the blocked ones wake as they should.
 */
#include <pthread.h>
#include <signal.h>
#include <dirent.h>
#include <sys/prctl.h>

#include "fidelity.h"

#define NT 4

struct worker {
	pthread_t th;
	long idx;
	pid_t tid;
	char why[256];
};

static __thread long tls_val;
static pthread_barrier_t barrier;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int cv_flag;
static volatile int go;
static struct worker w[NT];

static void wait_go(void)
{
	while (!go)
		fid_nap_ms(10);
}

static void check_self(struct worker *me)
{
	char name[16] = "", want[16];
	sigset_t cur;

	snprintf(want, sizeof(want), "fid-w%ld", me->idx);
	prctl(PR_GET_NAME, name);
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	if (gettid() != me->tid)
		snprintf(me->why, sizeof(me->why), "worker %ld: tid %d, was %d", me->idx, gettid(), me->tid);
	else if (tls_val != me->idx * 1000 + 7)
		snprintf(me->why, sizeof(me->why), "worker %ld: TLS %ld", me->idx, tls_val);
	else if (strcmp(name, want))
		snprintf(me->why, sizeof(me->why), "worker %ld: name '%s'", me->idx, name);
	else if (!sigismember(&cur, SIGRTMIN + (int)me->idx) || sigismember(&cur, SIGUSR1))
		snprintf(me->why, sizeof(me->why), "worker %ld: signal mask changed", me->idx);
}

static void *worker(void *arg)
{
	struct worker *me = arg;
	char name[16];
	sigset_t m;

	tls_val = me->idx * 1000 + 7;
	snprintf(name, sizeof(name), "fid-w%ld", me->idx);
	prctl(PR_SET_NAME, name);
	sigemptyset(&m);
	sigaddset(&m, SIGRTMIN + (int)me->idx);
	pthread_sigmask(SIG_BLOCK, &m, NULL);
	me->tid = gettid();
	switch (me->idx) {
	case 0:		/* holds the mutex until the word */
		pthread_mutex_lock(&held);
		pthread_barrier_wait(&barrier);
		wait_go();
		check_self(me);
		pthread_mutex_unlock(&held);
		break;
	case 1:		/* blocked on it in a futex wait */
		pthread_barrier_wait(&barrier);
		pthread_mutex_lock(&held);
		check_self(me);
		if (!go && !me->why[0])
			snprintf(me->why, sizeof(me->why), "worker 1 got the mutex before the word");
		pthread_mutex_unlock(&held);
		break;
	case 2:		/* waits on a condition variable */
		pthread_barrier_wait(&barrier);
		pthread_mutex_lock(&cv_lock);
		while (!cv_flag)
			pthread_cond_wait(&cv, &cv_lock);
		pthread_mutex_unlock(&cv_lock);
		check_self(me);
		break;
	default:	/* sleeps */
		pthread_barrier_wait(&barrier);
		wait_go();
		check_self(me);
	}
	return NULL;
}

/* How many threads of this process carry a worker's name, tids as recorded. */
static int named_workers(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int found = 0, i;

	while (d && (de = readdir(d))) {
		pid_t tid = atoi(de->d_name);

		for (i = 0; i < NT; i++)
			found += tid && tid == w[i].tid;
	}
	if (d)
		closedir(d);
	return found;
}

int main(int argc, char **argv)
{
	long i;

	fid_init(argc, argv);
	pthread_barrier_init(&barrier, NULL, NT + 1);
	for (i = 0; i < NT; i++) {
		w[i].idx = i;
		if (pthread_create(&w[i].th, NULL, worker, &w[i]))
			fid_die("pthread_create");
	}
	pthread_barrier_wait(&barrier);
	fid_nap_ms(100);	/* worker 1 is in its futex wait */
	fid_ready_wait();
	FID_CHECK(named_workers() == NT, "%d of %d worker tids found in /proc/self/task",
		  named_workers(), NT);
	go = 1;
	pthread_mutex_lock(&cv_lock);
	cv_flag = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&cv_lock);
	for (i = 0; i < NT; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].why[0])
			fid_fail("%s", w[i].why);
	}
	fid_finish();
}
