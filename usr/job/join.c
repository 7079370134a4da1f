// SPDX-License-Identifier: GPL-2.0
/*
 * The door of a job restart for its other terminals, both sides: the
 * coordinator's socket (join.h) and `crdbg restart JOB --join N`,
 * which runs the parts of terminal N on its own terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "join.h"
#include "tty-relay.h"

#define JOIN_DIR	".joins"
#define LINE_TIMEOUT_S	10
#define MAX_JOIN_PARTS	64

/* The socket's address through the directory's fd: short whatever the store. */
static void door_addr(int dir_fd, const char *sock, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/%s", dir_fd, sock);
}

/* <root>/.joins: ours and 0700, made so if it is not there. */
static int open_private_dir(const char *root, bool create, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, JOIN_DIR);
	if (create && mkdir(path, 0700) && errno != EEXIST)
		return crs_fail(err, errlen, -errno, "cannot make %s: %s", path, strerror(errno));
	fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return crs_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0700) {
		close(fd);
		return crs_fail(err, errlen, -EPERM,
				"%s is not a directory of our own with mode 0700: not used", path);
	}
	return fd;
}

static bool peer_is_us(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	return !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) && cr.uid == geteuid();
}

int job_door_req_format(const struct job_door_req *r, char *buf, size_t len)
{
	int n = r->kind == JOB_DOOR_JOIN ? snprintf(buf, len, "join %u", r->group) :
					   snprintf(buf, len, "part %u %u", r->group, r->part);

	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

/* Decimal digits up to CRS_JOB_MAX_PARTS, no sign or leading zero; past them into *s. */
static bool door_number(const char **s, unsigned int *ret)
{
	unsigned int v = 0;
	const char *p = *s;

	while (*p >= '0' && *p <= '9' && v <= CRS_JOB_MAX_PARTS)
		v = v * 10 + (unsigned int)(*p++ - '0');
	if (p == *s || v > CRS_JOB_MAX_PARTS || (**s == '0' && p - *s > 1))
		return false;
	*s = p;
	*ret = v;
	return true;
}

int job_door_req_parse(const char *line, struct job_door_req *ret)
{
	struct job_door_req r = { 0 };
	const char *p = line + 5;

	if (!strncmp(line, "join ", 5))
		r.kind = JOB_DOOR_JOIN;
	else if (!strncmp(line, "part ", 5))
		r.kind = JOB_DOOR_PART;
	else
		return -EBADMSG;
	if (!door_number(&p, &r.group))
		return -EBADMSG;
	if (r.kind == JOB_DOOR_PART && (*p++ != ' ' || !door_number(&p, &r.part)))
		return -EBADMSG;
	if (*p)
		return -EBADMSG;
	*ret = r;
	return 0;
}

int job_door_say(int fd, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf) - 1)
		return -EMSGSIZE;
	buf[n++] = '\n';
	return send(fd, buf, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -EPIPE;
}

/* One line (without its newline) within LINE_TIMEOUT_S; false at its end. */
static bool read_line(int fd, char *line, size_t len)
{
	struct timeval tv = { .tv_sec = LINE_TIMEOUT_S };
	size_t n = 0;
	char c;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (n + 1 < len) {
		ssize_t r = recv(fd, &c, 1, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		if (c == '\n') {
			line[n] = 0;
			tv.tv_sec = 0;	/* the part's protocol has no deadline */
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			return true;
		}
		line[n++] = c;
	}
	return false;
}

int job_door_open(struct job_door *d, const char *root, const char *handle, char *err,
		  size_t errlen)
{
	struct sockaddr_un a;
	int fd, r;

	d->listen_fd = -1;
	snprintf(d->sock, sizeof(d->sock), "%s.sock", handle);
	d->dir_fd = open_private_dir(root, true, err, errlen);
	if (d->dir_fd < 0)
		return d->dir_fd;
	door_addr(d->dir_fd, d->sock, &a);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		r = crs_fail(err, errlen, -EBUSY,
			     "another crdbg restart of %s is already waiting for its terminals", handle);
		goto fail;
	}
	if (fd >= 0)
		close(fd);
	unlinkat(d->dir_fd, d->sock, 0);	/* left by a restart that died */
	d->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (d->listen_fd < 0 || bind(d->listen_fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(d->listen_fd, 16)) {
		r = crs_fail(err, errlen, -errno, "cannot listen on %s/%s/%s: %s", root, JOIN_DIR,
			     d->sock, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	job_door_close(d);
	return r;
}

int job_door_accept(struct job_door *d, char *line, size_t len)
{
	int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return -1;
	if (!peer_is_us(fd)) {
		job_door_say(fd, "refused: the restart runs as another user");
		close(fd);
		return -1;
	}
	if (!read_line(fd, line, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

void job_door_close(struct job_door *d)
{
	if (d->listen_fd >= 0) {
		close(d->listen_fd);
		unlinkat(d->dir_fd, d->sock, 0);
	}
	if (d->dir_fd >= 0)
		close(d->dir_fd);
	d->listen_fd = d->dir_fd = -1;
}

static bool same_terminal(const struct crs_job_part *a, const struct crs_job_part *b)
{
	return a->tty[0] && b->tty[0] && !strcmp(a->node, b->node) &&
	       a->tty_rdev == b->tty_rdev && a->tty_dev == b->tty_dev;
}

unsigned int job_terminal_groups(const struct crs_job *j, unsigned int *group)
{
	const struct crs_job_part *first = NULL;
	unsigned int groups = 0;
	size_t i, k;

	for (i = 0; i < j->nr_parts; i++) {
		const struct crs_job_part *p = &j->parts[i];

		group[i] = 0;
		if (!p->tty[0])
			continue;
		if (!first)
			first = p;
		if (same_terminal(p, first))
			continue;
		for (k = 0; k < i; k++)
			if (same_terminal(p, &j->parts[k]) && group[k]) {
				group[i] = group[k];
				break;
			}
		if (!group[i])
			group[i] = ++groups;
	}
	return groups;
}

/* --- the join's side ---------------------------------------------------- */

/* A connection to the door of handle's restart, its request sent, the answer in line. */
static int knock(const char *root, const char *handle, const char *request, char *line,
		 size_t len, char *err, size_t errlen)
{
	char sock[CRS_HANDLE_MAX + 8];
	struct sockaddr_un a;
	int dir, fd, r;

	dir = open_private_dir(root, false, err, errlen);
	if (dir == -EPERM)
		dir = -EACCES;	/* the directory is another user's */
	if (dir == -ENOENT || dir == -EACCES)
		return crs_fail(err, errlen, dir,
				dir == -ENOENT ? "no crdbg restart of %s is waiting for its terminals here" :
				"cannot reach the restart of %s: it runs as another user", handle);
	if (dir < 0)
		return dir;
	snprintf(sock, sizeof(sock), "%s.sock", handle);
	door_addr(dir, sock, &a);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		close(dir);
		if (r == -ENOENT || r == -ECONNREFUSED)
			return crs_fail(err, errlen, r,
					"no crdbg restart of %s is waiting for its terminals here", handle);
		return crs_fail(err, errlen, r, "cannot reach the restart of %s: %s", handle,
				strerror(-r));
	}
	close(dir);
	if (!peer_is_us(fd)) {
		close(fd);
		return crs_fail(err, errlen, -EPERM,
				"the restart of %s runs as another user: not joined", handle);
	}
	if (job_door_say(fd, "%s", request) || !read_line(fd, line, len)) {
		close(fd);
		return crs_fail(err, errlen, -EPIPE, "the restart of %s hung up", handle);
	}
	if (!strncmp(line, "refused", 7)) {
		close(fd);
		return crs_fail(err, errlen, -EPERM, "the restart of %s %s", handle, line);
	}
	return fd;
}

/* "parts I J ..." into idx. */
static int parse_parts(const char *line, unsigned int *idx, size_t max, size_t *n)
{
	const char *p = line + 5;
	char *end;

	*n = 0;
	if (strncmp(line, "parts ", 6))
		return -EBADMSG;
	while (*p == ' ' && *n < max) {
		unsigned long v = strtoul(p + 1, &end, 10);

		if (end == p + 1 || v >= CRS_JOB_MAX_PARTS)
			return -EBADMSG;
		idx[(*n)++] = (unsigned int)v;
		p = end;
	}
	return *p || !*n ? -EBADMSG : 0;
}

/*
 * "argv W<TAB>W..." into a NULL-ended argv of the part program at prog:
 * only a restart part (crdbg-part restart PART ...) is run, whoever asks.
 */
static char **split_argv(char *line, const char *prog)
{
	char **argv = calloc(40, sizeof(*argv)), *save = NULL, *w;
	size_t n = 0;

	if (!argv || strncmp(line, "argv ", 5)) {
		free(argv);
		return NULL;
	}
	for (w = strtok_r(line + 5, "\t", &save); w && n < 36; w = strtok_r(NULL, "\t", &save))
		argv[n++] = w;
	if (n < 3 || strcmp(argv[0], JOB_PART_PROGRAM) || strcmp(argv[1], "restart")) {
		free(argv);
		return NULL;
	}
	argv[0] = (char *)prog;
	argv[n++] = "--terminal-fd";
	argv[n++] = "3";
	return argv;
}

static pid_t start_part(int conn, char **argv, int slave)
{
	pid_t pid = fork();

	if (pid == 0) {
		dup2(conn, 0);
		dup2(conn, 1);
		if (slave == 3)
			fcntl(3, F_SETFD, 0);
		else
			dup2(slave, 3);
		signal(SIGPIPE, SIG_DFL);
		execv(argv[0], argv);
		dprintf(2, "crdbg: restart: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

struct joined {
	unsigned int index;
	int conn;
	pid_t pid;
	int status;
};

/* Each part that ended: its status to the coordinator, which then sees its end. */
static void wait_parts(struct joined *j, size_t n)
{
	for (size_t left = n; left;) {
		int st;
		pid_t p = wait(&st);

		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break;
		for (size_t i = 0; i < n; i++)
			if (j[i].pid == p) {
				struct job_part_msg m = { .step = JOB_STEP_EXIT, .exit_status = st };
				char line[64];

				j[i].status = st;
				if (job_part_msg_format(&m, line, sizeof(line)) > 0)
					job_door_say(j[i].conn, "%s", line);
				close(j[i].conn);
				j[i].conn = -1;
				left--;
			}
	}
}

static int join_parts(const char *root, const char *handle, unsigned int group,
		      const unsigned int *idx, size_t n, struct joined *j, int slave, char *err,
		      size_t errlen)
{
	char prog[PATH_MAX], req[64], line[4096];
	int r = job_part_program(prog, sizeof(prog));
	char **argv;

	if (r)
		return crs_fail(err, errlen, r, "cannot find crdbg's %s program: %s",
				JOB_PART_PROGRAM, strerror(-r));
	for (size_t i = 0; i < n; i++) {
		j[i] = (struct joined){ .index = idx[i], .conn = -1, .pid = -1, .status = -1 };
		job_door_req_format(&(struct job_door_req){ .kind = JOB_DOOR_PART, .group = group,
							     .part = idx[i] },
				    req, sizeof(req));
		j[i].conn = knock(root, handle, req, line, sizeof(line), err, errlen);
		if (j[i].conn < 0)
			return j[i].conn;
		argv = split_argv(line, prog);
		if (!argv)
			return crs_fail(err, errlen, -EBADMSG,
					"the restart of %s sent no restart of a part to run", handle);
		j[i].pid = start_part(j[i].conn, argv, slave);
		free(argv);
		if (j[i].pid < 0)
			return crs_fail(err, errlen, -errno, "cannot fork: %s", strerror(errno));
	}
	return 0;
}

int crs_job_join(const struct crs_job_opts *o, unsigned int group, int *ret_status, char *err,
		 size_t errlen)
{
	const char *root = crs_store_root(o->store);
	struct crs_tty_relay tty = CRS_TTY_RELAY_INIT;
	unsigned int idx[MAX_JOIN_PARTS];
	struct joined j[MAX_JOIN_PARTS];
	char req[64], line[1024], name[64] = "?";
	size_t n = 0, i;
	int fd, r;

	signal(SIGPIPE, SIG_IGN);
	job_door_req_format(&(struct job_door_req){ .kind = JOB_DOOR_JOIN, .group = group }, req,
			    sizeof(req));
	fd = knock(root, o->handle, req, line, sizeof(line), err, errlen);
	if (fd < 0)
		return fd;
	close(fd);
	if (parse_parts(line, idx, MAX_JOIN_PARTS, &n))
		return crs_fail(err, errlen, -EBADMSG, "the restart of %s answered \"%.80s\"",
				o->handle, line);
	r = crs_tty_relay_open(&tty, 0, 1, err, errlen);
	if (r)
		return r;
	crs_tty_relay_name(&tty, name, sizeof(name));
	if (o->log) {
		fprintf(o->log, "crdbg: restart: %s, terminal %u: part%s", o->handle, group,
			n > 1 ? "s" : "");
		for (i = 0; i < n; i++)
			fprintf(o->log, "%s%u", i ? ", " : " ", idx[i]);
		fprintf(o->log, " come%s back here on %s\n", n > 1 ? "" : "s", name);
		fflush(o->log);
	}
	for (i = 0; i < n; i++)
		j[i] = (struct joined){ .conn = -1, .pid = -1, .status = -1 };
	r = join_parts(root, o->handle, group, idx, n, j, tty.slave, err, errlen);
	crs_tty_relay_drop_slave(&tty);
	for (i = 0; r && i < n; i++) {
		/* the coordinator sees a part that never came: it calls the job off */
		if (j[i].conn >= 0 && j[i].pid < 0) {
			close(j[i].conn);
			j[i].conn = -1;
		}
	}
	wait_parts(j, n);
	crs_tty_relay_finish(&tty);
	*ret_status = 0;
	for (i = 0; i < n && !*ret_status; i++)
		*ret_status = j[i].pid < 0 ? 1 << 8 : j[i].status;
	return r;
}
