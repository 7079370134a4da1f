// SPDX-License-Identifier: GPL-2.0
/*
 * gdb's index cache in a directory private to this process.
 *
 * On every attach gdb reads the symbols of each shared library again, and
 * for a library with debug information (libc with libc6-dbg, the user's
 * own libraries) it builds the DWARF index again: a rank's gdb pays that
 * at each re-attach after a checkpoint or a restart. With the index cache
 * on, gdb writes the index once, keyed by build-id, and reads it back at
 * the next attach. The directory is made at the first driver that asks
 * for it, mode 0700 under $TMPDIR, shared by this process's gdbs (gdb
 * writes each entry to a temporary file and renames it), and removed with
 * what gdb put there when the last of those drivers is freed: nothing is
 * left in the user's home or grows from session to session.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mi-driver.h"

static char cache_dir[256];
static unsigned int cache_users;

const char *mi_drv_index_cache_get(void)
{
	if (!cache_users) {
		const char *tmp = getenv("TMPDIR");

		snprintf(cache_dir, sizeof(cache_dir), "%s/crdbg-gdb-index.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(cache_dir))
			return NULL;
	}
	cache_users++;
	return cache_dir;
}

void mi_drv_index_cache_put(void)
{
	struct dirent *e;
	DIR *dp;

	if (!cache_users || --cache_users)
		return;
	dp = opendir(cache_dir);
	while (dp && (e = readdir(dp)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(dp), e->d_name, 0);
	if (dp)
		closedir(dp);
	rmdir(cache_dir);
}
