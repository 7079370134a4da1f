// SPDX-License-Identifier: GPL-2.0
/*
 * An MPI program for the MPIR tests of `crdbg debug -- mpirun`: every rank
 * computes a rank-dependent value, prints it, and meets the others in a
 * barrier. With "spin" the ranks then loop in spin() until a debugger
 * clears "spinning" (for crdbg attach).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int value;
static volatile int spinning = 1;

void spin(void)
{
	while (spinning)
		usleep(10000);
}

int compute(int rank)
{
	value = rank % 2 ? 9 : 4;
	return value;
}

int main(int argc, char **argv)
{
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	compute(rank);
	printf("mpi rank %d of %d value %d\n", rank, size, value);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	if (argc > 1 && !strcmp(argv[1], "spin"))
		spin();
	MPI_Finalize();
	return 0;
}
