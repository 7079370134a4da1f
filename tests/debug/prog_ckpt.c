// SPDX-License-Identifier: GPL-2.0
/*
 * The program the console's checkpoint test debugs (tests/debug/
 * test_debugckpt.sh). Four workers iterate a floating-point recurrence
 * whose state lives in SSE registers; main waits until each has started,
 * calls compute() (where the test breaks and checkpoints), joins them and
 * prints every result exactly (%a). A register a checkpoint or restart
 * got wrong changes a result, so the output must equal an uninterrupted
 * run's. The rank comes from CRDBG_RANK.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define WORKERS	4
#define ITER	50000000UL

static double result[WORKERS];
static volatile unsigned long progress[WORKERS];

static void *worker(void *arg)
{
	long k = (long)arg;
	double x = 1.0 + k, y = 0.25 * k;

	for (unsigned long i = 0; i < ITER; i++) {
		x = x * 1.0000001 + 1e-9;
		y = y + x * 1e-7;
		if (!(i & 0xfff))
			progress[k] = i + 1;
	}
	result[k] = x + y;
	return NULL;
}

int __attribute__((noinline)) compute(int rank)
{
	return rank * 2 + 1;
}

int main(void)
{
	const char *r = getenv("CRDBG_RANK");
	int rank = r ? atoi(r) : 0;
	pthread_t th[WORKERS];
	long k;

	for (k = 0; k < WORKERS; k++)
		pthread_create(&th[k], NULL, worker, (void *)k);
	for (k = 0; k < WORKERS; k++)
		while (!progress[k])
			usleep(1000);
	printf("rank %d compute %d\n", rank, compute(rank));
	for (k = 0; k < WORKERS; k++) {
		pthread_join(th[k], NULL);
		printf("rank %d worker %ld result %a\n", rank, k, result[k]);
	}
	return 0;
}
