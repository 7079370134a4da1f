// SPDX-License-Identifier: GPL-2.0
/*
 * The program of the timeline tests (auto-checkpoint, restart N, back):
 * each rank (CRDBG_RANK) runs tl_step() four times in a loop, each call
 * adding to a running total that depends on the rank and on every earlier
 * call, and prints the total only at the end, so a rank that came back
 * to an earlier stop and ran on prints what an uninterrupted run prints.
 * Built -g -O0.
 */
#include <stdio.h>
#include <stdlib.h>

static long total;

long tl_step(int rank, int i)
{
	total = total * 3 + i + rank;	/* the tests break here */
	return total;
}

int main(void)
{
	const char *r = getenv("CRDBG_RANK");
	int rank = r ? atoi(r) : 0;

	for (int i = 0; i < 4; i++)
		tl_step(rank, i);
	printf("timeline rank %d total %ld\n", rank, total);
	fflush(stdout);
	return 0;
}
