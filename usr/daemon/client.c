// SPDX-License-Identifier: GPL-2.0
/* See <crdbg/crdbgd-client.h>. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <crdbg/crdbgd-client.h>

bool crdbgd_wanted(void)
{
	return geteuid() != 0;
}

static const char *socket_path(void)
{
	const char *p = getenv(CRDBGD_SOCKET_ENV);

	return p && *p ? p : CRDBGD_SOCKET;
}

void crdbgd_call_close(struct crdbgd_call *c)
{
	for (size_t i = 3; i < c->nr_fds; i++)
		close(c->fds[i]);
	c->nr_fds = 3;
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
}

int crdbgd_call_init(struct crdbgd_call *c, enum crdbgd_op op, const char *store, char *err,
		     size_t errlen)
{
	const char *named = store ? store : getenv("CRDBG_STORE");

	memset(c, 0, sizeof(*c));
	c->sock = -1;
	c->req.kind = op;
	c->fds[0] = 0;
	c->fds[1] = 1;
	c->fds[2] = 2;
	c->nr_fds = 3;
	if (named && *named) {
		int fd = open(named, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0) {
			snprintf(err, errlen, "cannot open store %s: %s", named, strerror(errno));
			return errno;
		}
		c->fds[c->nr_fds++] = fd;
		c->req.flags |= CRDBGD_F_STORE;
	}
	return 0;
}

int crdbgd_call_add_fd(struct crdbgd_call *c, int fd)
{
	int d;

	if (c->nr_fds >= CRDBGD_MAX_FDS)
		return E2BIG;
	d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (d < 0)
		return errno;
	c->fds[c->nr_fds++] = d;
	return 0;
}

int crdbgd_call_prove(struct crdbgd_call *c, pid_t pid, char *err, size_t errlen)
{
	int pidfd, memfd, e;
	char mem[64];

	if (c->nr_fds + 2 > CRDBGD_MAX_FDS)
		return E2BIG;
	/* what the kernel let us open under our own credentials */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)pid);
	memfd = pidfd < 0 ? -1 : open(mem, O_RDONLY | O_CLOEXEC);
	if (memfd < 0) {
		e = errno;
		snprintf(err, errlen, "cannot checkpoint pid %d: %s%s", (int)pid, strerror(e),
			 e == EACCES || e == EPERM ? " (not a process you may trace)" : "");
		if (pidfd >= 0)
			close(pidfd);
		return e;
	}
	c->fds[c->nr_fds++] = pidfd;
	c->fds[c->nr_fds++] = memfd;
	return 0;
}

static int send_request(struct crdbgd_call *c, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		char b[CMSG_SPACE(CRDBGD_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	static uint8_t buf[CRDBGD_MSG_MAX];
	struct iovec iov = { buf, 0 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
			     .msg_controllen = CMSG_SPACE(c->nr_fds * sizeof(int)) };
	struct cmsghdr *cm;
	const char *path = socket_path();
	int n;

	crdbgd_set_u32(&c->req, CRDBGD_A_FLAGS, c->req.flags);
	n = crdbgd_format(&c->req, buf, sizeof(buf));
	if (n < 0)
		return snprintf(err, errlen, "cannot encode the request: %s", strerror(-n)), -n;
	iov.iov_len = (size_t)n;
	memset(ctl.b, 0, sizeof(ctl.b));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(c->nr_fds * sizeof(int));
	memcpy(CMSG_DATA(cm), c->fds, c->nr_fds * sizeof(int));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->sock < 0 || connect(c->sock, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen,
			 "cannot reach the crdbg service at %s (%s): checkpoints need it when you are not root; is crdbgd running on this node?",
			 path, strerror(errno));
		return errno;
	}
	if (sendmsg(c->sock, &mh, MSG_NOSIGNAL) != n)
		return snprintf(err, errlen, "cannot send to the crdbg service: %s",
				strerror(errno)), errno;
	return 0;
}

/* Replies until DONE; the service's own error is in done->rc and error. */
static int receive(struct crdbgd_call *c, void (*fn)(const struct crdbgd_msg *, void *),
		   void *arg, struct crdbgd_msg *done, char *err, size_t errlen)
{
	static uint8_t buf[CRDBGD_MSG_MAX];
	static struct crdbgd_msg m;

	for (;;) {
		ssize_t n = recv(c->sock, buf, sizeof(buf), MSG_TRUNC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (size_t)n > sizeof(buf) || crdbgd_parse(buf, (size_t)n, &m)) {
			snprintf(err, errlen, "the crdbg service %s",
				 n < 0 ? strerror(errno) : n == 0 ? "closed the connection without an answer" :
				 "sent a malformed reply");
			return EPROTO;
		}
		if (m.kind == CRDBGD_R_DONE) {
			*done = m;
			return 0;
		}
		if (m.kind == CRDBGD_R_ENTRY && fn)
			fn(&m, arg);
	}
}

int crdbgd_call_run(struct crdbgd_call *c, void (*fn)(const struct crdbgd_msg *, void *),
		    void *arg, struct crdbgd_msg *done, char *err, size_t errlen)
{
	int r = send_request(c, err, errlen);

	if (!r)
		r = receive(c, fn, arg, done, err, errlen);
	if (!r && done->rc) {
		r = (int)done->rc;
		snprintf(err, errlen, "%s", done->error[0] ? done->error : strerror(r));
	}
	crdbgd_call_close(c);
	return r;
}
