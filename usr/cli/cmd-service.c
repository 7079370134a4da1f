// SPDX-License-Identifier: GPL-2.0
/* See cli-service.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <crdbg/crdbgd.h>

#include "cli-service.h"

struct call {
	struct crdbgd_msg req;
	int fds[CRDBGD_MAX_FDS];
	size_t nr_fds;
	int sock;
};

bool cli_service_wanted(void)
{
	return geteuid() != 0;
}

static const char *socket_path(void)
{
	const char *p = getenv(CRDBGD_SOCKET_ENV);

	return p && *p ? p : CRDBGD_SOCKET;
}

static void call_close(struct call *c)
{
	for (size_t i = 3; i < c->nr_fds; i++)
		close(c->fds[i]);
	if (c->sock >= 0)
		close(c->sock);
}

/* The request's stdio, and the store the user named opened by the user. */
static int call_init(struct call *c, enum crdbgd_op op, const char *store, char *err,
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

static int send_request(struct call *c, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		char b[CMSG_SPACE(CRDBGD_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	uint8_t buf[CRDBGD_MSG_MAX];
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

/*
 * Replies until DONE: each ENTRY to fn (may be NULL), DONE into *done.
 * 0 when DONE came; the service's own error is in done->rc and error.
 */
static int receive(struct call *c, void (*fn)(const struct crdbgd_msg *, void *), void *arg,
		   struct crdbgd_msg *done, char *err, size_t errlen)
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

/* Send, wait for DONE: its rc, with its error line in err. */
static int run(struct call *c, void (*fn)(const struct crdbgd_msg *, void *), void *arg,
	       struct crdbgd_msg *done, char *err, size_t errlen)
{
	int r = send_request(c, err, errlen);

	if (!r)
		r = receive(c, fn, arg, done, err, errlen);
	if (!r && done->rc) {
		r = (int)done->rc;
		snprintf(err, errlen, "%s", done->error[0] ? done->error : strerror(r));
	}
	call_close(c);
	return r;
}

int cli_service_checkpoint(const struct crs_checkpoint_opts *o, char *ret_handle, size_t len,
			   char *err, size_t errlen)
{
	struct crdbgd_msg done;
	struct call c;
	int r, pidfd, memfd;
	char mem[64];

	r = call_init(&c, CRDBGD_OP_CHECKPOINT, o->store, err, errlen);
	if (r)
		return r;
	/* the proof: what the kernel let us open under our own credentials */
	pidfd = (int)syscall(SYS_pidfd_open, o->pid, 0);
	snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)o->pid);
	memfd = pidfd < 0 ? -1 : open(mem, O_RDONLY | O_CLOEXEC);
	if (memfd < 0) {
		snprintf(err, errlen, "cannot checkpoint pid %d: %s%s", (int)o->pid,
			 strerror(errno), errno == EACCES || errno == EPERM ?
			 " (not a process you may trace)" : "");
		r = errno;
		if (pidfd >= 0)
			close(pidfd);
		call_close(&c);
		return r;
	}
	c.fds[c.nr_fds++] = pidfd;
	c.fds[c.nr_fds++] = memfd;
	crdbgd_set_u32(&c.req, CRDBGD_A_PID, (uint32_t)o->pid);
	crdbgd_set_u32(&c.req, CRDBGD_A_AFTER, o->after);
	crdbgd_set_u32(&c.req, CRDBGD_A_DEBUG, o->debug);
	crdbgd_set_u32(&c.req, CRDBGD_A_BACKEND, o->backend);
	c.req.flags |= (o->descendants ? 0 : CRDBGD_F_NO_TREE) | (o->full ? CRDBGD_F_FULL : 0) |
		       (o->no_pre_dump ? CRDBGD_F_NO_PRE_DUMP : 0) |
		       (o->verbose ? CRDBGD_F_VERBOSE : 0);
	for (size_t i = 0; i < o->nr_criu_opts; i++)
		if (crdbgd_set_str(&c.req, CRDBGD_A_CRIU_OPT, o->criu_opts[i])) {
			call_close(&c);
			return snprintf(err, errlen, "criu option %s too long", o->criu_opts[i]),
			       EINVAL;
		}
	r = run(&c, NULL, NULL, &done, err, errlen);
	if (!r)
		snprintf(ret_handle, len, "%s", done.handle);
	return r;
}

int cli_service_restart(const struct crs_restart_opts *o, int *ret_status, char *err,
			size_t errlen)
{
	struct crdbgd_msg done;
	struct call c;
	int r = call_init(&c, CRDBGD_OP_RESTART, o->store, err, errlen);

	if (r)
		return r;
	crdbgd_set_str(&c.req, CRDBGD_A_HANDLE, o->handle);
	crdbgd_set_u32(&c.req, CRDBGD_A_BACKEND, o->backend);
	c.req.flags |= (o->debug ? CRDBGD_F_DEBUG : 0) | (o->lazy ? CRDBGD_F_LAZY : 0) |
		       (o->verbose ? CRDBGD_F_VERBOSE : 0);
	r = run(&c, NULL, NULL, &done, err, errlen);
	if (!r)
		*ret_status = (int)done.status;
	return r;
}

static int handle_op(enum crdbgd_op op, const char *store, const char *handle, char *err,
		     size_t errlen)
{
	struct crdbgd_msg done;
	struct call c;
	int r = call_init(&c, op, store, err, errlen);

	if (r)
		return r;
	crdbgd_set_str(&c.req, CRDBGD_A_HANDLE, handle);
	return run(&c, NULL, NULL, &done, err, errlen);
}

int cli_service_verify(const char *store, const char *handle, char *err, size_t errlen)
{
	return handle_op(CRDBGD_OP_VERIFY, store, handle, err, errlen);
}

int cli_service_rm(const char *store, const char *handle, char *err, size_t errlen)
{
	return handle_op(CRDBGD_OP_RM, store, handle, err, errlen);
}

struct list_call {
	crs_store_list_fn fn;
	void *arg;
};

/* An entry as crs_store_list() would have given it. */
static void list_entry(const struct crdbgd_msg *e, void *arg)
{
	struct list_call *lc = arg;
	struct crs_proc procs[CRDBGD_MAX_PIDS];
	struct crs_meta m;

	if (!e->valid) {
		lc->fn(e->handle, NULL, 0, e->problem, lc->arg);
		return;
	}
	crs_meta_init(&m);
	memset(procs, 0, sizeof(procs));
	for (uint32_t i = 0; i < e->nr_pids; i++)
		procs[i].pid = (pid_t)e->pids[i];
	m.procs = procs;
	m.nr_procs = e->nr_pids;
	m.time = (int64_t)e->time;
	m.nr_threads = e->threads;
	m.debugger = e->debugger;
	m.mpir = e->mpir;
	snprintf(m.handle, sizeof(m.handle), "%s", e->handle);
	snprintf(m.program, sizeof(m.program), "%s", e->program);
	snprintf(m.criu_version, sizeof(m.criu_version), "%s", e->criu);
	snprintf(m.parent, sizeof(m.parent), "%s", e->parent);
	lc->fn(e->handle, &m, e->bytes, NULL, lc->arg);
}

int cli_service_list(const char *store, crs_store_list_fn fn, void *arg, char *err,
		     size_t errlen)
{
	struct list_call lc = { fn, arg };
	struct crdbgd_msg done;
	struct call c;
	int r = call_init(&c, CRDBGD_OP_LIST, store, err, errlen);

	return r ? r : run(&c, list_entry, &lc, &done, err, errlen);
}
