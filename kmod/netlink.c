// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "crdbg": request parsing, permission checks,
 * replies and events. The protocol is documented in uapi/linux/crdbg.h.
 * Every command has its own strict policy, so an attribute that does not
 * belong to it is rejected by the netlink core with an extended ack.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/crdbg.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <net/genetlink.h>

#include "freeze.h"
#include "netlink.h"
#include "perm.h"

static struct genl_family genl_family;
static bool events_on;	/* false once unloading starts: no stale group ids */

static struct netlink_range_validation fd_range = { .max = INT_MAX };

static const struct nla_policy status_policy[CRDBG_A_MAX + 1] = {};

static const struct nla_policy freeze_policy[CRDBG_A_MAX + 1] = {
	[CRDBG_A_PID]		= NLA_POLICY_MIN(NLA_U32, 1),
	[CRDBG_A_FLAGS]		= NLA_POLICY_MASK(NLA_U32, __CRDBG_F_ALL),
	[CRDBG_A_PROC_MEM_FD]	= NLA_POLICY_FULL_RANGE(NLA_U32, &fd_range),
};

static const struct nla_policy target_policy[CRDBG_A_MAX + 1] = {
	[CRDBG_A_PID]		= NLA_POLICY_MIN(NLA_U32, 1),
	[CRDBG_A_PROC_MEM_FD]	= NLA_POLICY_FULL_RANGE(NLA_U32, &fd_range),
};

static const struct nla_policy hook_policy[CRDBG_A_MAX + 1] = {
	[CRDBG_A_PID]		= NLA_POLICY_MIN(NLA_U32, 1),
	[CRDBG_A_PROC_MEM_FD]	= NLA_POLICY_FULL_RANGE(NLA_U32, &fd_range),
	[CRDBG_A_TID]		= NLA_POLICY_MIN(NLA_U32, 1),
	[CRDBG_A_TRAMPOLINE]	= { .type = NLA_U64 },
	[CRDBG_A_HOOK_ARG]	= { .type = NLA_U64 },
};

/*
 * The target process named by CRDBG_A_PID, referenced, checked for
 * permission and returned with its exec_update_lock held for reading:
 * put_target() it once the operation is done.
 */
static struct task_struct *get_target(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *fd_attr = info->attrs[CRDBG_A_PROC_MEM_FD];
	struct task_struct *task;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, CRDBG_A_PID)) {
		NL_SET_ERR_MSG(info->extack, "CRDBG_A_PID (the target process) is required");
		return ERR_PTR(-EINVAL);
	}
	rcu_read_lock();
	task = pid_task(find_vpid(nla_get_u32(info->attrs[CRDBG_A_PID])), PIDTYPE_TGID);
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	if (!task) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[CRDBG_A_PID],
				    "no such process (a thread id is not accepted here)");
		return ERR_PTR(-ESRCH);
	}
	ret = crdbg_perm_lock(task);
	if (ret < 0) {
		put_task_struct(task);
		return ERR_PTR(ret);
	}
	ret = crdbg_perm_check(task, skb, fd_attr ? (int)nla_get_u32(fd_attr) : -1,
			       info->extack);
	if (ret < 0) {
		crdbg_perm_unlock(task);
		put_task_struct(task);
		return ERR_PTR(ret);
	}
	return task;
}

static void put_target(struct task_struct *task)
{
	crdbg_perm_unlock(task);
	put_task_struct(task);
}

static int crdbg_get_status(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &genl_family, 0, CRDBG_CMD_GET_STATUS);
	if (!hdr)
		goto err_size;
	if (nla_put_string(msg, CRDBG_A_VERSION, CRDBG_MODULE_VERSION) ||
	    nla_put_u32(msg, CRDBG_A_NR_FROZEN, crdbg_freeze_count()))
		goto err_size;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_size:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static int crdbg_do_freeze(struct sk_buff *skb, struct genl_info *info)
{
	struct task_struct *task = get_target(skb, info);
	struct crdbg_freeze *fz;
	u32 flags = 0;

	if (IS_ERR(task))
		return PTR_ERR(task);
	if (info->attrs[CRDBG_A_FLAGS])
		flags = nla_get_u32(info->attrs[CRDBG_A_FLAGS]);
	fz = crdbg_freeze_begin(task, genl_info_net(info), info->snd_portid, flags, info->extack);
	put_target(task);	/* an exec from here on is on_exec()'s to judge */
	if (IS_ERR(fz))
		return PTR_ERR(fz);
	return crdbg_freeze_finish(fz, info->extack);
}

static int crdbg_do_thaw(struct sk_buff *skb, struct genl_info *info)
{
	struct task_struct *task = get_target(skb, info);
	int ret;

	if (IS_ERR(task))
		return PTR_ERR(task);
	ret = crdbg_thaw(task, info->extack);
	put_target(task);
	return ret;
}

static int put_thread(struct sk_buff *msg, const struct crdbg_thread_info *ti)
{
	struct nlattr *nest = nla_nest_start(msg, 0);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(msg, CRDBG_THREAD_A_TID, ti->tid) ||
	    nla_put_u32(msg, CRDBG_THREAD_A_STATE, ti->state) ||
	    nla_put_u32(msg, CRDBG_THREAD_A_FLAGS, ti->flags) ||
	    (ti->regs_valid &&
	     nla_put(msg, CRDBG_THREAD_A_REGS, sizeof(ti->regs), &ti->regs))) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static int crdbg_do_query(struct sk_buff *skb, struct genl_info *info)
{
	struct task_struct *task = get_target(skb, info);
	struct crdbg_freeze_info *fi;
	struct nlattr *threads;
	struct sk_buff *msg;
	unsigned int i;
	size_t size;
	void *hdr;
	int ret = -EMSGSIZE;

	if (IS_ERR(task))
		return PTR_ERR(task);
	fi = crdbg_freeze_query(task, info->extack);
	put_target(task);
	if (IS_ERR(fi))
		return PTR_ERR(fi);

	size = nla_total_size(sizeof(u32)) * 3 + nla_total_size(0) +
	       fi->nr_threads * (nla_total_size(0) + 3 * nla_total_size(sizeof(u32)) +
				 nla_total_size(sizeof(struct crdbg_regs)));
	if (size > (1U << 20)) {
		NL_SET_ERR_MSG(info->extack, "too many threads for one reply");
		ret = -E2BIG;
		goto out;
	}
	msg = genlmsg_new(size, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	hdr = genlmsg_put_reply(msg, info, &genl_family, 0, CRDBG_CMD_QUERY);
	if (!hdr)
		goto err_msg;
	if (nla_put_u32(msg, CRDBG_A_PID, nla_get_u32(info->attrs[CRDBG_A_PID])) ||
	    nla_put_u32(msg, CRDBG_A_FLAGS, fi->flags) ||
	    nla_put_u32(msg, CRDBG_A_OWNER_PORTID, fi->owner_portid))
		goto err_msg;
	threads = nla_nest_start(msg, CRDBG_A_THREADS);
	if (!threads)
		goto err_msg;
	for (i = 0; i < fi->nr_threads; i++)
		if (put_thread(msg, &fi->threads[i]))
			goto err_msg;
	nla_nest_end(msg, threads);
	genlmsg_end(msg, hdr);
	kvfree(fi);
	return genlmsg_reply(msg, info);

err_msg:
	nlmsg_free(msg);
out:
	kvfree(fi);
	return ret;
}

static bool visible(struct task_struct *task, struct sk_buff *skb)
{
	bool ok;

	if (crdbg_perm_lock(task) < 0)
		return false;
	ok = !crdbg_perm_check(task, skb, -1, NULL);
	crdbg_perm_unlock(task);
	return ok;
}

/* NLM_F_DUMP: every frozen process the caller may act on, without threads. */
static int crdbg_dump_query(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct crdbg_freeze_brief list[16];
	unsigned int n, i;
	int ret = 0;

	n = crdbg_freeze_list(list, ARRAY_SIZE(list), cb->args[0]);
	for (i = 0; i < n; i++) {
		struct task_struct *task = get_pid_task(list[i].pid, PIDTYPE_TGID);
		pid_t vnr = pid_vnr(list[i].pid);
		void *hdr;

		if (ret || !task || !vnr || !visible(task, cb->skb)) {
			if (!ret)
				cb->args[0]++;	/* not visible to this caller */
			goto next;
		}
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &genl_family, NLM_F_MULTI, CRDBG_CMD_QUERY);
		if (!hdr || nla_put_u32(skb, CRDBG_A_PID, vnr) ||
		    nla_put_u32(skb, CRDBG_A_FLAGS, list[i].flags) ||
		    nla_put_u32(skb, CRDBG_A_OWNER_PORTID, list[i].owner_portid)) {
			if (hdr)
				genlmsg_cancel(skb, hdr);
			ret = -EMSGSIZE;	/* resume here in the next skb */
			goto next;
		}
		genlmsg_end(skb, hdr);
		cb->args[0]++;
next:
		if (task)
			put_task_struct(task);
		put_pid(list[i].pid);
	}
	return skb->len;
}

static int crdbg_do_push_hook(struct sk_buff *skb, struct genl_info *info)
{
	struct task_struct *task, *thread = NULL;
	u64 tramp;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, CRDBG_A_TRAMPOLINE)) {
		NL_SET_ERR_MSG(info->extack, "CRDBG_A_TRAMPOLINE is required");
		return -EINVAL;
	}
	if (GENL_REQ_ATTR_CHECK(info, CRDBG_A_HOOK_ARG)) {
		NL_SET_ERR_MSG(info->extack, "CRDBG_A_HOOK_ARG is required");
		return -EINVAL;
	}
	tramp = nla_get_u64(info->attrs[CRDBG_A_TRAMPOLINE]);
	if (!tramp || tramp >= TASK_SIZE_MAX) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[CRDBG_A_TRAMPOLINE],
				    "trampoline is not a user address");
		return -EINVAL;
	}
	task = get_target(skb, info);
	if (IS_ERR(task))
		return PTR_ERR(task);
	if (info->attrs[CRDBG_A_TID]) {
		rcu_read_lock();
		thread = pid_task(find_vpid(nla_get_u32(info->attrs[CRDBG_A_TID])), PIDTYPE_PID);
		if (thread && !same_thread_group(thread, task))
			thread = NULL;
		if (thread)
			get_task_struct(thread);
		rcu_read_unlock();
		if (!thread) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[CRDBG_A_TID],
					    "CRDBG_A_TID is not a thread of the target");
			put_target(task);
			return -ESRCH;
		}
	}
	ret = crdbg_freeze_set_hook(task, thread, tramp,
				    nla_get_u64(info->attrs[CRDBG_A_HOOK_ARG]), info->extack);
	if (thread)
		put_task_struct(thread);
	put_target(task);
	return ret;
}

static const struct genl_ops genl_ops[] = {
	{
		.cmd = CRDBG_CMD_GET_STATUS,
		.doit = crdbg_get_status,
		.policy = status_policy,
		.maxattr = CRDBG_A_MAX,
	}, {
		.cmd = CRDBG_CMD_FREEZE,
		.doit = crdbg_do_freeze,
		.policy = freeze_policy,
		.maxattr = CRDBG_A_MAX,
	}, {
		.cmd = CRDBG_CMD_THAW,
		.doit = crdbg_do_thaw,
		.policy = target_policy,
		.maxattr = CRDBG_A_MAX,
	}, {
		.cmd = CRDBG_CMD_QUERY,
		.doit = crdbg_do_query,
		.dumpit = crdbg_dump_query,
		.policy = target_policy,
		.maxattr = CRDBG_A_MAX,
	}, {
		.cmd = CRDBG_CMD_PUSH_HOOK,
		.doit = crdbg_do_push_hook,
		.policy = hook_policy,
		.maxattr = CRDBG_A_MAX,
	},
};

#ifndef GENL_MCAST_CAP_SYS_ADMIN
#error "crdbg.ko needs GENL_MCAST_CAP_SYS_ADMIN (Linux 6.1.66 or later) to keep its events to root"
#endif

/*
 * Events name init-namespace pids, so they go to the initial network
 * namespace only, and only a listener with CAP_SYS_ADMIN there (in the
 * initial user namespace) may join: nobody else learns which processes
 * are frozen.
 */
static const struct genl_multicast_group genl_mcgrps[] = {
	{ .name = CRDBG_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_SYS_ADMIN },
};

static struct genl_family genl_family __ro_after_init = {
	.ops = genl_ops,
	.n_ops = ARRAY_SIZE(genl_ops),
	.resv_start_op = 0,
	.name = CRDBG_GENL_NAME,
	.version = CRDBG_GENL_VERSION,
	.maxattr = CRDBG_A_MAX,
	.mcgrps = genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(genl_mcgrps),
	.module = THIS_MODULE,
	.netnsok = true,
	/* No genl_mutex around our handlers: a FREEZE's wait holds nothing global. */
	.parallel_ops = true,
};

void crdbg_genl_event(u32 event, pid_t pid, pid_t tid, u32 reason)
{
	struct sk_buff *msg;
	void *hdr;

	if (!READ_ONCE(events_on))
		return;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &genl_family, 0, CRDBG_CMD_EVENT);
	if (!hdr ||
	    nla_put_u32(msg, CRDBG_A_EVENT, event) ||
	    nla_put_u32(msg, CRDBG_A_PID, pid) ||
	    (tid && nla_put_u32(msg, CRDBG_A_TID, tid)) ||
	    (reason && nla_put_u32(msg, CRDBG_A_REASON, reason))) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	rcu_read_lock();
	if (READ_ONCE(events_on))
		genlmsg_multicast(&genl_family, msg, 0, 0, GFP_ATOMIC);
	else
		nlmsg_free(msg);
	rcu_read_unlock();
}

int __init crdbg_genl_init(void)
{
	int ret = genl_register_family(&genl_family);

	if (!ret)
		WRITE_ONCE(events_on, true);
	return ret;
}

void crdbg_genl_uninit(void)
{
	WRITE_ONCE(events_on, false);
	synchronize_rcu();	/* no event is being sent any more */
	genl_unregister_family(&genl_family);
}
