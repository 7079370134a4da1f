/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MPIR_proctable read in bulk from the launcher's memory (proctable.c).
 */
#ifndef CRDBG_CONSOLE_PROCTABLE_H
#define CRDBG_CONSOLE_PROCTABLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ranks.h"

/*
 * The most entries a table may claim: a bound against a launcher's
 * garbage (a table that size is 384 MiB of descriptors), not a limit of
 * any design.
 */
#define MPIR_PROCTABLE_MAX	(16L << 20)

/*
 * The n entries of the MPIR_PROCDESC array at addr in process pid (a
 * launcher stopped under our gdb, so its memory holds still), into
 * procs[0..n-1]: its descriptors in one read, each distinct string once.
 * 0, or -errno with a line in err naming what could not be read.
 */
int mpir_proctable_read(pid_t pid, uint64_t addr, long n, struct dbg_proc *procs, char *err,
			size_t errlen);

#endif /* CRDBG_CONSOLE_PROCTABLE_H */
