// SPDX-License-Identifier: GPL-2.0
/*
 * One request (<crdbg/crdbgd.h>) in a process of its own: the caller's
 * stdio become ours, so that what libcrs logs, and a restored tree's
 * terminal, are the caller's, never root's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crdbg/crdbgd.h>
#include <crdbg/crs.h>
#include <crdbg/job.h>
#include <crdbg/job-part.h>

#include "auth.h"
#include "grant.h"
#include "serve.h"

struct request {
	int sock;
	struct crdbgd_caller caller;
	struct crdbgd_msg msg;
	int fds[CRDBGD_MAX_FDS];
	size_t nr_fds;
	char store[64];		/* "/proc/PID/fd/N" of the caller's store, or "" */
};

static int send_msg(int sock, const struct crdbgd_msg *m)
{
	uint8_t buf[CRDBGD_MSG_MAX];
	int n = crdbgd_format(m, buf, sizeof(buf));

	if (n < 0)
		return n;
	return send(sock, buf, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -errno;
}

static int reply_done(struct request *q, int rc, int status, const char *handle,
		      const char *error)
{
	struct crdbgd_msg m = { .kind = CRDBGD_R_DONE };

	crdbgd_set_u32(&m, CRDBGD_A_RC, (uint32_t)(rc < 0 ? -rc : rc));
	crdbgd_set_u32(&m, CRDBGD_A_STATUS, (uint32_t)status);
	if (handle && *handle)
		crdbgd_set_str(&m, CRDBGD_A_HANDLE, handle);
	if (rc && error)
		crdbgd_set_str(&m, CRDBGD_A_ERROR, error);
	return send_msg(q->sock, &m);
}

/* Receive the request and exactly the fds its kind carries. */
static int receive(struct request *q, char *err, size_t errlen)
{
	uint8_t buf[CRDBGD_MSG_MAX];
	union {
		char b[CMSG_SPACE(CRDBGD_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.b, .msg_controllen = sizeof(ctl.b) };
	struct cmsghdr *c;
	ssize_t n = recvmsg(q->sock, &mh, MSG_CMSG_CLOEXEC);

	if (n <= 0)
		return snprintf(err, errlen, "no request"), -EBADMSG;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < k && q->nr_fds < CRDBGD_MAX_FDS; i++)
				memcpy(&q->fds[q->nr_fds++], CMSG_DATA(c) + i * sizeof(int),
				       sizeof(int));
		}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return snprintf(err, errlen, "request too large"), -EBADMSG;
	if (crdbgd_parse(buf, (size_t)n, &q->msg) || !crdbgd_is_request(q->msg.kind))
		return snprintf(err, errlen, "malformed request"), -EBADMSG;
	if (q->nr_fds != crdbgd_request_fds(q->msg.kind, q->msg.flags))
		return snprintf(err, errlen, "request carries %zu file descriptors, not %zu",
				q->nr_fds, crdbgd_request_fds(q->msg.kind, q->msg.flags)),
		       -EBADMSG;
	return 0;
}

/*
 * Where root keeps a user's checkpoints in a store of the user's own: a
 * directory of root's in it, so that nothing beneath it is the user's to
 * rename or swap for a symlink (the store itself stays the user's).
 */
#define CRDBGD_USER_STORE_DIR ".crdbgd"

static int users_store_dir(struct request *q, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (mkdirat(q->fds[3], CRDBGD_USER_STORE_DIR, 0755) && errno != EEXIST)
		return snprintf(err, errlen, "cannot make %s in the store given: %s",
				CRDBGD_USER_STORE_DIR, strerror(errno)), -errno;
	fd = openat(q->fds[3], CRDBGD_USER_STORE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) || st.st_uid != 0 || (st.st_mode & 022)) {
		if (fd >= 0)
			close(fd);
		return snprintf(err, errlen,
				"%s in the store given is not root's: remove it and try again",
				CRDBGD_USER_STORE_DIR), -EPERM;
	}
	if (dup2(fd, q->fds[3]) < 0)	/* dup2 leaves it inheritable */
		return snprintf(err, errlen, "cannot keep the store open"), -errno;
	close(fd);
	return 0;
}

/* The caller's stdio as ours, and its store as a path only the kernel resolves. */
static int adopt_fds(struct request *q, char *err, size_t errlen)
{
	for (int i = 0; i < 3; i++)
		if (dup2(q->fds[i], i) < 0)
			return snprintf(err, errlen, "cannot take the caller's stdio"), -errno;
	if (q->msg.flags & CRDBGD_F_STORE) {
		int r = crdbgd_auth_store(&q->caller, q->fds[3], err, errlen);

		if (r)
			return r;
		if (q->caller.uid && !crdbgd_store_is_nodes(q->fds[3]))
			r = users_store_dir(q, err, errlen);
		if (r)
			return r;
		/*
		 * The store by a path only the kernel resolves, the same for
		 * criu and every helper (the lineage keeper's criu inherits
		 * none of our fds): this process's fd, for as long as the
		 * request lasts.
		 */
		snprintf(q->store, sizeof(q->store), "/proc/%d/fd/%d", (int)getpid(), q->fds[3]);
	}
	return 0;
}

static const char *store_of(const struct request *q)
{
	return q->store[0] ? q->store : crs_store_root(NULL);
}

/* Whether the caller may act on m: root, or its owner. */
static bool owns(const struct request *q, const struct crs_meta *m)
{
	return q->caller.uid == 0 || (m->has_owner && m->owner_uid == q->caller.uid);
}

/* Load handle's metadata for the caller: 0, or -EPERM/... with err. */
static int load_callers(const struct request *q, struct crs_meta *m, char *err, size_t errlen)
{
	const char *h = q->msg.handle;
	int r;

	if (!crs_handle_valid(h))
		return snprintf(err, errlen, "\"%s\" is not a checkpoint handle", h), -EINVAL;
	if (q->caller.uid && crs_job_exists(store_of(q), h))
		return snprintf(err, errlen,
				"%s is a job checkpoint: the service does not act on job checkpoints",
				h), -EOPNOTSUPP;
	r = crs_store_load(store_of(q), h, m, err, errlen);
	if (r)
		return r;
	if (!owns(q, m))
		return snprintf(err, errlen, "checkpoint %s is not yours (uid %u): refused", h,
				(unsigned int)q->caller.uid), -EPERM;
	return 0;
}

/*
 * The caller may read the checkpoint it took (grant.h). The node's store
 * is made passable (o+x), never listable, for an owner to reach its own
 * directory. A failure costs the checkpoint nothing: the caller is told.
 */
static void let_owner_read(struct request *q, const char *handle)
{
	char err[CRDBGD_ERR_MAX];
	struct stat st;
	int fd;

	if (!q->caller.uid)
		return;
	/* the caller's store: the fd it handed in ("/proc/PID/fd/N") */
	fd = open(store_of(q), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (q->store[0] ? 0 : O_NOFOLLOW));
	if (fd >= 0 && !q->store[0] && !fstat(fd, &st) && st.st_uid == 0 &&
	    (st.st_mode & 0111) != 0111)
		fchmod(fd, (st.st_mode & 07777) | 0111);
	if (fd < 0)
		snprintf(err, sizeof(err), "cannot open the store: %s", strerror(errno));
	if (fd < 0 || crdbgd_grant_read(fd, handle, q->caller.uid, err, sizeof(err)))
		fprintf(stderr, "crdbg: %s (the checkpoint is taken; only root reads it)\n", err);
	if (fd >= 0)
		close(fd);
}

static int do_checkpoint(struct request *q)
{
	const struct crdbgd_msg *mg = &q->msg;
	const char *opts[CRS_MAX_CRIU_OPTS];
	struct crs_checkpoint_opts o = {
		.pid = (pid_t)mg->pid, .descendants = !(mg->flags & CRDBGD_F_NO_TREE),
		.after = (enum crs_after)mg->after, .debug = (enum crs_debug)mg->debug,
		.backend = (enum freeze_backend_kind)mg->backend, .log = stderr,
		.verbose = mg->flags & CRDBGD_F_VERBOSE, .full = mg->flags & CRDBGD_F_FULL,
		.no_pre_dump = mg->flags & CRDBGD_F_NO_PRE_DUMP, .criu_opts = opts,
		.nr_criu_opts = mg->nr_criu_opts, .owner_given = true,
		.owner_uid = q->caller.uid, .owner_gid = q->caller.gid,
	};
	size_t proof = crdbgd_proof_fds(mg->flags);
	char handle[CRS_HANDLE_MAX] = "", err[CRDBGD_ERR_MAX];
	int r;

	o.store = q->store[0] ? q->store : NULL;
	if (!crdbgd_has(mg, CRDBGD_A_PID) || !mg->pid || mg->pid > 0x3fffffff ||
	    mg->after > CRS_AFTER_KILL || mg->debug > CRS_DEBUG_SET ||
	    mg->backend > FREEZE_BACKEND_PTRACE)
		return reply_done(q, EINVAL, 0, NULL, "checkpoint: malformed request");
	for (uint32_t i = 0; i < mg->nr_criu_opts; i++) {
		if (crs_criu_opt_check(mg->criu_opts[i], err, sizeof(err)))
			return reply_done(q, EPERM, 0, NULL, err);
		opts[i] = mg->criu_opts[i];
	}
	r = crdbgd_auth_tree(&q->caller, o.pid, o.descendants, q->fds[proof], q->fds[proof + 1],
			     err, sizeof(err));
	if (!r)
		r = crs_checkpoint(&o, handle, sizeof(handle), err, sizeof(err));
	if (!r)
		let_owner_read(q, handle);
	return reply_done(q, r, 0, handle, err);
}

static int do_restart(struct request *q)
{
	struct crs_restart_opts o = {
		.handle = q->msg.handle, .store = q->store[0] ? q->store : NULL,
		.debug = q->msg.flags & CRDBGD_F_DEBUG, .lazy = q->msg.flags & CRDBGD_F_LAZY,
		.verbose = q->msg.flags & CRDBGD_F_VERBOSE, .log = stderr, .terminal_fd = -1,
		.relay_stdin = true, .backend = (enum freeze_backend_kind)q->msg.backend,
		.for_owner = q->caller.uid != 0, .owner_uid = q->caller.uid,
	};
	char err[CRDBGD_ERR_MAX];
	struct crs_meta m;
	int r, st = 0;

	if (q->msg.backend > FREEZE_BACKEND_PTRACE)
		return reply_done(q, EINVAL, 0, NULL, "restart: malformed request");
	crs_meta_init(&m);
	r = load_callers(q, &m, err, sizeof(err));	/* seal first: crs_store_load */
	crs_meta_free(&m);
	if (!r)
		r = crs_restart(&o, &st, err, sizeof(err));
	return reply_done(q, r, st, NULL, err);
}

/* The part's metadata is the one its job's manifest recorded (EXPECT_META). */
static int expected_meta(const struct request *q, char *err, size_t errlen)
{
	uint8_t want[32], got[32];
	int r;

	if (!crs_digest_from_hex(q->msg.expect_meta, want, sizeof(want)))
		return snprintf(err, errlen, "the expected metadata digest is not 64 hex digits"),
		       -EINVAL;
	r = crs_store_meta_digest(store_of(q), q->msg.handle, got, err, errlen);
	if (r || !memcmp(want, got, sizeof(got)))
		return r;
	snprintf(err, errlen, "checkpoint %s is not the part its job recorded: its metadata changed",
		 q->msg.handle);
	return -EBADMSG;
}

static int do_verify(struct request *q)
{
	char err[CRDBGD_ERR_MAX];
	struct crs_meta m;
	int r;

	crs_meta_init(&m);
	r = load_callers(q, &m, err, sizeof(err));
	if (!r && crdbgd_has(&q->msg, CRDBGD_A_EXPECT_META))
		r = expected_meta(q, err, sizeof(err));
	if (!r)
		r = crs_store_verify_chain(store_of(q), q->msg.handle, &m, false, err, sizeof(err));
	crs_meta_free(&m);
	return reply_done(q, r, 0, NULL, err);
}

static int do_rm(struct request *q)
{
	char err[CRDBGD_ERR_MAX], job[CRS_HANDLE_MAX];
	struct crs_meta m;
	int r;

	crs_meta_init(&m);
	r = load_callers(q, &m, err, sizeof(err));
	crs_meta_free(&m);
	if (!r && !crs_job_owning(store_of(q), q->msg.handle, job, sizeof(job)) && job[0]) {
		snprintf(err, sizeof(err), "%s is a part of job checkpoint %s", q->msg.handle, job);
		r = -EBUSY;
	}
	if (!r) {
		r = crs_store_remove(store_of(q), q->msg.handle);
		if (r)
			crs_store_remove_why(store_of(q), q->msg.handle, r, err, sizeof(err));
	}
	return reply_done(q, r, 0, NULL, err);
}

struct list_ctx {
	struct request *q;
	int r;
};

static void list_one(const char *handle, const struct crs_meta *m, uint64_t bytes,
		     const char *problem, void *arg)
{
	struct list_ctx *ctx = arg;
	struct crdbgd_msg e = { .kind = CRDBGD_R_ENTRY };

	/* what cannot be read has no owner: only root sees it */
	if (ctx->r || (m ? !owns(ctx->q, m) : ctx->q->caller.uid != 0))
		return;
	crdbgd_set_str(&e, CRDBGD_A_HANDLE, handle);
	crdbgd_set_u32(&e, CRDBGD_A_VALID, m != NULL);
	if (!m) {
		crdbgd_set_str(&e, CRDBGD_A_PROBLEM, problem ? problem : "unreadable");
		ctx->r = send_msg(ctx->q->sock, &e);
		return;
	}
	for (size_t i = 0; i < m->nr_procs; i++)
		crdbgd_add_pid(&e, (uint32_t)m->procs[i].pid);
	crdbgd_set_u64(&e, CRDBGD_A_TIME, (uint64_t)m->time);
	crdbgd_set_str(&e, CRDBGD_A_PROGRAM, m->program);
	crdbgd_set_u32(&e, CRDBGD_A_MPIR, m->mpir);
	crdbgd_set_str(&e, CRDBGD_A_CRIU, m->criu_version);
	crdbgd_set_u32(&e, CRDBGD_A_THREADS, (uint32_t)m->nr_threads);
	crdbgd_set_u64(&e, CRDBGD_A_BYTES, bytes);
	crdbgd_set_u32(&e, CRDBGD_A_DEBUGGER, m->debugger);
	crdbgd_set_str(&e, CRDBGD_A_PARENT, m->parent);
	ctx->r = send_msg(ctx->q->sock, &e);
}

static int do_list(struct request *q)
{
	struct list_ctx ctx = { .q = q };
	int r = crs_store_list(store_of(q), list_one, &ctx);
	char err[CRDBGD_ERR_MAX];

	if (r)
		snprintf(err, sizeof(err), "cannot read the store: %s", strerror(-r));
	return reply_done(q, r ? r : ctx.r, 0, NULL, err);
}

/*
 * A part's caller, crdbg-part, closing its socket calls the part off (a
 * SIGTERM to it ends it so): the part's main thread is told as the
 * worker's own SIGTERM would tell it.
 */
static void *watch_caller(void *arg)
{
	struct request *q = arg;
	struct pollfd p = { .fd = q->sock, .events = POLLRDHUP };

	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	kill(getpid(), SIGTERM);
	return NULL;
}

static void watch_caller_start(struct request *q)
{
	sigset_t all, old;
	pthread_t t;

	/*
	 * Every signal blocked in the watcher: the part's signals are the
	 * main thread's, SIGTERM it sends and libcrdbg's answer to the
	 * checkpoint request (CRDBG_RT_SIGNAL, waited for there, fatal here).
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (!pthread_create(&t, NULL, watch_caller, q))
		pthread_detach(t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * A refusal before the part begins, in DONE's RC and ERROR: the caller
 * says it as the part's failed step (a part that ran said its own).
 */
static int part_refused(struct request *q, int r, const char *err)
{
	return reply_done(q, r, 1, NULL, err);
}

static int do_part_checkpoint(struct request *q)
{
	const struct crdbgd_msg *mg = &q->msg;
	const char *no_opts[1] = { NULL };
	struct crs_checkpoint_opts o = {
		.pid = (pid_t)mg->pid, .descendants = true, .after = CRS_AFTER_CONTINUE,
		.debug = mg->flags & CRDBGD_F_DEBUG ? CRS_DEBUG_SET : CRS_DEBUG_KEEP,
		.backend = (enum freeze_backend_kind)mg->backend, .log = stderr,
		.verbose = mg->flags & CRDBGD_F_VERBOSE, .full = mg->flags & CRDBGD_F_FULL,
		.no_pre_dump = mg->flags & CRDBGD_F_NO_PRE_DUMP, .criu_opts = no_opts,
		.cid = mg->cid, .cid_index = mg->part, .cid_parts = mg->parts,
		.owner_given = true, .owner_uid = q->caller.uid, .owner_gid = q->caller.gid,
	};
	size_t proof = crdbgd_proof_fds(mg->flags);
	char handle[CRS_HANDLE_MAX] = "", err[CRDBGD_ERR_MAX];
	int r, st;

	o.store = q->store[0] ? q->store : NULL;
	if (!crdbgd_has(mg, CRDBGD_A_PID) || !mg->pid || mg->pid > 0x3fffffff ||
	    !crs_cid_valid(mg->cid) || mg->part >= mg->parts || mg->parts > CRS_JOB_MAX_PARTS ||
	    mg->backend > FREEZE_BACKEND_PTRACE)
		return part_refused(q, -EINVAL, "checkpoint part: malformed request");
	r = crdbgd_auth_tree(&q->caller, o.pid, true, q->fds[proof], q->fds[proof + 1], err,
			     sizeof(err));
	if (r)
		return part_refused(q, r, err);
	watch_caller_start(q);
	st = job_worker_checkpoint(&o, handle, sizeof(handle));
	if (!st)
		let_owner_read(q, handle);
	return reply_done(q, 0, st, NULL, NULL);
}

static int do_part_restart(struct request *q)
{
	const struct crdbgd_msg *mg = &q->msg;
	struct crs_restart_opts o = {
		.handle = mg->handle, .store = q->store[0] ? q->store : NULL,
		.debug = mg->flags & CRDBGD_F_DEBUG, .verbose = mg->flags & CRDBGD_F_VERBOSE,
		.log = stderr, .backend = (enum freeze_backend_kind)mg->backend,
		.terminal_fd = -1, .node_roots = mg->node_roots,
		.agents = crdbgd_has(mg, CRDBGD_A_AGENTS) ? mg->agents : NULL,
		.for_owner = q->caller.uid != 0, .owner_uid = q->caller.uid,
	};
	char err[CRDBGD_ERR_MAX];
	struct crs_meta m;
	uint8_t sha[32];
	int r;

	/* agents: processes of the caller's own restored tree, checked by crs_restart */
	if (mg->backend > FREEZE_BACKEND_PTRACE || !job_part_roots_valid(mg->node_roots) ||
	    (o.agents && (!strcmp(o.agents, "-") || !job_part_roots_valid(o.agents) ||
			  strlen(o.agents) >= CRS_AGENTS_MAX)) ||
	    (crdbgd_has(mg, CRDBGD_A_EXPECT_META) &&
	     !crs_digest_from_hex(mg->expect_meta, sha, sizeof(sha))))
		return part_refused(q, -EINVAL, "restart part: malformed request");
	if (crdbgd_has(mg, CRDBGD_A_EXPECT_META))
		o.expect_meta_sha = sha;
	if (mg->flags & CRDBGD_F_TERMINAL) {
		o.terminal_fd = q->fds[crdbgd_request_fds(mg->kind, mg->flags) - 1];
		o.has_terminal = true;
		if (!isatty(o.terminal_fd))
			return part_refused(q, -ENOTTY, "restart part: the terminal given is none");
		/* criu, our child, takes it as the tree's terminal */
		fcntl(o.terminal_fd, F_SETFD, 0);
	}
	crs_meta_init(&m);
	r = load_callers(q, &m, err, sizeof(err));	/* seal first: crs_store_load */
	crs_meta_free(&m);
	if (r)
		return part_refused(q, r, err);
	watch_caller_start(q);
	return reply_done(q, 0, job_worker_restart(&o), NULL, NULL);
}

int crdbgd_serve(int fd)
{
	struct request q = { .sock = fd };
	char err[CRDBGD_ERR_MAX];
	int r;

	r = crdbgd_caller_of(fd, &q.caller);
	if (r)
		return 1;
	r = receive(&q, err, sizeof(err));
	if (!r)
		r = adopt_fds(&q, err, sizeof(err));
	if (r)
		return reply_done(&q, r, 0, NULL, err) ? 1 : 1;
	switch (q.msg.kind) {
	case CRDBGD_OP_CHECKPOINT:
		r = do_checkpoint(&q);
		break;
	case CRDBGD_OP_RESTART:
		r = do_restart(&q);
		break;
	case CRDBGD_OP_LIST:
		r = do_list(&q);
		break;
	case CRDBGD_OP_VERIFY:
		r = do_verify(&q);
		break;
	case CRDBGD_OP_PART_CHECKPOINT:
		r = do_part_checkpoint(&q);
		break;
	case CRDBGD_OP_PART_RESTART:
		r = do_part_restart(&q);
		break;
	default:
		r = do_rm(&q);
		break;
	}
	return r ? 1 : 0;
}
