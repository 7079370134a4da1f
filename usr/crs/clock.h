/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a checkpoint or a restart spends its time: phase marks printed
 * with -v (Documentation/performance.md reads them).
 */
#ifndef CRDBG_CRS_CLOCK_H
#define CRDBG_CRS_CLOCK_H

#include <time.h>

static inline double crs_clock_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

#endif /* CRDBG_CRS_CLOCK_H */
