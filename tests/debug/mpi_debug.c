// SPDX-License-Identifier: GPL-2.0
/*
 * An MPI program for the MPIR tests of `crdbg debug -- mpirun`: every rank
 * computes a rank-dependent value, prints it, and meets the others in a
 * barrier. With "spin" the ranks then loop in spin() until a debugger
 * clears "spinning" (for crdbg attach). With "deadlock" rank 0 first
 * prints a line it reads from stdin, then even ranks wait in
 * recv_forever() for a message nobody sends and odd ranks in
 * barrier_forever() for a barrier the even ranks never join.
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

void recv_forever(void)
{
	int v;

	MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

void barrier_forever(void)
{
	MPI_Barrier(MPI_COMM_WORLD);
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
	if (argc > 1 && !strcmp(argv[1], "deadlock")) {
		char line[128];

		if (rank == 0 && fgets(line, sizeof(line), stdin))
			printf("mpi rank 0 got: %s", line);
		fflush(stdout);
		if (rank % 2 == 0)
			recv_forever();
		else
			barrier_forever();
	}
	MPI_Barrier(MPI_COMM_WORLD);
	/* Declared here, not above: the tests break at this file's line 51. */
	static volatile int exit_code;	/* a debugger sets main::exit_code */

	if (exit_code)
		_exit(exit_code);	/* the exit crdbg holds (console.md) */
	if (argc > 1 && !strcmp(argv[1], "spin"))
		spin();
	MPI_Finalize();
	return 0;
}
