// SPDX-License-Identifier: GPL-2.0
/*
 * A process no debugger can stop for a while: it waits in vfork() until
 * its child sees the file argv[1], so a gdb attaching to it waits for a
 * stop that cannot come (test debug.mpir_attach_timeout). Then it says
 * "vfork over" and ends.
 */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s GO_FILE\n", argv[0]);
		return 2;
	}
	if (vfork() == 0) {
		while (access(argv[1], F_OK))
			usleep(20000);
		_exit(0);
	}
	printf("vfork over\n");
	return 0;
}
