// SPDX-License-Identifier: GPL-2.0
/* The TCP ports a tree listens on, across checkpoint and restart (listen-ports.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "listen-ports.h"
#include "sock-inodes.h"
#include "store.h"

#define TCP_LISTEN	0x0A
#define TCP_TIME_WAIT	0x06

/* One socket of a /proc net/tcp(6) table. */
struct sock_line {
	int family;		/* AF_INET or AF_INET6 */
	unsigned char addr[16];	/* its local address, network order */
	unsigned int port, state;
	uint64_t ino;
};

/*
 * Each socket of a /proc net/tcp(6) table: fn(arg, socket). Lines: "sl
 * local_address rem_address st ... inode", "0: 0100007F:1F90 00000000:0000
 * 0A ...": the address as the kernel's 32-bit words in hex, each in host
 * order.
 */
static void each_socket(const char *table, void (*fn)(void *, const struct sock_line *),
			void *arg)
{
	char line[512], local[64];
	unsigned long long ino;
	FILE *f = fopen(table, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct sock_line sl = { 0 };
		size_t words;
		char *colon;

		if (sscanf(line, " %*d: %63s %*s %x %*s %*s %*s %*s %*s %llu", local, &sl.state,
			   &ino) != 3)
			continue;
		colon = strrchr(local, ':');
		if (!colon || sscanf(colon + 1, "%x", &sl.port) != 1)
			continue;
		*colon = '\0';
		words = strlen(local) / 8;
		if ((words != 1 && words != 4) || strlen(local) % 8)
			continue;
		sl.family = words == 1 ? AF_INET : AF_INET6;
		for (size_t w = 0; w < words; w++) {
			char hex[9];
			uint32_t v;

			memcpy(hex, local + 8 * w, 8);
			hex[8] = '\0';
			v = (uint32_t)strtoul(hex, NULL, 16);
			memcpy(sl.addr + 4 * w, &v, 4);
		}
		sl.ino = ino;
		fn(arg, &sl);
	}
	fclose(f);
}

/* An address of the node's own, which a restart elsewhere would lack. */
static bool node_address(const struct sock_line *sl)
{
	static const unsigned char zero[16], mapped[12] = { [10] = 0xff, [11] = 0xff };
	const unsigned char *a = sl->addr;

	if (sl->family == AF_INET)
		return memcmp(a, zero, 4) && a[0] != 127;
	if (!memcmp(a, mapped, 12))	/* ::ffff:a.b.c.d */
		return memcmp(a + 12, zero, 4) && a[12] != 127;
	return memcmp(a, zero, 16) &&				/* :: */
	       (memcmp(a, zero, 15) || a[15] != 1) &&		/* ::1 */
	       !(a[0] == 0xfe && (a[1] & 0xc0) == 0x80);	/* fe80::/10 */
}

struct recording {
	const struct crs_sock_inodes *s;
	bool addrs;		/* the tree is in our network namespace */
	unsigned int nr;
	char seen[CRS_LISTEN_ADDRS_MAX][CRS_LISTEN_ADDR_LEN];
	size_t nr_seen;
	FILE *out;
};

/*
 * Whether the listener at si has SO_REUSEADDR: 1 or 0, -1 when we cannot
 * tell (no pidfd_getfd() on it: another user's process under Yama). A
 * copy of the descriptor, the tree's own untouched.
 */
static int reuseaddr_of(const struct crs_sock_inode *si)
{
	int pidfd = (int)syscall(SYS_pidfd_open, si->pid, 0), fd, on = 0;
	socklen_t len = sizeof(on);

	if (pidfd < 0)
		return -1;
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, si->fd, 0);
	close(pidfd);
	if (fd < 0)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, &len))
		on = -1;
	close(fd);
	return on > 0 ? 1 : on;
}

static void record_one(void *arg, const struct sock_line *sl)
{
	struct recording *rc = arg;
	char text[CRS_LISTEN_ADDR_LEN];
	const void *a = sl->addr;
	int af = sl->family;

	const struct crs_sock_inode *si = crs_sock_inodes_find(rc->s, sl->ino);

	if (!si)
		return;
	if (sl->state == TCP_LISTEN && rc->nr < CRS_LISTEN_PORTS_MAX) {
		fprintf(rc->out, "listen %u%s\n", sl->port,
			reuseaddr_of(si) == 0 ? " " CRS_LISTEN_NO_REUSEADDR : "");
		rc->nr++;
	}
	if (!rc->addrs || !node_address(sl) || rc->nr_seen >= CRS_LISTEN_ADDRS_MAX)
		return;
	if (af == AF_INET6 && !memcmp(sl->addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12)) {
		af = AF_INET;	/* an IPv4 peer of a dual-stack socket */
		a = sl->addr + 12;
	}
	if (!inet_ntop(af, a, text, sizeof(text)))
		return;
	for (size_t i = 0; i < rc->nr_seen; i++)
		if (!strcmp(rc->seen[i], text))
			return;
	memcpy(rc->seen[rc->nr_seen++], text, sizeof(text));
	fprintf(rc->out, "addr %s\n", text);
}

/* Whether pid's network namespace is ours. */
static bool our_netns(pid_t pid)
{
	char path[64], theirs[64] = "", ours[64] = "";
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	n = readlink(path, theirs, sizeof(theirs) - 1);
	if (n <= 0 || readlink("/proc/self/ns/net", ours, sizeof(ours) - 1) != n)
		return false;
	return !memcmp(theirs, ours, (size_t)n);
}

int crs_listen_ports_record(const struct crs_meta *m, const char *dir, char *err,
			    size_t errlen)
{
	struct crs_sock_inodes s = { 0 };
	char path[PATH_MAX + 32], table[64];
	struct recording rc = { .s = &s };
	int r = 0;

	for (size_t i = 0; !r && i < m->nr_procs; i++)
		if (!m->procs[i].zombie)
			r = crs_sock_inodes_add(&s, m->procs[i].pid);
	if (r || !s.nr) {
		crs_sock_inodes_free(&s);
		return r ? crs_fail(err, errlen, r, "out of memory") : 0;
	}
	snprintf(path, sizeof(path), "%s/" CRS_LISTEN_PORTS_NAME, dir);
	rc.out = fopen(path, "wxe");
	if (!rc.out) {
		r = -errno;
		crs_sock_inodes_free(&s);
		return crs_fail(err, errlen, r, "cannot write %s: %s", path, strerror(-r));
	}
	fprintf(rc.out, "crdbg-listen-ports 3\n");
	/* the tree's network namespace is its root's; one of its own comes back with it */
	rc.addrs = our_netns(m->root);
	snprintf(table, sizeof(table), "/proc/%d/net/tcp", (int)m->root);
	each_socket(table, record_one, &rc);
	snprintf(table, sizeof(table), "/proc/%d/net/tcp6", (int)m->root);
	each_socket(table, record_one, &rc);
	if (fclose(rc.out))
		r = crs_fail(err, errlen, -errno, "cannot write %s: %s", path, strerror(errno));
	crs_sock_inodes_free(&s);
	return r;
}

struct looking {
	unsigned int port;
	bool time_wait;		/* a TIME_WAIT on it counts */
	bool found;
};

static void look(void *arg, const struct sock_line *sl)
{
	struct looking *l = arg;

	l->found |= sl->port == l->port &&
		    (sl->state == TCP_LISTEN || (l->time_wait && sl->state == TCP_TIME_WAIT));
}

/*
 * A socket of this namespace listens on port, or, for a listener that
 * comes back without SO_REUSEADDR (Open MPI's TCP BTL), a closed
 * connection holds it in TIME_WAIT: bind() would fail either way.
 */
static bool taken(unsigned int port, bool no_reuseaddr)
{
	struct looking l = { .port = port, .time_wait = no_reuseaddr };

	each_socket("/proc/net/tcp", look, &l);
	each_socket("/proc/net/tcp6", look, &l);
	return l.found;
}

/* The record of the checkpoint in dir into *rec (none: empty). */
static int load_record(const char *dir, struct crs_listen_record *rec, char *err, size_t errlen)
{
	char path[PATH_MAX + 32], *buf;
	size_t len;
	int r;

	memset(rec, 0, sizeof(*rec));
	snprintf(path, sizeof(path), "%s/" CRS_LISTEN_PORTS_NAME, dir);
	r = crs_read_file(path, 64 * (CRS_LISTEN_PORTS_MAX + CRS_LISTEN_ADDRS_MAX + 1), &buf, &len);
	if (r == -ENOENT)
		return 0;	/* the tree had no TCP socket */
	if (r)
		return crs_fail(err, errlen, r, "cannot read %s: %s", path, strerror(-r));
	r = crs_listen_ports_parse(buf, len, rec);
	free(buf);
	return r ? crs_fail(err, errlen, r, "%s is malformed", path) : 0;
}

int crs_listen_ports_wait(const char *dir, const char *handle, time_t deadline, char *err,
			  size_t errlen)
{
	struct timespec nap = { .tv_nsec = 50 * 1000 * 1000 };
	static struct crs_listen_record rec;
	int r = load_record(dir, &rec, err, errlen);

	if (r)
		return r;
	for (size_t i = 0; i < rec.nr_ports; i++) {
		bool tw = rec.no_reuseaddr[i];

		while (taken(rec.ports[i], tw) && time(NULL) < deadline)
			nanosleep(&nap, NULL);
		if (taken(rec.ports[i], tw))
			return crs_fail(err, errlen, -EADDRINUSE,
					"restart of %s refused, nothing was restored: TCP port %u, which the checkpointed tree listens on%s, is still %s here %d s after its processes were ended",
					handle, rec.ports[i], tw ? " without SO_REUSEADDR" : "",
					tw ? "listened on or held by a closed connection" : "listened on",
					CRS_RESTART_PORT_WAIT_S);
	}
	return 0;
}

/* Whether this host has addr: a socket can be bound to it. */
static bool have_address(const char *addr)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	bool v6 = strchr(addr, ':');
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return true;	/* cannot tell: CRIU will */
	if (v6)
		ok = inet_pton(AF_INET6, addr, &a6.sin6_addr) == 1 &&
		     (!bind(fd, (struct sockaddr *)&a6, sizeof(a6)) || errno != EADDRNOTAVAIL);
	else
		ok = inet_pton(AF_INET, addr, &a4.sin_addr) == 1 &&
		     (!bind(fd, (struct sockaddr *)&a4, sizeof(a4)) || errno != EADDRNOTAVAIL);
	close(fd);
	return ok;
}

int crs_listen_addrs_check(const char *dir, const char *handle, char *err, size_t errlen)
{
	static struct crs_listen_record rec;
	int r = load_record(dir, &rec, err, errlen);

	for (size_t i = 0; !r && i < rec.nr_addrs; i++)
		if (!have_address(rec.addrs[i]))
			r = crs_fail(err, errlen, -EADDRNOTAVAIL,
				     "restart of %s refused, nothing was killed or restored: its TCP sockets are bound to %s, which is not an address of this host (it was checkpointed on another node, or the address changed): restart it where that address is",
				     handle, rec.addrs[i]);
	return r;
}
