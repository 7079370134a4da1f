// SPDX-License-Identifier: GPL-2.0
/*
 * The crdbg.ko freeze backend: every operation is one generic netlink
 * request to the "crdbg" family (see <linux/crdbg.h>), sent over one
 * socket per handle with extended acks on, so a refusal comes back with
 * the kernel's own words. The kernel ties a plain freeze to this socket:
 * closing the handle (or crashing) thaws it; FREEZE_F_PERSIST survives.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/crdbg.h>

#include <crdbg/genl.h>

#include "freeze-backend.h"

_Static_assert(sizeof(struct freeze_regs) == sizeof(struct crdbg_regs),
	       "struct freeze_regs must mirror struct crdbg_regs");

struct kmod_backend {
	struct freeze_backend base;
	struct crdbg_genl g;
};

static struct kmod_backend *to_kmod(struct freeze_backend *b)
{
	return container_of(b, struct kmod_backend, base);
}

static void request(struct crdbg_nla_request *r, struct kmod_backend *k, int cmd, pid_t pid)
{
	crdbg_genl_request(r, &k->g, cmd, 0);
	crdbg_nla_put_u32(r, CRDBG_A_PID, (uint32_t)pid);
}

static int km_freeze(struct freeze_backend *b, pid_t pid, unsigned int flags, char *err_msg,
		     size_t err_len)
{
	struct kmod_backend *k = to_kmod(b);
	struct crdbg_nla_request r;

	request(&r, k, CRDBG_CMD_FREEZE, pid);
	if (flags & FREEZE_F_PERSIST)
		crdbg_nla_put_u32(&r, CRDBG_A_FLAGS, CRDBG_F_PERSIST);
	return crdbg_genl_transact(&k->g, &r, NULL, NULL, err_msg, err_len);
}

static int km_thaw(struct freeze_backend *b, pid_t pid, char *err_msg, size_t err_len)
{
	struct crdbg_nla_request r;

	request(&r, to_kmod(b), CRDBG_CMD_THAW, pid);
	return crdbg_genl_transact(&to_kmod(b)->g, &r, NULL, NULL, err_msg, err_len);
}

struct query_ctx {
	struct freeze_thread *threads;
	size_t max;
	size_t n;
};

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

static int parse_query(const struct nlattr *const *attrs, void *arg)
{
	static const struct crdbg_nla_policy policy[CRDBG_THREAD_A_MAX + 1] = {
		[CRDBG_THREAD_A_TID] = { .kind = CRDBG_NLA_U32 },
		[CRDBG_THREAD_A_STATE] = { .kind = CRDBG_NLA_U32 },
		[CRDBG_THREAD_A_FLAGS] = { .kind = CRDBG_NLA_U32 },
		[CRDBG_THREAD_A_REGS] = { .min_len = sizeof(struct crdbg_regs) },
	};
	struct query_ctx *q = arg;
	const struct nlattr *nest;
	size_t rem;

	if (!attrs[CRDBG_A_THREADS])
		return -EPROTO;
	crdbg_nla_for_each_nested(nest, attrs[CRDBG_A_THREADS], rem) {
		const struct nlattr *tb[CRDBG_THREAD_A_MAX + 1];
		struct freeze_thread *t;
		uint32_t flags = 0;

		if (crdbg_nla_parse_nested(tb, CRDBG_THREAD_A_MAX, nest, policy) ||
		    !tb[CRDBG_THREAD_A_TID] || !tb[CRDBG_THREAD_A_STATE])
			return -EPROTO;
		if (q->n++ >= q->max)
			continue;
		t = &q->threads[q->n - 1];
		memset(t, 0, sizeof(*t));
		t->tid = (pid_t)crdbg_nla_u32(tb[CRDBG_THREAD_A_TID]);
		if (tb[CRDBG_THREAD_A_FLAGS])
			flags = crdbg_nla_u32(tb[CRDBG_THREAD_A_FLAGS]);
		t->state = map_state(crdbg_nla_u32(tb[CRDBG_THREAD_A_STATE]), flags);
		if (tb[CRDBG_THREAD_A_REGS])
			memcpy(&t->regs, crdbg_nla_data(tb[CRDBG_THREAD_A_REGS]), sizeof(t->regs));
	}
	return 0;
}

static int km_query(struct freeze_backend *b, pid_t pid, struct freeze_thread *threads,
		    size_t max, char *err_msg, size_t err_len)
{
	struct kmod_backend *k = to_kmod(b);
	struct query_ctx q = { .threads = threads, .max = max };
	struct crdbg_nla_request r;
	int err;

	request(&r, k, CRDBG_CMD_QUERY, pid);
	err = crdbg_genl_transact(&k->g, &r, parse_query, &q, err_msg, err_len);
	if (err == -EPROTO && !err_msg[0])
		snprintf(err_msg, err_len, "malformed QUERY reply from crdbg.ko");
	return err < 0 ? err : (int)q.n;
}

static int km_push_hook(struct freeze_backend *b, pid_t pid, pid_t tid, uint64_t trampoline,
			uint64_t arg, char *err_msg, size_t err_len)
{
	struct kmod_backend *k = to_kmod(b);
	struct crdbg_nla_request r;

	request(&r, k, CRDBG_CMD_PUSH_HOOK, pid);
	crdbg_nla_put_u64(&r, CRDBG_A_TRAMPOLINE, trampoline);
	crdbg_nla_put_u64(&r, CRDBG_A_HOOK_ARG, arg);
	if (tid > 0)
		crdbg_nla_put_u32(&r, CRDBG_A_TID, (uint32_t)tid);
	return crdbg_genl_transact(&k->g, &r, NULL, NULL, err_msg, err_len);
}

static void km_close(struct freeze_backend *b)
{
	struct kmod_backend *k = to_kmod(b);

	crdbg_genl_close(&k->g);	/* the kernel releases non-persistent freezes */
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
	err = crdbg_genl_open(&k->g, err_msg, err_len);
	if (err < 0) {
		free(k);
		return err;
	}
	k->base.ops = &kmod_ops;
	k->base.kind = FREEZE_BACKEND_KMOD;
	*ret = &k->base;
	return 0;
}
