// SPDX-License-Identifier: GPL-2.0
/*
 * Each rank prints "rank R/N on HOST pid P", then all meet in a barrier and
 * rank 0 sums the ranks over MPI_Reduce: the job only ends well if its
 * ranks on different nodes can talk to each other.
 */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char host[MPI_MAX_PROCESSOR_NAME];
	int rank, size, len, sum = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(host, &len);
	printf("rank %d/%d on %s pid %d\n", rank, size, host, (int)getpid());
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("sum %d\n", sum);
	MPI_Finalize();
	return 0;
}
