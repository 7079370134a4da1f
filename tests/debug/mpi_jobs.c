// SPDX-License-Identifier: GPL-2.0
/*
 * An MPI program for the console tests on real jobs (test_console_jobs):
 * every rank calls step() three times (a function to break in, watch
 * and finish), prints its total and meets the others in a barrier. The
 * argument picks what rank 1 does before that barrier while the others
 * wait in it: "segv" (a NULL store in crash()), "abort", "exit" (code
 * 3, without MPI_Finalize); none: nothing, the job ends normally. A
 * second argument names a file rank 1 waits for (running) before it
 * does so: the test decides when, not the machine's speed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int total;

int step(int rank, int i)
{
	int v = rank * 10 + i;

	total += v;
	return v;
}

void crash(void)
{
	volatile int *p = NULL;

	*p = 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < 3; i++)
		step(rank, i);
	printf("rank %d total %d\n", rank, total);
	fflush(stdout);
	while (rank == 1 && argc > 2 && access(argv[2], F_OK))
		usleep(100000);
	if (rank == 1 && !strcmp(mode, "segv"))
		crash();
	if (rank == 1 && !strcmp(mode, "abort"))
		abort();
	if (rank == 1 && !strcmp(mode, "exit"))
		exit(3);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
