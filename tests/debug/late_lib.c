// SPDX-License-Identifier: GPL-2.0
/*
 * The library prog_late loads with dlopen() once it runs; also built
 * stripped (late_lib_stripped.so), where late_square(), a static
 * function in no symbol table left, is a frame gdb cannot name.
 */
#include <unistd.h>

int late_work(int i);

static __attribute__((noinline)) int late_square(int i)
{
	return i * i + (getppid() > 0);
}

int late_work(int i)
{
	int v = late_square(i);

	return v;
}
