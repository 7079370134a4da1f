// SPDX-License-Identifier: GPL-2.0
/*
 * MPI programs for the parallel step's tests (tests/debug/test_pstep.c),
 * one per argument. Each case is pinned to line numbers with #line so
 * that the tests can name the lines the ranks stop at.
 *   ring      MPI_Sendrecv around a ring (lines 100-)
 *   barrier   every rank to a barrier (lines 200-)
 *   isend     MPI_Isend / MPI_Irecv and MPI_Wait on two ranks (lines 300-)
 *   deadlock  two ranks each in MPI_Recv from the other first (lines 400-)
 *   exit      rank 1 exits after MPI_Finalize, rank 0 goes on (lines 500-)
 *   loop      rank 0 sends three messages to rank 1, one per iteration,
 *             after some work; rank 1 receives them in a loop (lines 700-)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, got;
static volatile int v;

#line 100
void ring(void)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size;

	MPI_Sendrecv(&rank, 1, MPI_INT, right, 0, &got, 1, MPI_INT, left, 0,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	v = got;
}

#line 200
void barrier(void)
{
	v = rank * 2;
	MPI_Barrier(MPI_COMM_WORLD);
	v = rank * 3;
}

#line 300
void isend(void)
{
	MPI_Request req;
	int x = rank;

	if (rank == 0) {
		MPI_Isend(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	} else if (rank == 1) {
		v = 1;
		MPI_Irecv(&got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	}
	v = got;
}

#line 400
void deadlock(void)
{
	int peer = 1 - rank, x = rank;

	MPI_Recv(&got, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Send(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
}

#line 500
void leave(void)
{
	MPI_Finalize();
	if (rank == 1)
		exit(0);
	v = 5;
	v = 6;
}

#line 700
void loop(void)
{
	for (int i = 0; i < 3; i++) {
		if (rank == 0) {
			v = i;
			v = v * 2;
			v = v + 1;
			MPI_Send(&i, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
		} else if (rank == 1) {
			MPI_Recv(&got, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
	}
}

#line 600
int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!strcmp(mode, "ring"))
		ring();
	else if (!strcmp(mode, "barrier"))
		barrier();
	else if (!strcmp(mode, "isend"))
		isend();
	else if (!strcmp(mode, "deadlock"))
		deadlock();
	else if (!strcmp(mode, "loop"))
		loop();
	if (!strcmp(mode, "exit")) {
		leave();
		return 0;
	}
	MPI_Finalize();
	return 0;
}
