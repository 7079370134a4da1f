/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tree connected to its parent, which is not checkpointed with it: the
 * restart brings the tree back under another parent (a new part, a new
 * Slurm step), so such a connection would lead nowhere after it. The
 * case that matters is an MPI rank under `srun --mpi=pmix` (or pmi2): a
 * PMI client of its step's slurmstepd, over TCP on the node's loopback
 * or a unix socket. Refused before anything is frozen, in one line that
 * says how to run the job so that it can be checkpointed.
 */
#ifndef CRDBG_CRS_PARENT_LINK_H
#define CRDBG_CRS_PARENT_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * 0, or -EXDEV and one line when a process of pids (the tree of root)
 * holds a TCP connection, or (unless unix_outside_ok: CRIU's
 * --ext-unix-sk) a connected unix socket, whose other end the parent of
 * root holds. A parent whose descriptors we cannot read is taken as
 * holding none.
 */
int crs_parent_link_check(pid_t root, const pid_t *pids, size_t nr, bool unix_outside_ok,
			  char *err, size_t errlen);

#endif /* CRDBG_CRS_PARENT_LINK_H */
