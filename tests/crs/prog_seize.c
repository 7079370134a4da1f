// SPDX-License-Identifier: GPL-2.0
/*
 * Stands in for criu in tests/crs/test_gate.c: runs crdbg's gate plugin
 * as CRIU does (preloaded, or dlopen()ed from $GATE_DLOPEN as --libdir
 * loads it), calls its init(DUMP), then PTRACE_SEIZE of each pid on the
 * command line in turn, and prints one line per step. Holds what it
 * seized until its stdin closes.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include <criu/criu-plugin.h>

int main(int argc, char **argv)
{
	const char *so = getenv("GATE_DLOPEN");
	cr_plugin_desc_t *desc;
	void *handle = RTLD_DEFAULT;	/* (void *)0 */
	char c;

	setvbuf(stdout, NULL, _IONBF, 0);
	printf("preload %s\n", getenv("LD_PRELOAD") ? "kept" : "dropped");
	if (so && !(handle = dlopen(so, RTLD_NOW | RTLD_LOCAL))) {
		printf("no plugin: %s\n", dlerror());
		return 1;
	}
	desc = dlsym(handle, "CR_PLUGIN_DESC");
	if (!desc) {
		printf("no plugin\n");
		return 1;
	}
	printf("init %d\n", desc->init(CR_PLUGIN_STAGE__DUMP));
	for (int i = 1; i < argc; i++) {
		long r = ptrace(PTRACE_SEIZE, atoi(argv[i]), NULL, NULL);

		printf("seize %s %s\n", argv[i], r ? strerror(errno) : "ok");
	}
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
