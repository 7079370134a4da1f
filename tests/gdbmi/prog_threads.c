// SPDX-License-Identifier: GPL-2.0
/*
 * A 4-thread program (main and 3 workers) for the driver's thread tests:
 * once every worker has started, main calls all_started() (the tests
 * break there) while the workers sit in worker_wait().
 */
#include <pthread.h>
#include <stdio.h>

#define NWORKERS 3

static pthread_barrier_t started, done;

/*
 * Both barriers are inside worker_wait(), so once main passes "started"
 * every worker's stack has worker_wait() on it, whatever the scheduling.
 */
static void worker_wait(void)
{
	pthread_barrier_wait(&started);
	pthread_barrier_wait(&done);	/* until main is past all_started() */
}

static void *worker(void *arg)
{
	(void)arg;
	worker_wait();
	return NULL;
}

static void all_started(void)
{
	printf("all %d workers started\n", NWORKERS);	/* MARK_ALL_STARTED */
	fflush(stdout);
}

int main(void)
{
	pthread_t tids[NWORKERS];
	int i;

	pthread_barrier_init(&started, NULL, NWORKERS + 1);
	pthread_barrier_init(&done, NULL, NWORKERS + 1);
	for (i = 0; i < NWORKERS; i++)
		pthread_create(&tids[i], NULL, worker, NULL);
	pthread_barrier_wait(&started);
	all_started();
	pthread_barrier_wait(&done);
	for (i = 0; i < NWORKERS; i++)
		pthread_join(tids[i], NULL);
	return 0;
}
