/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests of crdbg's CRIU plugin share (test_gate.c: the dump's
 * gate; test_gate_release.c: the release of a restored tree).
 */
#ifndef CRDBG_TESTS_GATE_TEST_H
#define CRDBG_TESTS_GATE_TEST_H

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* The plugin, as libcrs carries it (usr/crs/gate/blob.S). */
extern const char crs_gate_plugin[], crs_gate_plugin_end[];

/* A child that only waits for signals. */
static inline pid_t idle_child(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

/* A FIFO DIR/NAME, held open read-write as crdbg holds the gate's. */
static inline int fifo(const char *dir, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (mkfifo(path, 0600))
		return -1;
	return open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
}

/* Who traces pid (TracerPid of /proc/pid/status), -1 if unknown. */
static inline pid_t tracer(pid_t pid)
{
	char path[64], line[256];
	int t = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &t) == 1)
			break;
	if (f)
		fclose(f);
	return t;
}

#endif /* CRDBG_TESTS_GATE_TEST_H */
