// SPDX-License-Identifier: GPL-2.0
/*
 * The program of the timeline tests (auto-checkpoint, restart N, back):
 * each rank (CRDBG_RANK) runs tl_step() four times in a loop, each call
 * adding to a running total that depends on the rank and on every earlier
 * call, and prints the total only at the end, so a rank that came back
 * to an earlier stop and ran on prints what an uninterrupted run prints.
 * Built -g -O0.
 *
 * "prog_timeline MIB STEPS" (the benchmark): MIB MiB of memory written
 * once at the start, 1% of it written again at every step, STEPS steps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long total;
static char *mem;
static size_t mem_len;

long tl_step(int rank, int i)
{
	total = total * 3 + i + rank;	/* the tests break here */
	if (mem_len)
		memset(mem + (size_t)i * (mem_len / 100) % mem_len, i + 1, mem_len / 100);
	return total;
}

int main(int argc, char **argv)
{
	const char *r = getenv("CRDBG_RANK");
	int rank = r ? atoi(r) : 0, steps = 4;

	if (argc > 2) {
		mem_len = strtoul(argv[1], NULL, 10) << 20;
		steps = atoi(argv[2]);
		mem = malloc(mem_len ? mem_len : 1);
		if (!mem)
			return 1;
		memset(mem, 1, mem_len);
	}
	for (int i = 0; i < steps; i++)
		tl_step(rank, i);
	printf("timeline rank %d total %ld\n", rank, total);
	fflush(stdout);
	return 0;
}
