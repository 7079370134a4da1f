// SPDX-License-Identifier: GPL-2.0
/*
 * The MPI program of tests/crs/test_checkpoint_mpi.sh:
 *
 *   prog_mpi ITERS NAP_MS [WAIT_AT GOFILE]
 *
 * Every rank runs ITERS iterations of a short nap and an MPI_Allreduce of
 * (rank + 1) * (iter + 1), printing "rank R iter I sum S" after each; at the
 * end "rank R done total T" (T the sum of every S). With WAIT_AT, each rank
 * waits after iteration WAIT_AT until GOFILE exists, so that a checkpoint
 * taken meanwhile sees a known output.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void nap_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

int main(int argc, char **argv)
{
	long iters, nap, wait_at = -1, i, sum, total = 0;
	const char *go = NULL;
	int rank;

	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: %s ITERS NAP_MS [WAIT_AT GOFILE]\n", argv[0]);
		return 2;
	}
	iters = atol(argv[1]);
	nap = atol(argv[2]);
	if (argc == 5) {
		wait_at = atol(argv[3]);
		go = argv[4];
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (i = 0; i < iters; i++) {
		long mine = (long)(rank + 1) * (i + 1);

		nap_ms(nap);
		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		total += sum;
		printf("rank %d iter %ld sum %ld\n", rank, i, sum);
		fflush(stdout);
		if (i == wait_at)
			while (access(go, F_OK))
				nap_ms(50);
	}
	printf("rank %d done total %ld\n", rank, total);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
