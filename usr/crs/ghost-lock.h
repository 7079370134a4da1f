/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CRIU restores a file that was deleted while still open (a "ghost") by
 * creating PATH.cr.ID.ghost beside its old path, opening it and removing
 * it, with IDs numbered from 1 in every checkpoint. Two restores at once
 * on one file system, of trees that held the same deleted path (Open
 * MPI's /dev/shm/open_mpi.0000 in the parts of one job on nodes that
 * share /dev/shm, or two parts on one node), take each other's ghost:
 * "Can't create ghost regfile: File exists", or a link that fails.
 *
 * So the restores of checkpoints that carry ghosts take turns on the
 * host, each from CRIU's go until its tree is held: by then every ghost
 * was opened and removed. Restores without ghosts never wait.
 */
#ifndef CRDBG_CRS_GHOST_LOCK_H
#define CRDBG_CRS_GHOST_LOCK_H

#include <stddef.h>

/*
 * Where the turn is taken: a root-owned directory of the host (the
 * service's), never one a user can write.
 */
#define CRS_GHOST_LOCK_DIR	"/run/crdbg"
#define CRS_GHOST_LOCK_FILE	"restore-ghosts.lock"
/* How long a restore waits for the one before it. */
#define CRS_GHOST_LOCK_WAIT_S	300

/*
 * The checkpoint in dir carries ghost files: wait for the turn and hold
 * it, *fd the lock (-1 when dir has none). 0, or -errno with err.
 */
int crs_ghost_lock(const char *dir, int *fd, char *err, size_t errlen);

/* Give the turn back (nothing when *fd is -1). */
void crs_ghost_unlock(int *fd);

#endif /* CRDBG_CRS_GHOST_LOCK_H */
