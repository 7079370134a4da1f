// SPDX-License-Identifier: GPL-2.0
/*
 * The program the `crdbg debug` tests debug (built -g -O0). Its rank comes
 * from CRDBG_RANK. With "block", even ranks block in wait_even() and odd
 * ranks in wait_odd(), so their stacks form two groups. With "read", rank
 * 0 reads a line from stdin and prints it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int value;

int compute(int rank)
{
	value = rank % 2 ? 9 : 4;	/* line used by the tests: "compute" */
	return value;
}

void wait_even(void)
{
	for (;;)
		pause();
}

void wait_odd(void)
{
	for (;;)
		sleep(100);
}

int main(int argc, char **argv)
{
	const char *r = getenv("CRDBG_RANK");
	int rank = r ? atoi(r) : -1;
	int x;

	x = compute(rank);
	printf("hello from rank %d x=%d\n", rank, x);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "read") && rank == 0) {
		char line[256];

		if (fgets(line, sizeof(line), stdin))
			printf("rank 0 got: %s", line);
		fflush(stdout);
	}
	if (argc > 1 && !strcmp(argv[1], "block")) {
		if (rank % 2)
			wait_odd();
		else
			wait_even();
	}
	return 0;
}
