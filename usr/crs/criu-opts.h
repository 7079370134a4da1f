/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CRIU options of a checkpoint: the ones a user may add
 * (crdbg checkpoint --criu-opt=--file-locks), and the ones crdbg adds
 * itself when it sees the tree needs them. Both are recorded in the
 * metadata ("criu-opt" lines) and given to criu dump and criu restore.
 */
#ifndef CRDBG_CRS_CRIU_OPTS_H
#define CRDBG_CRS_CRIU_OPTS_H

#include <stddef.h>
#include <sys/types.h>

#include "meta.h"

/* crs_criu_opt_check() is public, in <crdbg/crs.h>. */

/*
 * Add to m what the processes pids[0..nr) need: --file-locks when one
 * holds a file lock, --ghost-limit when an unlinked file it has open or
 * mapped is larger than CRIU's default 1 MiB ghost limit. Returns 0 or
 * -E2BIG.
 */
int crs_criu_auto_opts(const pid_t *pids, size_t nr, struct crs_meta *m);

#endif /* CRDBG_CRS_CRIU_OPTS_H */
