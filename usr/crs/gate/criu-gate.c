// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg's dump gate, a CRIU plugin: usr/crs/criu.c writes this shared
 * object into a private directory for each dump and runs `criu dump
 * --libdir DIR` with $CRDBG_GATE naming that directory. It replaces an
 * action script: CRIU runs a script in a new process (fork, exec of a
 * shell) at every action, the post-dump one while the tree is stopped;
 * a plugin's calls are plain function calls inside criu.
 *
 * init(DUMP) comes after CRIU's start-up and before it looks at any
 * task: it writes "ready" into DIR/status and waits on DIR/gate until
 * crdbg has frozen the tree and writes "go"; end of file instead fails
 * it and CRIU gives up before touching anything. exit(DUMP, ret) comes
 * once every image is written and closed, before CRIU lets go of the
 * tree: "dumped" (ret 0) or "failed". crdbg holds both FIFOs open
 * read-write, so no open here blocks while it lives.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criu/criu-plugin.h>

static int gate_open(const char *name, int flags)
{
	const char *dir = getenv("CRDBG_GATE");
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -1;
	return open(path, flags | O_CLOEXEC);
}

static int say(const char *what)
{
	ssize_t len = (ssize_t)strlen(what), n;
	int fd = gate_open("status", O_WRONLY | O_NONBLOCK);

	if (fd < 0)
		return -1;
	do
		n = write(fd, what, (size_t)len);
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == len ? 0 : -1;
}

static int gate_init(int stage)
{
	char go[3];
	ssize_t n;
	int fd;

	if (stage != CR_PLUGIN_STAGE__DUMP || !getenv("CRDBG_GATE"))
		return 0;
	/* without a writer (crdbg gone) the read sees end of file at once */
	fd = gate_open("gate", O_RDONLY | O_NONBLOCK);
	if (fd < 0 || fcntl(fd, F_SETFL, 0) || say("ready\n")) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	do
		n = read(fd, go, sizeof(go));
	while (n < 0 && errno == EINTR);
	close(fd);
	return n == 3 && !memcmp(go, "go\n", 3) ? 0 : -1;
}

static void gate_exit(int stage, int ret)
{
	if (stage == CR_PLUGIN_STAGE__DUMP && getenv("CRDBG_GATE"))
		say(ret ? "failed\n" : "dumped\n");
}

CR_PLUGIN_REGISTER("crdbg_gate", gate_init, gate_exit)
