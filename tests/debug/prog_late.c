// SPDX-License-Identifier: GPL-2.0
/*
 * Two copies (crdbg debug -n 2, CRDBG_RANK 0 and 1) for the console's
 * pending breakpoints and group stop. Rank 0 loads argv[1] with dlopen()
 * only after main started, so that a breakpoint on its late_work() is
 * pending until then (and stays so on rank 1, which never loads it), and
 * sends each result down the FIFO argv[2]; rank 1 reads them, blocked in
 * read() while rank 0 stands at the breakpoint: it cannot stop by
 * itself, as an MPI rank waiting for its partner.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROUNDS	3

int main(int argc, char **argv)
{
	const char *r = getenv("CRDBG_RANK");
	int rank = r ? atoi(r) : 0, fd, v;

	if (argc != 3) {
		fprintf(stderr, "usage: %s LIBRARY FIFO\n", argv[0]);
		return 2;
	}
	if (mkfifo(argv[2], 0600) && errno != EEXIST) {
		perror(argv[2]);
		return 1;
	}
	if (rank == 0) {
		void *lib = dlopen(argv[1], RTLD_NOW);
		int (*work)(int) = lib ? (int (*)(int))dlsym(lib, "late_work") : NULL;

		if (!work) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		fd = open(argv[2], O_WRONLY);
		for (int i = 0; fd >= 0 && i < ROUNDS; i++) {
			v = work(i);
			if (write(fd, &v, sizeof(v)) != sizeof(v))
				return 1;
		}
	} else {
		fd = open(argv[2], O_RDONLY);
		for (int i = 0; fd >= 0 && i < ROUNDS; i++) {
			if (read(fd, &v, sizeof(v)) != sizeof(v))
				return 1;
			printf("rank 1 got %d\n", v);
			fflush(stdout);
		}
	}
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	close(fd);
	printf("rank %d done\n", rank);
	return 0;
}
