// SPDX-License-Identifier: GPL-2.0
/* The TCP ports a tree listens on, across checkpoint and restart (listen-ports.h). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "listen-ports.h"
#include "store.h"

#define TCP_LISTEN	0x0A

struct inodes {
	uint64_t *ino;
	size_t nr;
};

static bool has(const struct inodes *s, uint64_t ino)
{
	for (size_t i = 0; i < s->nr; i++)
		if (s->ino[i] == ino)
			return true;
	return false;
}

/* The socket inodes of pid's fds, added to s. */
static int add_sockets(pid_t pid, struct inodes *s)
{
	char path[64], link[64], fd[400];
	struct dirent *d;
	unsigned long long ino;
	DIR *dp;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dp = opendir(path);
	if (!dp)
		return 0;
	while ((d = readdir(dp))) {
		ssize_t n;

		snprintf(fd, sizeof(fd), "%s/%.255s", path, d->d_name);
		n = readlink(fd, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (sscanf(link, "socket:[%llu]", &ino) != 1 || has(s, ino))
			continue;
		uint64_t *p = realloc(s->ino, (s->nr + 1) * sizeof(*p));

		if (!p) {
			closedir(dp);
			return -ENOMEM;
		}
		s->ino = p;
		s->ino[s->nr++] = ino;
	}
	closedir(dp);
	return 0;
}

/*
 * Each listening socket of a /proc net/tcp(6) table: fn(port, inode).
 * Lines: "sl local_address rem_address st ... inode": "0: 0100007F:1F90 00000000:0000 0A ...".
 */
static void each_listener(const char *table, void (*fn)(void *, unsigned int, uint64_t),
			  void *arg)
{
	char line[512], local[64];
	unsigned int st, port;
	unsigned long long ino;
	FILE *f = fopen(table, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon;

		if (sscanf(line, " %*d: %63s %*s %x %*s %*s %*s %*s %*s %llu", local, &st, &ino) != 3 ||
		    st != TCP_LISTEN)
			continue;
		colon = strrchr(local, ':');
		if (colon && sscanf(colon + 1, "%x", &port) == 1)
			fn(arg, port, ino);
	}
	fclose(f);
}

struct recording {
	const struct inodes *s;
	FILE *out;
	unsigned int nr;
};

static void record_one(void *arg, unsigned int port, uint64_t ino)
{
	struct recording *rc = arg;

	if (has(rc->s, ino) && rc->nr < CRS_LISTEN_PORTS_MAX) {
		fprintf(rc->out, "listen %u\n", port);
		rc->nr++;
	}
}

int crs_listen_ports_record(const struct crs_meta *m, const char *dir, char *err,
			    size_t errlen)
{
	struct inodes s = { 0 };
	char path[PATH_MAX + 32], table[64];
	struct recording rc = { .s = &s };
	int r = 0;

	for (size_t i = 0; !r && i < m->nr_procs; i++)
		if (!m->procs[i].zombie)
			r = add_sockets(m->procs[i].pid, &s);
	if (r || !s.nr) {
		free(s.ino);
		return r ? crs_fail(err, errlen, r, "out of memory") : 0;
	}
	snprintf(path, sizeof(path), "%s/" CRS_LISTEN_PORTS_NAME, dir);
	rc.out = fopen(path, "wxe");
	if (!rc.out) {
		r = -errno;
		free(s.ino);
		return crs_fail(err, errlen, r, "cannot write %s: %s", path, strerror(-r));
	}
	fprintf(rc.out, "crdbg-listen-ports 1\n");
	/* the tree's network namespace is its root's */
	snprintf(table, sizeof(table), "/proc/%d/net/tcp", (int)m->root);
	each_listener(table, record_one, &rc);
	snprintf(table, sizeof(table), "/proc/%d/net/tcp6", (int)m->root);
	each_listener(table, record_one, &rc);
	if (fclose(rc.out))
		r = crs_fail(err, errlen, -errno, "cannot write %s: %s", path, strerror(errno));
	free(s.ino);
	return r;
}

struct looking {
	unsigned int port;
	bool found;
};

static void look(void *arg, unsigned int port, uint64_t ino)
{
	struct looking *l = arg;

	(void)ino;
	l->found |= port == l->port;
}

static bool listened(unsigned int port)
{
	struct looking l = { .port = port };

	each_listener("/proc/net/tcp", look, &l);
	each_listener("/proc/net/tcp6", look, &l);
	return l.found;
}

int crs_listen_ports_wait(const char *dir, const char *handle, time_t deadline, char *err,
			  size_t errlen)
{
	struct timespec nap = { .tv_nsec = 50 * 1000 * 1000 };
	unsigned int ports[CRS_LISTEN_PORTS_MAX];
	char path[PATH_MAX + 32], *buf;
	size_t len, nr = 0;
	int r;

	snprintf(path, sizeof(path), "%s/" CRS_LISTEN_PORTS_NAME, dir);
	r = crs_read_file(path, 32 * (CRS_LISTEN_PORTS_MAX + 1), &buf, &len);
	if (r == -ENOENT)
		return 0;	/* the tree listened on none */
	if (r)
		return crs_fail(err, errlen, r, "cannot read %s: %s", path, strerror(-r));
	r = crs_listen_ports_parse(buf, len, ports, CRS_LISTEN_PORTS_MAX, &nr);
	free(buf);
	if (r)
		return crs_fail(err, errlen, r, "%s is malformed", path);
	for (size_t i = 0; i < nr; i++) {
		while (listened(ports[i]) && time(NULL) < deadline)
			nanosleep(&nap, NULL);
		if (listened(ports[i]))
			return crs_fail(err, errlen, -EADDRINUSE,
					"restart of %s refused, nothing was restored: TCP port %u, which the checkpointed tree listens on, is still listened on here %d s after its processes were ended",
					handle, ports[i], CRS_RESTART_PID_WAIT_S);
	}
	return 0;
}
