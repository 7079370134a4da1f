// SPDX-License-Identifier: GPL-2.0
/* The table of server backends (add the GDB backend here). */
#include <string.h>

#include "backend.h"

extern const struct sdm_backend_ops sdm_backend_gdb;	/* backend-gdb.c */

static const struct sdm_backend_ops *const backends[] = {
	&sdm_backend_echo,
	&sdm_backend_gdb,
	NULL,
};

const struct sdm_backend_ops *sdm_backend_find(const char *name)
{
	for (int i = 0; backends[i]; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}
