// SPDX-License-Identifier: GPL-2.0
/*
 * Where a preloaded library went: each rank prints
 *
 *   rank R lib=yes|no parent=COMM parent_lib=yes|no parent_env=yes|no
 *
 * lib: a file whose name ends in $PRELOAD_CHECK is mapped in the rank;
 * parent_*: in its parent (Open MPI's orted or mpirun, slurmstepd) the
 * same, and LD_PRELOAD in its environment. Then it waits until the file
 * $PRELOAD_GO exists, so that the test can look at the launcher.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool maps_have(pid_t pid, const char *name)
{
	char path[64], line[4096];
	size_t len = strlen(name);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	while (f && !found && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");

		found = n >= len && !strncmp(line + n - len, name, len);
	}
	if (f)
		fclose(f);
	return found;
}

static bool environ_has_preload(pid_t pid)
{
	char path[64], buf[65536];
	bool found = false;
	size_t n, i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (i = 0; i < n && !found; i += strlen(buf + i) + 1)
		found = !strncmp(buf + i, "LD_PRELOAD=", 11);
	return found;
}

static void comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f || !fgets(buf, (int)len, f))
		snprintf(buf, len, "?");
	buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	const char *lib = getenv("PRELOAD_CHECK"), *go = getenv("PRELOAD_GO");
	pid_t parent = getppid();
	char comm[64];
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	comm_of(parent, comm, sizeof(comm));
	lib = lib ? lib : "libcrdbg.so";
	printf("rank %d lib=%s parent=%s parent_lib=%s parent_env=%s\n", rank,
	       maps_have(getpid(), lib) ? "yes" : "no", comm,
	       maps_have(parent, lib) ? "yes" : "no", environ_has_preload(parent) ? "yes" : "no");
	fflush(stdout);
	while (go && access(go, F_OK))
		usleep(100000);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
