/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRDBG_PERM_H
#define CRDBG_PERM_H

#include <linux/types.h>

struct cred;
struct mm_struct;
struct netlink_ext_ack;
struct sk_buff;
struct task_struct;

/* Resolve the kernel's ptrace check; 0 or a negative errno. */
int crdbg_perm_init(void);

/*
 * Hold @leader's exec_update_lock for reading (killable: 0 or -EINTR)
 * across a check and the operation it allows, so no exec can commit new
 * credentials or a new mm in between.
 */
int crdbg_perm_lock(struct task_struct *leader);
void crdbg_perm_unlock(struct task_struct *leader);

/*
 * May the sender of @skb act on @leader's thread group as if it
 * ptrace-attached to every thread of it? Both the socket's opener and the
 * writer must pass: CAP_SYS_PTRACE over the target, or the /proc/<pid>/mem
 * proof @proof_fd (>= 0, in the writer's fd table, counted only when the
 * writer is the opener), or ptrace_may_access(PTRACE_MODE_ATTACH_REALCREDS)
 * on every thread. Call it under crdbg_perm_lock(). Returns 0 or -EPERM
 * (-EBADF for a bad fd), with a reason in @extack.
 */
int crdbg_perm_check(struct task_struct *leader, const struct sk_buff *skb, int proof_fd,
		     struct netlink_ext_ack *extack);

/*
 * The mm of @leader's thread group, referenced (mmput() it, outside RCU),
 * from any thread that still has one: a zombie leader has none. NULL if
 * no thread has.
 */
struct mm_struct *crdbg_group_mm(struct task_struct *leader);

/* Same ids, permitted capabilities and user namespace? */
bool crdbg_cred_same(const struct cred *a, const struct cred *b);

#endif /* CRDBG_PERM_H */
