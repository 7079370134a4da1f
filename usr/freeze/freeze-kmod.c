// SPDX-License-Identifier: GPL-2.0
/*
 * The crdbg.ko freeze backend: every operation is one generic netlink
 * request to the "crdbg" family (see <linux/crdbg.h>), sent over one
 * socket per handle with extended acks on, so a refusal comes back with
 * the kernel's own words. The kernel ties a plain freeze to this socket:
 * closing the handle (or crashing) thaws it; FREEZE_F_PERSIST survives.
 *
 * Every freeze and hook request carries /proc/PID/mem opened here, as
 * the calling user (CRDBG_A_PROC_MEM_FD): the kernel's own ptrace rules
 * (Yama, the LSMs) decided that open, and the module takes the fd as
 * the proof that the caller may act on the target. Where the open is
 * refused the request goes without it, and the module's own check
 * answers, in its words. A thaw or query names only a process that is
 * frozen already (one that exited or exec'd since may still have to be
 * thawed): the module checks those on its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/crdbg.h>

#include <crdbg/nl.h>

#include "freeze-backend.h"

_Static_assert(sizeof(struct freeze_regs) == sizeof(struct crdbg_regs),
	       "struct freeze_regs must mirror struct crdbg_regs");

struct kmod_backend {
	struct freeze_backend base;
	struct crdbg_nl nl;
};

static struct kmod_backend *to_kmod(struct freeze_backend *b)
{
	return container_of(b, struct kmod_backend, base);
}

/* /proc/pid/mem opened as the calling user, the request's proof: its fd, or -1. */
static int open_proof(pid_t pid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* msg, or NULL (freed) when one of the puts that filled it failed. */
static struct nl_msg *filled(struct nl_msg *msg, bool put_failed)
{
	if (msg && put_failed) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

/* A request for cmd on pid. */
static struct nl_msg *request(struct kmod_backend *k, int cmd, pid_t pid)
{
	struct nl_msg *msg = crdbg_nl_request(&k->nl, (uint8_t)cmd, 0);

	return filled(msg, msg && nla_put_u32(msg, CRDBG_A_PID, (uint32_t)pid));
}

/* Send msg, a freeze or hook request on pid, with its proof if it opens (msg is taken). */
static int transact_proven(struct kmod_backend *k, pid_t pid, struct nl_msg *msg,
			   char *err_msg, size_t err_len)
{
	int proof = open_proof(pid);
	int err;

	if (proof >= 0)
		msg = filled(msg, msg && nla_put_u32(msg, CRDBG_A_PROC_MEM_FD, (uint32_t)proof));
	err = crdbg_nl_transact(&k->nl, msg, NULL, NULL, err_msg, err_len);
	if (proof >= 0)
		close(proof);
	return err;
}

static int km_freeze(struct freeze_backend *b, pid_t pid, unsigned int flags, char *err_msg,
		     size_t err_len)
{
	struct kmod_backend *k = to_kmod(b);
	struct nl_msg *msg = request(k, CRDBG_CMD_FREEZE, pid);

	if (flags & FREEZE_F_PERSIST)
		msg = filled(msg, msg && nla_put_u32(msg, CRDBG_A_FLAGS, CRDBG_F_PERSIST));
	return transact_proven(k, pid, msg, err_msg, err_len);
}

static int km_thaw(struct freeze_backend *b, pid_t pid, char *err_msg, size_t err_len)
{
	struct kmod_backend *k = to_kmod(b);

	return crdbg_nl_transact(&k->nl, request(k, CRDBG_CMD_THAW, pid), NULL, NULL, err_msg,
				 err_len);
}

static enum freeze_thread_state map_state(uint32_t state, uint32_t flags)
{
	switch (state) {
	case CRDBG_THREAD_PARKED:
	case CRDBG_THREAD_TRACED:
		return (flags & CRDBG_THREAD_F_HOOK_PENDING) ? FREEZE_THREAD_HOOK_PENDING
							     : FREEZE_THREAD_FROZEN;
	case CRDBG_THREAD_EXITED:
		return FREEZE_THREAD_EXITED;
	default:
		return FREEZE_THREAD_RUNNING;	/* in the kernel, not parked yet */
	}
}

int freeze_kmod_parse_query(struct nlattr **attrs, void *arg)
{
	static const struct nla_policy policy[CRDBG_THREAD_A_MAX + 1] = {
		[CRDBG_THREAD_A_TID] = { .type = NLA_U32 },
		[CRDBG_THREAD_A_STATE] = { .type = NLA_U32 },
		[CRDBG_THREAD_A_FLAGS] = { .type = NLA_U32 },
		[CRDBG_THREAD_A_REGS] = { .minlen = sizeof(struct crdbg_regs) },
	};
	struct freeze_kmod_query *q = arg;
	struct nlattr *nest;
	int rem;

	if (!attrs[CRDBG_A_THREADS])
		return -EPROTO;
	nla_for_each_nested(nest, attrs[CRDBG_A_THREADS], rem) {
		struct nlattr *tb[CRDBG_THREAD_A_MAX + 1];
		struct freeze_thread *t;
		uint32_t flags = 0;

		if (nla_parse_nested(tb, CRDBG_THREAD_A_MAX, nest, policy) ||
		    !tb[CRDBG_THREAD_A_TID] || !tb[CRDBG_THREAD_A_STATE])
			return -EPROTO;
		if (q->n++ >= q->max)
			continue;
		t = &q->threads[q->n - 1];
		memset(t, 0, sizeof(*t));
		t->tid = (pid_t)nla_get_u32(tb[CRDBG_THREAD_A_TID]);
		if (tb[CRDBG_THREAD_A_FLAGS])
			flags = nla_get_u32(tb[CRDBG_THREAD_A_FLAGS]);
		t->state = map_state(nla_get_u32(tb[CRDBG_THREAD_A_STATE]), flags);
		if (tb[CRDBG_THREAD_A_REGS])
			memcpy(&t->regs, nla_data(tb[CRDBG_THREAD_A_REGS]), sizeof(t->regs));
	}
	/* a record that overruns the nest is no thread list */
	return rem > 0 ? -EPROTO : 0;
}

static int km_query(struct freeze_backend *b, pid_t pid, struct freeze_thread *threads,
		    size_t max, char *err_msg, size_t err_len)
{
	struct kmod_backend *k = to_kmod(b);
	struct freeze_kmod_query q = { .threads = threads, .max = max };
	int err;

	err = crdbg_nl_transact(&k->nl, request(k, CRDBG_CMD_QUERY, pid),
				freeze_kmod_parse_query, &q, err_msg, err_len);
	if (err == -EPROTO && !err_msg[0])
		snprintf(err_msg, err_len, "malformed QUERY reply from crdbg.ko");
	return err < 0 ? err : (int)q.n;
}

static int km_push_hook(struct freeze_backend *b, pid_t pid, pid_t tid, uint64_t trampoline,
			uint64_t arg, char *err_msg, size_t err_len)
{
	struct kmod_backend *k = to_kmod(b);
	struct nl_msg *msg = request(k, CRDBG_CMD_PUSH_HOOK, pid);

	msg = filled(msg, msg && (nla_put_u64(msg, CRDBG_A_TRAMPOLINE, trampoline) ||
				  nla_put_u64(msg, CRDBG_A_HOOK_ARG, arg) ||
				  (tid > 0 && nla_put_u32(msg, CRDBG_A_TID, (uint32_t)tid))));
	return transact_proven(k, pid, msg, err_msg, err_len);
}

static void km_close(struct freeze_backend *b)
{
	struct kmod_backend *k = to_kmod(b);

	crdbg_nl_close(&k->nl);	/* the kernel releases non-persistent freezes */
	free(k);
}

static const struct freeze_backend_ops kmod_ops = {
	.name = "kmod",
	.close = km_close,
	.freeze = km_freeze,
	.thaw = km_thaw,
	.query = km_query,
	.push_hook = km_push_hook,
};

int freeze_kmod_open(struct freeze_backend **ret, char *err_msg, size_t err_len)
{
	struct kmod_backend *k = calloc(1, sizeof(*k));
	int err;

	if (!k) {
		snprintf(err_msg, err_len, "out of memory");
		return -ENOMEM;
	}
	err = crdbg_nl_open(&k->nl, err_msg, err_len);
	if (err < 0) {
		free(k);
		return err;
	}
	k->base.ops = &kmod_ops;
	k->base.kind = FREEZE_BACKEND_KMOD;
	*ret = &k->base;
	return 0;
}
