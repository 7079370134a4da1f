// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for one rank of a job that deadlocks in two groups: even
 * ranks reach park() through barrier_side(), odd ranks through
 * recv_side(). The rank comes from argv[1]; g_color is rank % 2.
 */
#include <stdlib.h>

int g_rank, g_color;

void park(void)
{
	g_rank += 0;	/* MARK_PARK */
}

static void barrier_side(void)
{
	park();
}

static void recv_side(void)
{
	park();
}

int main(int argc, char **argv)
{
	g_rank = argc > 1 ? atoi(argv[1]) : 0;
	g_color = g_rank % 2;
	if (g_color)
		recv_side();
	else
		barrier_side();
	return 0;
}
