// SPDX-License-Identifier: GPL-2.0
/*
 * A restart's side of the tree's lineage (lineage.h): what the root had
 * outside its tree, finding or making the node's keeper, and asking it
 * to run criu and to report exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "lineage.h"
#include "lineage-wire.h"
#include "tree-stdio.h"

static const struct crs_proc *find_proc(const struct crs_meta *m, pid_t pid)
{
	for (size_t i = 0; i < m->nr_procs; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}

/* Is pid in the list "PID,PID" ("-" or NULL: none)? */
static bool listed(const char *list, pid_t pid)
{
	char *end;

	while (list && *list >= '0' && *list <= '9') {
		if (strtol(list, &end, 10) == pid)
			return true;
		list = *end == ',' ? end + 1 : end;
	}
	return false;
}

bool crs_lineage_want(const struct crs_meta *m, const char *node_roots,
		      struct crs_lineage_want *w, char *why, size_t whylen)
{
	const struct crs_proc *root = find_proc(m, m->root);

	memset(w, 0, sizeof(*w));
	if (!root) {
		crs_fail(why, whylen, 0, "the checkpoint records no root process");
		return false;
	}
	w->root = root->pid;
	w->ppid = root->ppid;
	w->sid = find_proc(m, root->sid) ? 0 : root->sid;
	w->pgid = find_proc(m, root->pgid) ? 0 : root->pgid;
	if (w->ppid <= 1) {
		crs_fail(why, whylen, 0, "its parent was pid %d", w->ppid);
		return false;
	}
	/* CRIU gives such a tree criu's terminal, which a new session lacks */
	if (w->sid && crs_stdio_terminal(m)) {
		crs_fail(why, whylen, 0, "its terminal belonged to a session led from outside");
		return false;
	}
	for (size_t i = 0; i < m->nr_procs; i++) {
		const struct crs_proc *p = &m->procs[i];

		if ((!find_proc(m, p->sid) && p->sid != root->sid) ||
		    (!find_proc(m, p->pgid) && p->pgid != root->pgid)) {
			crs_fail(why, whylen, 0,
				 "pid %d was in a group or session led from outside other than its root's",
				 p->pid);
			return false;
		}
	}
	/*
	 * A group led from outside that is neither the parent's nor the
	 * session's comes back only led by another part of the same job on
	 * this node (the node's first srun task): criu waits for it there.
	 */
	if (w->pgid && w->pgid != w->ppid && w->pgid != w->sid && !listed(node_roots, w->pgid)) {
		w->lost_pgid = w->pgid;
		w->pgid = 0;
	}
	return true;
}

static socklen_t keeper_addr(const struct crs_lineage_want *w, struct sockaddr_un *sa)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* abstract: the node's network namespace, gone with the keeper */
	n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "crdbg-lineage-%d-%d",
		     (int)w->ppid, (int)w->sid);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The keeper's first word on a connection it took, within 10 s. */
static bool said_hello(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct lin_hdr h;

	return poll(&p, 1, 10000) == 1 && recv(fd, &h, sizeof(h), 0) == sizeof(h) &&
	       h.type == LIN_HELLO;
}

/* Connected to the keeper (its pid the old parent's, our uid): fd, or -errno. */
static int connect_keeper(const struct crs_lineage_want *w)
{
	struct sockaddr_un sa;
	socklen_t len = keeper_addr(w, &sa), cl = sizeof(struct ucred);
	struct ucred cred;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), e;

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, len)) {
		e = -errno;
		close(fd);
		return e;
	}
	/* anyone may bind an abstract name: talk only to the real keeper */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) || cred.pid != w->ppid ||
	    cred.uid != geteuid()) {
		close(fd);
		return -EACCES;
	}
	/* taken, or left in the backlog of a keeper that was ending: connect again */
	if (!said_hello(fd)) {
		close(fd);
		return -ECONNREFUSED;
	}
	return fd;
}

/* fork() that gives the child pid want (clone3 set_tid), or -errno. */
static pid_t fork_with_pid(pid_t want)
{
	struct clone_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (uint64_t)(uintptr_t)&want,
		.set_tid_size = 1,
	};
	long r = syscall(SYS_clone3, &args, sizeof(args));

	return r < 0 ? -errno : (pid_t)r;
}

/* In the child made for the keeper: become it (never returns). */
static void become_keeper(const struct crs_lineage_want *w, int listen_fd, int ready_fd)
{
	if (w->sid == w->ppid && setsid() < 0)
		_exit(1);
	if (w->pgid == w->ppid && getpgid(0) != w->ppid && setpgid(0, 0))
		_exit(1);
	/* here: a peer's SO_PEERCRED names whoever listened, the old parent's pid */
	if (listen(listen_fd, 64))
		_exit(1);
	crs_lineage_keep(listen_fd, ready_fd);
}

/*
 * Make the keeper (and the session's stand-in first when the session is
 * another pid's): the name bound here first, so that a part racing us
 * finds it taken (and connects again until the keeper listens). 0,
 * -EADDRINUSE (another part is making it), or -errno with why.
 */
static int make_keeper(struct crs_lineage *l, const struct crs_lineage_want *w, char *why,
		       size_t whylen)
{
	bool session = w->sid && w->sid != w->ppid && w->sid != getsid(0);
	int lfd, ready[2], st;
	struct sockaddr_un sa;
	socklen_t len = keeper_addr(w, &sa);
	pid_t pid;
	char c;

	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return crs_fail(why, whylen, -errno, "cannot make a socket: %s", strerror(errno));
	if (bind(lfd, (struct sockaddr *)&sa, len)) {
		int e = -errno;

		close(lfd);
		return e == -EADDRINUSE ? e : crs_fail(why, whylen, e, "cannot listen: %s",
						       strerror(-e));
	}
	if (pipe2(ready, O_CLOEXEC)) {
		close(lfd);
		return crs_fail(why, whylen, -errno, "cannot make a pipe: %s", strerror(errno));
	}
	pid = fork_with_pid(session ? w->sid : w->ppid);
	if (pid == 0 && session) {
		/* the session's stand-in: lead it, hold the keeper, end with it */
		pid_t k;

		if (setsid() < 0)
			_exit(1);
		k = fork_with_pid(w->ppid);
		if (k == 0)
			become_keeper(w, lfd, ready[1]);
		if (k < 0)
			_exit(k == -EEXIST ? 3 : 2);
		/* hold none of the restart's files (its pipes would never end) */
		close_range(0, ~0U, 0);
		while (waitpid(k, &st, 0) < 0 && errno == EINTR)
			;
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
	}
	if (pid == 0)
		become_keeper(w, lfd, ready[1]);
	close(lfd);
	close(ready[1]);
	if (pid < 0) {
		close(ready[0]);
		return crs_fail(why, whylen, pid, "pid %d cannot be had: %s",
				(int)(session ? w->sid : w->ppid),
				pid == -EEXIST ? "in use" : strerror(-pid));
	}
	if (read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		waitpid(pid, &st, 0);
		return crs_fail(why, whylen, -ESRCH, "pid %d cannot be had%s", (int)w->ppid,
				WIFEXITED(st) && WEXITSTATUS(st) == 3 ? ": in use" : "");
	}
	close(ready[0]);
	l->made = pid;
	return 0;
}

int crs_lineage_open(struct crs_lineage *l, const struct crs_lineage_want *w, char *why,
		     size_t whylen)
{
	struct timespec nap = { .tv_nsec = 20 * 1000 * 1000 };
	int r = -EADDRINUSE;

	l->fd = -1;
	l->made = 0;
	l->nr_exits = 0;
	l->nr_watched = 0;
	/*
	 * A group that cannot come back: criu leads one of its own, as it
	 * did as our child, and CRIU moves the tree there (the keeper's
	 * group may be the old session's id, which CRIU refuses: a pid of
	 * its images).
	 */
	l->pgid = w->lost_pgid ? -1 : w->pgid;
	for (int tries = 0; tries < 100 && l->fd < 0; tries++) {
		l->fd = connect_keeper(w);
		if (l->fd >= 0)
			break;
		if (l->fd == -EACCES)
			return crs_fail(why, whylen, -EACCES,
					"crdbg-lineage-%d-%d is not a keeper of crdbg's", (int)w->ppid,
					(int)w->sid);
		if (!l->made) {
			r = make_keeper(l, w, why, whylen);
			if (!r)
				continue;	/* ours listens already: it said so */
			if (r != -EADDRINUSE)
				return r;
		}
		nanosleep(&nap, NULL);	/* another part makes it */
	}
	if (l->fd < 0) {
		crs_lineage_close(l, false);
		return crs_fail(why, whylen, -ETIMEDOUT, "its keeper did not answer");
	}
	return 0;
}

/* Append s with its NUL; false when it does not fit. */
static bool put_str(char *buf, size_t *off, const char *s)
{
	size_t n = strlen(s) + 1;

	if (*off + n > LIN_MSG_MAX)
		return false;
	memcpy(buf + *off, s, n);
	*off += n;
	return true;
}

/* Note that the keeper reports pid's exit to us; false if it already does. */
static bool add_watched(struct crs_lineage *l, pid_t pid)
{
	size_t n = sizeof(l->watched) / sizeof(l->watched[0]);

	for (size_t k = 0; k < l->nr_watched; k++)
		if (l->watched[k] == pid)
			return false;
	if (l->nr_watched == n)	/* oldest first: a pid watched long ago */
		memmove(l->watched, l->watched + 1, --l->nr_watched * sizeof(pid));
	l->watched[l->nr_watched++] = pid;
	return true;
}

/* Take one message from the keeper into the exits; 0, or -errno (gone). */
static int take_message(struct crs_lineage *l)
{
	struct lin_hdr h;
	ssize_t n = recv(l->fd, &h, sizeof(h), 0);

	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return -errno;
	if ((size_t)n == sizeof(h) && h.type == LIN_EXIT &&
	    l->nr_exits < sizeof(l->exits) / sizeof(l->exits[0])) {
		l->exits[l->nr_exits].pid = h.pid;
		l->exits[l->nr_exits].status = h.arg;
		l->nr_exits++;
	}
	return 0;
}

pid_t crs_lineage_spawn(struct crs_lineage *l, char *const argv[], char *const env[],
			const int *fds, const int *targets, size_t nr_fds)
{
	struct lin_hdr h = { .type = LIN_SPAWN, .arg = l->pgid, .nr_fds = (uint32_t)nr_fds };
	char *buf, cbuf[CMSG_SPACE(sizeof(int) * LIN_MAX_FDS)];
	struct iovec iov;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	size_t off = sizeof(h);
	bool ok = true;
	int r;

	if (nr_fds > LIN_MAX_FDS || nr_fds == 0 || l->fd < 0)
		return -EINVAL;
	buf = malloc(LIN_MSG_MAX);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &h, sizeof(h));
	for (size_t k = 0; k < nr_fds; k++) {
		int32_t t = targets[k];

		memcpy(buf + off, &t, sizeof(t));
		off += sizeof(t);
	}
	for (size_t k = 0; ok && argv[k]; k++)
		ok = put_str(buf, &off, argv[k]);
	ok = ok && put_str(buf, &off, "");
	for (size_t k = 0; ok && env && env[k]; k++)
		ok = put_str(buf, &off, env[k]);
	if (!ok) {
		free(buf);
		return -E2BIG;
	}
	iov.iov_base = buf;
	iov.iov_len = off;
	msg.msg_control = cbuf;
	msg.msg_controllen = CMSG_SPACE(sizeof(int) * nr_fds);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * nr_fds);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * nr_fds);
	r = sendmsg(l->fd, &msg, MSG_NOSIGNAL) == (ssize_t)off ? 0 : -errno;
	free(buf);
	if (r)
		return r;
	/* the answer comes before any exit of the child it names */
	for (;;) {
		ssize_t n = recv(l->fd, &h, sizeof(h), MSG_PEEK);

		if (n <= 0)
			return n == 0 ? -ECONNRESET : -errno;
		if (h.type == LIN_SPAWNED) {
			recv(l->fd, &h, sizeof(h), 0);
			if (h.pid > 0)
				add_watched(l, h.pid);	/* the keeper reports it unasked */
			return h.pid;
		}
		r = take_message(l);
		if (r)
			return r;
	}
}

static int take_exit(struct crs_lineage *l, pid_t pid, int *status)
{
	for (size_t k = 0; k < l->nr_exits; k++) {
		if (l->exits[k].pid != pid)
			continue;
		*status = l->exits[k].status;
		l->exits[k] = l->exits[--l->nr_exits];
		return 1;
	}
	return 0;
}

int crs_lineage_wait(struct crs_lineage *l, pid_t pid, int *status, int ms)
{
	struct lin_hdr h = { .type = LIN_WATCH, .pid = pid };
	struct pollfd p = { .fd = l->fd, .events = POLLIN };
	struct timespec t0, t;
	int r, left = ms;

	if (take_exit(l, pid, status))
		return 1;
	if (l->fd < 0)
		return -ENOTCONN;
	/* once per pid: the keeper reports an exit it already saw at once */
	if (add_watched(l, pid) && send(l->fd, &h, sizeof(h), MSG_NOSIGNAL) != sizeof(h))
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		r = poll(&p, 1, left);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0) {
			r = take_message(l);
			if (r)
				return r;
			if (take_exit(l, pid, status))
				return 1;
		}
		if (ms < 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms - (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return 0;
	}
}

void crs_lineage_close(struct crs_lineage *l, bool released)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	if (l->made > 0)
		while (waitpid(l->made, NULL, released ? 0 : WNOHANG) < 0 && errno == EINTR)
			;
	l->made = 0;
}
