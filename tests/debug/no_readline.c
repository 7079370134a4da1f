// SPDX-License-Identifier: GPL-2.0
/*
 * Preloaded by test_console_jobs' terminal_without_readline: crdbg's
 * dlopen() of libreadline fails, as on a node without the library, while
 * every other dlopen (and gdb, which links readline) works as always.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

void *dlopen(const char *file, int flags)
{
	static void *(*next)(const char *, int);

	if (file && strstr(file, "libreadline"))
		return NULL;
	if (!next)
		*(void **)&next = dlsym(RTLD_NEXT, "dlopen");
	return next(file, flags);
}
