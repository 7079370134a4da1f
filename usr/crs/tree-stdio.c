// SPDX-License-Identifier: GPL-2.0
/* A tree's stdio: recorded at checkpoint, replaced at restart (tree-stdio.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "meta.h"
#include "tree-stdio.h"

/* What the tree holds open: pipe ends (inode, read/write) and pty masters. */
struct tree_end {
	unsigned long ino;	/* pipe inode, or pts index of an open /dev/ptmx */
	bool ptmx;
	bool reads, writes;
};

struct tree_ends {
	struct tree_end *e;
	size_t nr;
};

static int fd_link(pid_t pid, const char *fd, char *buf, size_t len)
{
	char path[300];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid, fd);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* The fd's open flags and, for a pty master, its pts index ("tty-index"). */
static int fd_info(pid_t pid, const char *fd, int *flags, long *tty_index)
{
	char path[300], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)pid, fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	*flags = 0;
	*tty_index = -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "flags:", 6))
			*flags = (int)strtol(line + 6, NULL, 8);
		else if (!strncmp(line, "tty-index:", 10))
			*tty_index = strtol(line + 10, NULL, 10);
	}
	fclose(f);
	return 0;
}

static int add_end(struct tree_ends *t, const struct tree_end *e)
{
	struct tree_end *n = realloc(t->e, (t->nr + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	n[t->nr++] = *e;
	t->e = n;
	return 0;
}

static int scan_process(pid_t pid, struct tree_ends *t)
{
	char link[CRS_STDIO_LINK_MAX];
	struct dirent *de;
	char path[300];
	int r = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;	/* exited meanwhile, or a zombie */
	while (!r && (de = readdir(d))) {
		struct tree_end e = { 0 };
		long index;
		int flags;

		if (de->d_name[0] == '.' || fd_link(pid, de->d_name, link, sizeof(link)) ||
		    fd_info(pid, de->d_name, &flags, &index))
			continue;
		if (sscanf(link, "pipe:[%lu]", &e.ino) == 1) {
			e.reads = (flags & O_ACCMODE) != O_WRONLY;
			e.writes = (flags & O_ACCMODE) != O_RDONLY;
			r = add_end(t, &e);
		} else if (index >= 0) {
			e.ptmx = true;
			e.ino = (unsigned long)index;
			r = add_end(t, &e);
		}
	}
	closedir(d);
	return r;
}

/*
 * Has the endpoint its other end in the tree? A pipe: an end of the
 * other direction is open there. A pty slave: its master is open there.
 * Sockets are taken as outside (their peer is not in /proc).
 */
static bool inside(const struct tree_ends *t, const char *link, int flags)
{
	unsigned long ino;
	size_t i;

	if (sscanf(link, "pipe:[%lu]", &ino) == 1) {
		bool writer = (flags & O_ACCMODE) != O_RDONLY;

		for (i = 0; i < t->nr; i++)
			if (!t->e[i].ptmx && t->e[i].ino == ino &&
			    (writer ? t->e[i].reads : t->e[i].writes))
				return true;
		return false;
	}
	if (sscanf(link, "/dev/pts/%lu", &ino) == 1) {
		for (i = 0; i < t->nr; i++)
			if (t->e[i].ptmx && t->e[i].ino == ino)
				return true;
	}
	return false;
}

static int record_process(pid_t pid, const struct tree_ends *t, struct crs_meta *m)
{
	char fd[2] = "0", path[64];
	struct crs_stdio s;
	struct stat st;
	long index;
	int flags, r;

	for (; fd[0] <= '2'; fd[0]++) {
		memset(&s, 0, sizeof(s));
		if (fd_link(pid, fd, s.link, sizeof(s.link)) || fd_info(pid, fd, &flags, &index) ||
		    strchr(s.link, '\n'))
			continue;	/* closed, or a path no record can hold */
		s.pid = pid;
		s.fd = fd[0] - '0';
		s.inside = inside(t, s.link, flags);
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid, fd);
		if (!stat(path, &st)) {
			s.rdev = st.st_rdev;
			s.dev = st.st_dev;
		}
		r = crs_meta_add_stdio(m, &s);
		if (r)
			return r;
	}
	return 0;
}

int crs_stdio_record(const pid_t *pids, size_t nr, struct crs_meta *m)
{
	struct tree_ends t = { 0 };
	size_t i;
	int r = 0;

	for (i = 0; !r && i < nr; i++)
		r = scan_process(pids[i], &t);
	for (i = 0; !r && i < m->nr_procs; i++)
		if (!m->procs[i].zombie)
			r = record_process(m->procs[i].pid, &t, m);
	free(t.e);
	return r;
}

/*
 * CRIU's name of the endpoint when crdbg restart must stand in for it,
 * NULL when CRIU restores it as dumped: a pipe whose other end was
 * outside the tree (restored alone, nobody would read or write it), and
 * a FIFO or file that no longer exists (CRIU could not open it). CRIU
 * names a pipe "pipe:[ino]" and a file by its path without the '/'.
 */
static const char *replace_key(const struct crs_stdio *s)
{
	struct stat st;
	size_t len = strlen(s->link);

	if (s->inside)
		return NULL;
	if (!strncmp(s->link, "pipe:[", 6))
		return s->link;
	if (s->link[0] != '/' || !strncmp(s->link, "/dev/pts/", 9) ||
	    (len > 10 && !strcmp(s->link + len - 10, " (deleted)")))
		return NULL;	/* a pty, a socket, a ghost file CRIU carries */
	if (!lstat(s->link, &st) || errno != ENOENT)
		return NULL;
	return s->link + 1;
}

void crs_stdio_args_free(char **args, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(args[i]);
	free(args);
}

/* A pty slave on the tree's stdio whose master is outside the tree. */
static bool outside_pty(const struct crs_stdio *s)
{
	return !s->inside && !strncmp(s->link, "/dev/pts/", 9);
}

const struct crs_stdio *crs_stdio_terminal(const struct crs_meta *m)
{
	for (size_t i = 0; i < m->nr_stdio; i++)
		if (outside_pty(&m->stdio[i]))
			return &m->stdio[i];
	return NULL;
}

/*
 * A shell job's terminal is CRIU's --shell-job affair (restored onto
 * criu's own stdin, the tree moved into its session); a tree that holds
 * its session has it dumped as external and needs one given back.
 */
bool crs_stdio_needs_terminal(const struct crs_meta *m)
{
	return !m->shell_job && crs_stdio_terminal(m);
}

const struct crs_stdio *crs_restart_terminal(const struct crs_meta *m)
{
	return crs_stdio_needs_terminal(m) ? crs_stdio_terminal(m) : NULL;
}

/* CRIU's id of a tty: "tty[RDEV:DEV]" in hex (criu/tty.c, tty_d_name). */
static void tty_key(const struct crs_stdio *s, char *buf, size_t len)
{
	snprintf(buf, len, "tty[%" PRIx64 ":%" PRIx64 "]", s->rdev, s->dev);
}

static bool have_key(char **args, size_t nr, const char *key)
{
	for (size_t i = 1; i < nr; i += 2) {
		const char *c = strchr(args[i], ':');

		if (!strcmp(c && !strncmp(args[i], "fd[", 3) ? c + 1 : args[i], key))
			return true;
	}
	return false;
}

static int add_pair(char **args, size_t *nr, const char *opt, const char *val)
{
	args[*nr] = strdup(opt);
	args[*nr + 1] = strdup(val);
	if (!args[*nr] || !args[*nr + 1]) {
		free(args[*nr]);
		free(args[*nr + 1]);
		return -ENOMEM;
	}
	*nr += 2;
	return 0;
}

int crs_stdio_external_args(const struct crs_meta *m, char ***ret_args, size_t *ret_nr)
{
	char **args = calloc(2 * m->nr_stdio + 1, sizeof(*args));
	char key[64];
	size_t nr = 0;

	if (!args)
		return -ENOMEM;
	for (size_t i = 0; !m->shell_job && i < m->nr_stdio; i++) {
		if (!outside_pty(&m->stdio[i]))
			continue;
		tty_key(&m->stdio[i], key, sizeof(key));
		if (!have_key(args, nr, key) && add_pair(args, &nr, "--external", key)) {
			crs_stdio_args_free(args, nr);
			return -ENOMEM;
		}
	}
	*ret_args = args;
	*ret_nr = nr;
	return 0;
}

int crs_stdio_inherit_args(const struct crs_meta *m, int terminal_fd, char ***ret_args,
			   size_t *ret_nr)
{
	char **args = calloc(2 * m->nr_stdio + 1, sizeof(*args));
	char keybuf[64], val[96];
	size_t i, nr = 0;
	int fd;

	if (!args)
		return -ENOMEM;
	for (i = 0; i < m->nr_stdio; i++) {
		const struct crs_stdio *s = &m->stdio[i];
		const char *key = replace_key(s);

		fd = s->fd;
		if (!key && terminal_fd >= 0 && !m->shell_job && outside_pty(s)) {
			/* every terminal of the tree becomes the one given */
			tty_key(s, keybuf, sizeof(keybuf));
			key = keybuf;
			fd = terminal_fd;
		}
		/* Our own fd of that number stands in; it must be open. */
		if (!key || have_key(args, nr, key) || fcntl(fd, F_GETFD) < 0)
			continue;
		snprintf(val, sizeof(val), "fd[%d]:%s", fd, key);
		if (add_pair(args, &nr, "--inherit-fd", val)) {
			crs_stdio_args_free(args, nr);
			return -ENOMEM;
		}
	}
	*ret_args = args;
	*ret_nr = nr;
	return 0;
}
