// SPDX-License-Identifier: GPL-2.0
/* The ranks' LD_PRELOAD through each launcher's own option (launcher-env.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher-env.h"

int dbg_launcher_preload_args(enum mpir_family f, const char *lib,
			      const char *ret_args[DBG_LAUNCHER_ENV_MAX_ARGS], char **ret_made)
{
	char *made = NULL;
	int n = 0;

	*ret_made = NULL;
	switch (f) {
	case MPIR_FAMILY_ORTE:		/* mpirun -x: the ranks, not orted */
		if (asprintf(&made, "LD_PRELOAD=%s", lib) < 0)
			return -ENOMEM;
		ret_args[n++] = "-x";
		break;
	case MPIR_FAMILY_SLURM:		/* srun execs the tasks; slurmstepd keeps its own */
		if (asprintf(&made, "--export=ALL,LD_PRELOAD=%s", lib) < 0)
			return -ENOMEM;
		break;
	case MPIR_FAMILY_HYDRA:		/* -genv: the ranks, not the proxies */
		made = strdup(lib);
		if (!made)
			return -ENOMEM;
		ret_args[n++] = "-genv";
		ret_args[n++] = "LD_PRELOAD";
		break;
	default:
		return 0;
	}
	ret_args[n++] = made;
	*ret_made = made;
	return n;
}
