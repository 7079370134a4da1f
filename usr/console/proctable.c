// SPDX-License-Identifier: GPL-2.0
/*
 * MPIR_proctable, read from the launcher's memory through /proc/PID/mem
 * (proctable.h) rather than three gdb evaluations an entry: the
 * descriptors in one read, then each host and executable string. A
 * launcher gives many ranks the same string (one per host, one per
 * program), and each distinct pointer is read once. The kernel lets us
 * read it by the ptrace rules, as it lets our gdb, whose parent we are,
 * trace it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proctable.h"

/* MPIR_PROCDESC on LP64: char *host_name, char *executable_name, int pid. */
struct procdesc {
	uint64_t host;
	uint64_t exe;
	int32_t pid;
	int32_t pad;
};

_Static_assert(sizeof(struct procdesc) == 24, "MPIR_PROCDESC is 24 bytes on LP64");

/* A string read once: its address and where it was copied to. */
struct seen {
	uint64_t addr;
	const char *copy;
};

struct strings {
	struct seen *slot;
	size_t mask;		/* slots - 1, a power of two */
};

static int strings_init(struct strings *s, long n)
{
	size_t slots = 64;

	/* twice the entries' strings at most, so probes stay short */
	while (slots < (size_t)n * 4)
		slots <<= 1;
	s->slot = calloc(slots, sizeof(*s->slot));
	s->mask = slots - 1;
	return s->slot ? 0 : -ENOMEM;
}

static struct seen *strings_find(struct strings *s, uint64_t addr)
{
	size_t i = (size_t)((addr >> 3) * 0x9e3779b97f4a7c15ull) & s->mask;

	while (s->slot[i].addr && s->slot[i].addr != addr)
		i = (i + 1) & s->mask;
	return &s->slot[i];
}

/* The NUL-terminated string at addr into buf (cut at size - 1): 0 or -errno. */
static int read_string(int fd, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	while (got + 1 < size) {
		/* up to the end of the page, so that no read crosses into one unmapped */
		size_t page_left = 4096 - (size_t)((addr + got) & 4095);
		size_t want = size - 1 - got < page_left ? size - 1 - got : page_left;
		ssize_t r = pread(fd, buf + got, want, (off_t)(addr + got));
		char *nul;

		if (r <= 0)
			return r < 0 ? -errno : -EFAULT;
		nul = memchr(buf + got, 0, (size_t)r);
		if (nul)
			return 0;
		got += (size_t)r;
	}
	buf[size - 1] = 0;
	return 0;
}

static int read_all(int fd, void *buf, size_t len, uint64_t addr)
{
	for (size_t got = 0; got < len;) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(addr + got));

		if (r <= 0)
			return r < 0 ? -errno : -EFAULT;
		got += (size_t)r;
	}
	return 0;
}

/* The string at addr into out, read or copied from the entry that read it first. */
static int entry_string(int fd, struct strings *s, uint64_t addr, char *out, size_t size)
{
	struct seen *seen;
	int r;

	if (!addr)
		return -EFAULT;
	seen = strings_find(s, addr);
	if (seen->addr) {
		snprintf(out, size, "%s", seen->copy);
		return 0;
	}
	r = read_string(fd, addr, out, size);
	if (!r)
		*seen = (struct seen){ .addr = addr, .copy = out };
	return r;
}

int mpir_proctable_read(pid_t pid, uint64_t addr, long n, struct dbg_proc *procs, char *err,
			size_t errlen)
{
	struct strings s = { 0 };
	struct procdesc *d = NULL;
	char path[64];
	int fd, r;

	if (n <= 0 || n > MPIR_PROCTABLE_MAX || !addr) {
		snprintf(err, errlen, "MPIR_proctable_size is %ld with the table at %#llx: no job",
			 n, (unsigned long long)addr);
		return -ERANGE;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot read the launcher's memory (%s): %s", path,
			 strerror(-r));
		return r;
	}
	d = malloc((size_t)n * sizeof(*d));
	r = d ? strings_init(&s, n) : -ENOMEM;
	if (!r) {
		r = read_all(fd, d, (size_t)n * sizeof(*d), addr);
		if (r)
			snprintf(err, errlen, "cannot read MPIR_proctable (%ld entries at %#llx): %s",
				 n, (unsigned long long)addr, strerror(-r));
	}
	for (long i = 0; !r && i < n; i++) {
		procs[i].pid = d[i].pid;
		r = entry_string(fd, &s, d[i].host, procs[i].host, sizeof(procs[i].host));
		if (!r)
			r = entry_string(fd, &s, d[i].exe, procs[i].exe, sizeof(procs[i].exe));
		if (!r && procs[i].pid <= 0)
			r = -EBADMSG;
		if (r)
			snprintf(err, errlen, "MPIR_proctable entry %ld is unreadable (pid %d): %s", i,
				 (int)d[i].pid, strerror(-r));
	}
	free(s.slot);
	free(d);
	close(fd);
	return r;
}
