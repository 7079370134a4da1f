/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRDBG_FREEZE_H
#define CRDBG_FREEZE_H

#include <linux/types.h>
#include <linux/crdbg.h>

struct net;
struct pid;
struct netlink_ext_ack;
struct task_struct;

/* One thread as QUERY reports it. */
struct crdbg_thread_info {
	pid_t tid;		/* in the caller's pid namespace */
	u32 state;		/* enum crdbg_thread_state */
	u32 flags;		/* CRDBG_THREAD_F_* */
	bool regs_valid;
	struct crdbg_regs regs;
};

struct crdbg_freeze_info {
	u32 flags;		/* CRDBG_F_* */
	u32 owner_portid;	/* 0 if persistent */
	unsigned int nr_threads;
	struct crdbg_thread_info threads[];
};

/* One frozen process as a QUERY dump lists it. */
struct crdbg_freeze_brief {
	struct pid *pid;	/* referenced: put_pid() it */
	u32 flags;
	u32 owner_portid;
};

int crdbg_freeze_init(void);
void crdbg_freeze_uninit(void);

unsigned int crdbg_freeze_count(void);

/* How long FREEZE waits for threads to park before it returns what it has. */
#define CRDBG_FREEZE_GRACE HZ

struct crdbg_freeze;

/*
 * FREEZE in two steps. begin(), under the target's exec_update_lock (the
 * permission check's), records the freeze and arms every thread; it
 * returns the freeze, referenced, or an ERR_PTR. finish(), after the lock
 * is dropped, waits for the threads (killable, at most twice
 * CRDBG_FREEZE_GRACE) and drops the reference. @leader is the target's
 * thread-group leader, referenced by the caller.
 */
struct crdbg_freeze *crdbg_freeze_begin(struct task_struct *leader, struct net *net,
					u32 portid, u32 flags, struct netlink_ext_ack *extack);
int crdbg_freeze_finish(struct crdbg_freeze *fz, struct netlink_ext_ack *extack);
int crdbg_thaw(struct task_struct *leader, struct netlink_ext_ack *extack);

/* Returns a kvmalloc'ed snapshot (kvfree it) or an ERR_PTR. */
struct crdbg_freeze_info *crdbg_freeze_query(struct task_struct *leader,
					     struct netlink_ext_ack *extack);

/*
 * Fill up to @max entries, skipping the first @skip frozen processes;
 * returns how many were filled.
 */
unsigned int crdbg_freeze_list(struct crdbg_freeze_brief *out, unsigned int max,
			       unsigned long skip);

/* @thread: NULL for every thread, else one thread of @leader's group. */
int crdbg_freeze_set_hook(struct task_struct *leader, struct task_struct *thread,
			  u64 trampoline, u64 arg, struct netlink_ext_ack *extack);

#endif /* CRDBG_FREEZE_H */
