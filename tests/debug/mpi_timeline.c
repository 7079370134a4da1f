// SPDX-License-Identifier: GPL-2.0
/*
 * The MPI program of the timeline tests: every rank runs tl_step() three
 * times, each followed by an MPI_Allreduce of the running totals (the
 * ranks talk at every step), and prints the result only at the end.
 */
#include <mpi.h>
#include <stdio.h>

static long total;

long tl_step(int rank, int i)
{
	total = total * 3 + i + rank;	/* the tests break here */
	return total;
}

int main(int argc, char **argv)
{
	long sum = 0;
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < 3; i++) {
		tl_step(rank, i);
		MPI_Allreduce(&total, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		total += sum % 7;
	}
	printf("timeline mpi rank %d total %ld\n", rank, total);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
