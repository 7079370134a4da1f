// SPDX-License-Identifier: GPL-2.0
/*
 * The lineage keeper (lineage.h): a process with the restored roots' old
 * parent pid, in their old session, that runs criu for every restart of
 * its node that asks (each root then becomes its child), reaps what comes
 * back to it, and reports each exit to whoever spawned or watches it.
 * One poll loop: the listening socket, SIGCHLD through a signalfd, one
 * SOCK_SEQPACKET connection per restart (lineage-wire.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lineage.h"
#include "lineage-wire.h"

#define MAX_CLIENTS	64
#define MAX_OWNED	32
#define MAX_UNCLAIMED	256
/* A keeper nobody connects to ends after this. */
#define IDLE_S		60

struct client {
	int fd;
	pid_t owned[MAX_OWNED];	/* spawned for it, or watched: exits go to it */
	size_t nr_owned;
	pid_t spawned[MAX_OWNED];	/* killed if it hangs up before they end */
	size_t nr_spawned;
};

static struct client clients[MAX_CLIENTS];
static size_t nr_clients;
static struct { pid_t pid; int status; } unclaimed[MAX_UNCLAIMED];
static size_t nr_unclaimed;

static void send_hdr(int fd, uint32_t type, pid_t pid, int arg)
{
	struct lin_hdr h = { .type = type, .pid = pid, .arg = arg };

	send(fd, &h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static bool take_pid(pid_t *pids, size_t *nr, pid_t pid)
{
	for (size_t k = 0; k < *nr; k++) {
		if (pids[k] != pid)
			continue;
		pids[k] = pids[--*nr];
		return true;
	}
	return false;
}

static void add_pid(pid_t *pids, size_t *nr, pid_t pid)
{
	if (*nr < MAX_OWNED)
		pids[(*nr)++] = pid;
}

/* pid ended: tell its owner, or keep it for a WATCH to come. */
static void deliver(pid_t pid, int status)
{
	for (size_t c = 0; c < nr_clients; c++) {
		if (!take_pid(clients[c].owned, &clients[c].nr_owned, pid))
			continue;
		take_pid(clients[c].spawned, &clients[c].nr_spawned, pid);
		send_hdr(clients[c].fd, LIN_EXIT, pid, status);
		return;
	}
	if (nr_unclaimed == MAX_UNCLAIMED)	/* an orphan long ago: forget it */
		memmove(unclaimed, unclaimed + 1, --nr_unclaimed * sizeof(unclaimed[0]));
	unclaimed[nr_unclaimed].pid = pid;
	unclaimed[nr_unclaimed].status = status;
	nr_unclaimed++;
}

static void watch(struct client *c, pid_t pid)
{
	for (size_t k = 0; k < nr_unclaimed; k++) {
		if (unclaimed[k].pid != pid)
			continue;
		send_hdr(c->fd, LIN_EXIT, pid, unclaimed[k].status);
		unclaimed[k] = unclaimed[--nr_unclaimed];
		return;
	}
	add_pid(c->owned, &c->nr_owned, pid);
}

static void default_signals(void)
{
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* In the child: join the group (waiting for it to exist), place the fds, exec. */
static void run_child(const struct lin_spawn *s, const int *fds)
{
	struct timespec nap = { .tv_nsec = 10 * 1000 * 1000 };
	time_t deadline = time(NULL) + CRS_LINEAGE_GROUP_WAIT_S;
	int high[LIN_MAX_FDS], base = 3;

	default_signals();
	if (s->pgid < 0 && setpgid(0, 0))
		_exit(CRS_LINEAGE_NO_GROUP);
	while (s->pgid > 0 && getpgid(0) != s->pgid && setpgid(0, s->pgid)) {
		/* EPERM: no such group in our session yet (its leader not restored) */
		if (errno != EPERM || time(NULL) > deadline)
			_exit(CRS_LINEAGE_NO_GROUP);
		nanosleep(&nap, NULL);
	}
	/* above every target and every fd received first: no dup2 clobbers one */
	for (size_t k = 0; k < s->nr_fds; k++) {
		base = s->targets[k] + 1 > base ? s->targets[k] + 1 : base;
		base = fds[k] + 1 > base ? fds[k] + 1 : base;
	}
	for (size_t k = 0; k < s->nr_fds; k++) {
		high[k] = fcntl(fds[k], F_DUPFD, base);
		if (high[k] < 0)
			_exit(126);
	}
	for (size_t k = 0; k < s->nr_fds; k++) {
		if (dup2(high[k], s->targets[k]) < 0)
			_exit(126);
		close(high[k]);
	}
	for (size_t k = 0; s->env[k]; k++)
		putenv(s->env[k]);
	execv(s->argv[0], s->argv);
	_exit(127);
}

static void spawn(struct client *c, char *msg, size_t len, int *fds, size_t nr_fds)
{
	struct lin_spawn s;
	pid_t pid;

	if (lin_decode_spawn(msg, len, &s) || s.nr_fds != nr_fds) {
		send_hdr(c->fd, LIN_SPAWNED, -EBADMSG, 0);
		return;
	}
	pid = fork();
	if (pid == 0)
		run_child(&s, fds);
	if (pid < 0) {
		send_hdr(c->fd, LIN_SPAWNED, -errno, 0);
		return;
	}
	add_pid(c->owned, &c->nr_owned, pid);
	add_pid(c->spawned, &c->nr_spawned, pid);
	send_hdr(c->fd, LIN_SPAWNED, pid, 0);
}

static void drop_client(size_t i)
{
	struct client *c = &clients[i];

	/* as PR_SET_PDEATHSIG: criu does not outlive the restart that ran it */
	for (size_t k = 0; k < c->nr_spawned; k++)
		kill(c->spawned[k], SIGKILL);
	close(c->fd);
	clients[i] = clients[--nr_clients];
}

/* One message of client i; false when it hung up or spoke out of turn. */
static bool serve(size_t i, char *buf)
{
	char cbuf[CMSG_SPACE(sizeof(int) * LIN_MAX_FDS)];
	struct iovec iov = { .iov_base = buf, .iov_len = LIN_MSG_MAX };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	int fds[LIN_MAX_FDS];
	size_t nr_fds = 0;
	struct lin_hdr h;
	struct cmsghdr *cm;
	ssize_t n = recvmsg(clients[i].fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	bool ok = n >= (ssize_t)sizeof(h) && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t j = 0; j < k; j++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + j * sizeof(int), sizeof(int));
			if (nr_fds < LIN_MAX_FDS)
				fds[nr_fds++] = fd;
			else
				close(fd);
		}
	}
	if (ok) {
		memcpy(&h, buf, sizeof(h));
		if (h.type == LIN_SPAWN)
			spawn(&clients[i], buf, (size_t)n, fds, nr_fds);
		else if (h.type == LIN_WATCH && n == sizeof(h) && h.pid > 0)
			watch(&clients[i], h.pid);
		else
			ok = false;
	}
	for (size_t k = 0; k < nr_fds; k++)
		close(fds[k]);
	return ok;
}

static void accept_client(int lfd)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	/* it asks us to run programs as root: only our own uid may */
	if (nr_clients == MAX_CLIENTS || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) ||
	    cred.uid != geteuid()) {
		close(fd);
		return;
	}
	memset(&clients[nr_clients], 0, sizeof(clients[0]));
	clients[nr_clients++].fd = fd;
	send_hdr(fd, LIN_HELLO, getpid(), 0);
}

static void reap(int sfd)
{
	struct signalfd_siginfo si;
	pid_t pid;
	int st;

	while (read(sfd, &si, sizeof(si)) == sizeof(si))
		;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		deliver(pid, st);
}

static bool has_children(void)
{
	siginfo_t si = { .si_pid = 0 };

	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}

/* Only the two fds we keep stay open; stdio is /dev/null. */
static void close_inherited(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a, null = open("/dev/null", O_RDWR);

	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	if (lo > 3)
		close_range(3, (unsigned int)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned int)lo + 1, (unsigned int)hi - 1, 0);
	close_range((unsigned int)hi + 1, ~0U, 0);
}

void crs_lineage_keep(int lfd, int ready_fd)
{
	static char buf[LIN_MSG_MAX];
	struct pollfd p[2 + MAX_CLIENTS];
	time_t idle_since = time(NULL);
	bool served = false;
	sigset_t chld;
	int sfd;

	close_inherited(lfd, ready_fd);
	default_signals();
	/* the keeper is not the user's: a ^C or hangup is for the tree */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTSTP, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	prctl(PR_SET_NAME, "crdbg-lineage");
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (sfd < 0 || write(ready_fd, "k", 1) != 1)
		_exit(1);
	close(ready_fd);
	for (;;) {
		size_t i;

		reap(sfd);
		if (nr_clients == 0 && !has_children() &&
		    (served || time(NULL) - idle_since > IDLE_S))
			_exit(0);
		p[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		for (i = 0; i < nr_clients; i++)
			p[2 + i] = (struct pollfd){ .fd = clients[i].fd, .events = POLLIN };
		if (poll(p, 2 + nr_clients, 1000) <= 0)
			continue;
		/* from the last: drop_client() moves the last into the gap */
		for (i = nr_clients; i-- > 0;)
			if (p[2 + i].revents && !serve(i, buf))
				drop_client(i);
		if (p[0].revents & POLLIN) {
			accept_client(lfd);
			served = true;
		}
	}
}
