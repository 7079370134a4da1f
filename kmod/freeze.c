// SPDX-License-Identifier: GPL-2.0
/*
 * Exact freeze. Every thread of a frozen target gets a task_work queued
 * with TWA_SIGNAL; it runs in the thread's own context on its way back to
 * user mode and parks there, in a loop modelled on do_freezer_trap(), until
 * THAW, a fatal signal, or a ptrace tracer that wants the thread. A thread
 * left to a tracer is re-armed when the tracer lets go (a kprobe on
 * __ptrace_unlink, which every detach path and a tracer's exit go
 * through), so it parks again before its next user instruction. New
 * threads are armed from the sched_process_fork tracepoint before they
 * first run; sched_process_exit and sched_process_exec clean up. See
 * Documentation/kmod.md for the design and its limits.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/cred.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/jobctl.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>
#include <linux/mm.h>
#include <linux/wait.h>
#include <asm/user.h>

#include "freeze.h"
#include "hook.h"
#include "netlink.h"
#include "perm.h"
#include "regs.h"

enum {
	THREAD_QUEUED,		/* work is on the task's task_works list */
};

struct crdbg_thread {
	struct callback_head work;
	struct list_head node;		/* in freeze->threads, under freeze->lock */
	refcount_t ref;			/* the list and a queued work each hold one */
	struct crdbg_freeze *freeze;	/* referenced */
	struct task_struct *task;	/* referenced */
	unsigned long bits;
	u32 state;			/* enum crdbg_thread_state */
	u64 exec_id;			/* task's self_exec_id when frozen */
	bool regs_valid;
	bool hook_pending;
	bool hook_dumpable;		/* target was dumpable at PUSH_HOOK */
	u64 hook_trampoline;
	u64 hook_arg;
	u64 hook_exec_id;		/* task's self_exec_id at PUSH_HOOK */
	const struct cred *hook_cred;	/* task's creds at PUSH_HOOK, referenced */
	struct crdbg_regs regs;
};

struct crdbg_freeze {
	struct list_head node;		/* in freezes, RCU */
	refcount_t ref;
	struct signal_struct *signal;	/* the key; kept alive by leader */
	struct task_struct *leader;	/* referenced */
	struct pid *tgid;		/* referenced */
	struct net *net;		/* owner socket, compared only */
	const struct cred *cred;	/* leader's creds when frozen, referenced */
	int dumpable;			/* get_dumpable() when frozen, -1 without mm */
	u32 portid;			/* 0 when persistent */
	u32 flags;
	bool released;			/* under freezes_lock */
	bool thawed;
	spinlock_t lock;		/* threads and every field of them */
	struct list_head threads;
	wait_queue_head_t wq;		/* parked threads sleep here */
	wait_queue_head_t progress;	/* FREEZE waits here for parks */
	struct rcu_head rcu;
};

static LIST_HEAD(freezes);
static DEFINE_SPINLOCK(freezes_lock);	/* list writers; readers use RCU */
static atomic_t nr_frozen = ATOMIC_INIT(0);
static atomic_t works_in_flight = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(works_wq);	/* unload waits for the works */
static bool unloading;

unsigned int crdbg_freeze_count(void)
{
	return atomic_read(&nr_frozen);
}

static void freeze_put(struct crdbg_freeze *fz)
{
	if (!refcount_dec_and_test(&fz->ref))
		return;
	put_pid(fz->tgid);
	put_task_struct(fz->leader);
	if (fz->cred)
		put_cred(fz->cred);
	kfree_rcu(fz, rcu);
}

/* Forget @t's pending hook. Under freeze->lock. */
static void hook_clear_locked(struct crdbg_thread *t)
{
	t->hook_pending = false;
	if (t->hook_cred) {
		put_cred(t->hook_cred);
		t->hook_cred = NULL;
	}
}

static void thread_put(struct crdbg_thread *t)
{
	if (!refcount_dec_and_test(&t->ref))
		return;
	if (t->hook_cred)
		put_cred(t->hook_cred);
	put_task_struct(t->task);
	freeze_put(t->freeze);
	kfree(t);
}

/* Under rcu_read_lock(); no reference taken. */
static struct crdbg_freeze *freeze_find_rcu(struct signal_struct *signal)
{
	struct crdbg_freeze *fz;

	list_for_each_entry_rcu(fz, &freezes, node)
		if (fz->signal == signal)
			return fz;
	return NULL;
}

static struct crdbg_freeze *freeze_get_by_task(struct task_struct *task)
{
	struct crdbg_freeze *fz;

	rcu_read_lock();
	fz = freeze_find_rcu(task->signal);
	if (fz && !refcount_inc_not_zero(&fz->ref))
		fz = NULL;
	rcu_read_unlock();
	return fz;
}

/* Under freeze->lock. */
static struct crdbg_thread *thread_find_locked(struct crdbg_freeze *fz,
					       struct task_struct *task)
{
	struct crdbg_thread *t;

	list_for_each_entry(t, &fz->threads, node)
		if (t->task == task)
			return t;
	return NULL;
}

static void park_work(struct callback_head *cb);

/*
 * The last thing a work does. Unload frees the module text once the count
 * is zero; with interrupts off here, only an interrupt that preempts the
 * few instructions of the return (preempt=full kernels only) could still
 * be in this text then, and free_module()'s synchronize_rcu() follows.
 */
static void works_done(void)
{
	unsigned long flags;

	local_irq_save(flags);
	if (atomic_dec_and_test(&works_in_flight))
		wake_up_all(&works_wq);
	local_irq_restore(flags);
}

/* Queue the parking work unless it is queued already. Under freeze->lock. */
static void thread_arm_locked(struct crdbg_thread *t)
{
	if (t->state == CRDBG_THREAD_EXITED || test_and_set_bit(THREAD_QUEUED, &t->bits))
		return;
	refcount_inc(&t->ref);
	atomic_inc(&works_in_flight);
	init_task_work(&t->work, park_work);
	if (task_work_add(t->task, &t->work, TWA_SIGNAL)) {
		/* Past exit_task_work(): it will never return to user mode. */
		clear_bit(THREAD_QUEUED, &t->bits);
		t->state = CRDBG_THREAD_EXITED;
		refcount_dec(&t->ref);	/* the list still holds one */
		works_done();
	}
}

/* A thread record of @fz for @task, or a spare (task NULL) for arm_all(). */
static struct crdbg_thread *thread_alloc(struct crdbg_freeze *fz,
					 struct task_struct *task, gfp_t gfp)
{
	struct crdbg_thread *t = kzalloc(sizeof(*t), gfp);

	if (!t)
		return NULL;
	refcount_set(&t->ref, 1);
	refcount_inc(&fz->ref);
	t->freeze = fz;
	t->state = CRDBG_THREAD_PENDING;
	if (task) {
		get_task_struct(task);
		t->task = task;
		t->exec_id = READ_ONCE(task->self_exec_id);
	}
	return t;
}

static bool skip_task(struct task_struct *p)
{
	return (p->flags & (PF_KTHREAD | PF_IO_WORKER | PF_EXITING)) || p->exit_state;
}

static void capture_regs(struct crdbg_regs *regs)
{
	struct user_regs_struct ur;

	BUILD_BUG_ON(sizeof(ur) != sizeof(*regs));
	if (crdbg_user_regs(&ur))
		memcpy(regs, &ur, sizeof(ur));
	else
		memset(regs, 0, sizeof(*regs));
}

enum leave_reason {
	STAY,
	LEAVE_THAWED,
	LEAVE_FATAL,
	LEAVE_TRACER,
};

/*
 * Under current's siglock. A traced thread leaves when its tracer wants
 * it (a trap such as PTRACE_INTERRUPT, or a signal to report, SIGSTOP of
 * PTRACE_ATTACH included); an untraced one only on thaw or death, and its
 * other signals stay queued.
 */
static enum leave_reason leave_reason_locked(struct crdbg_freeze *fz)
{
	if (READ_ONCE(fz->thawed))
		return LEAVE_THAWED;
	if (fatal_signal_pending(current))
		return LEAVE_FATAL;
	if (current->ptrace && (test_thread_flag(TIF_SIGPENDING) ||
				(current->jobctl & JOBCTL_TRAP_MASK)))
		return LEAVE_TRACER;
	return STAY;
}

static enum leave_reason park(struct crdbg_thread *t)
{
	struct crdbg_freeze *fz = t->freeze;
	enum leave_reason why;
	struct crdbg_regs regs;
	DEFINE_WAIT(wait);

	capture_regs(&regs);
	spin_lock_irq(&fz->lock);
	t->regs = regs;
	t->regs_valid = true;
	t->state = CRDBG_THREAD_PARKED;
	spin_unlock_irq(&fz->lock);
	wake_up_all(&fz->progress);

	for (;;) {
		prepare_to_wait(&fz->wq, &wait, TASK_INTERRUPTIBLE | TASK_FREEZABLE);
		spin_lock_irq(&current->sighand->siglock);
		why = leave_reason_locked(fz);
		if (why == STAY) {
			/*
			 * Like do_freezer_trap(): pending signals stay queued;
			 * without the flags schedule() would return at once.
			 */
			clear_thread_flag(TIF_SIGPENDING);
			clear_notify_signal();
		}
		spin_unlock_irq(&current->sighand->siglock);
		if (why != STAY)
			break;
		schedule();
	}
	finish_wait(&fz->wq, &wait);

	spin_lock_irq(&current->sighand->siglock);
	recalc_sigpending();
	spin_unlock_irq(&current->sighand->siglock);
	return why;
}

/*
 * Is the hook set on @t still meant for current, which runs it? 0, or why
 * not (enum crdbg_hook_drop): an exec since PUSH_HOOK, other credentials,
 * or a target that was dumpable then and is not now. Under freeze->lock.
 */
static u32 hook_stale(const struct crdbg_thread *t)
{
	if (READ_ONCE(current->self_exec_id) != t->hook_exec_id)
		return CRDBG_HOOK_DROP_EXEC;
	if (!t->hook_cred || !crdbg_cred_same(current_cred(), t->hook_cred))
		return CRDBG_HOOK_DROP_CREDS;
	if (t->hook_dumpable && (!current->mm || get_dumpable(current->mm) != SUID_DUMP_USER))
		return CRDBG_HOOK_DROP_DUMPABLE;
	return 0;
}

static void park_work(struct callback_head *cb)
{
	struct crdbg_thread *t = container_of(cb, struct crdbg_thread, work);
	struct crdbg_freeze *fz = t->freeze;
	enum leave_reason why = LEAVE_FATAL;
	bool hook = false;
	u64 tramp = 0, arg = 0;
	u32 dropped = 0;

	/* From here a re-arm (tracer detach, thaw with a hook) queues afresh. */
	clear_bit(THREAD_QUEUED, &t->bits);
	/* Order the clear before our reads of thawed and the signal state. */
	smp_mb__after_atomic();

	if (!(current->flags & PF_EXITING) && !fatal_signal_pending(current)) {
		if (READ_ONCE(fz->thawed))
			why = LEAVE_THAWED;
		else if (current->ptrace && test_thread_flag(TIF_SIGPENDING))
			why = LEAVE_TRACER;	/* the tracer gets it first */
		else
			why = park(t);
	}

	spin_lock_irq(&fz->lock);
	switch (why) {
	case LEAVE_THAWED:
		if (t->hook_pending && !READ_ONCE(unloading)) {
			dropped = hook_stale(t);
			hook = !dropped;
			tramp = t->hook_trampoline;
			arg = t->hook_arg;
		}
		hook_clear_locked(t);
		t->state = CRDBG_THREAD_PENDING;
		break;
	case LEAVE_TRACER:
		t->state = CRDBG_THREAD_TRACED;
		break;
	default:
		t->state = CRDBG_THREAD_EXITED;
		break;
	}
	spin_unlock_irq(&fz->lock);
	wake_up_all(&fz->progress);

	if (dropped)
		crdbg_genl_event(CRDBG_EVENT_HOOK_DROPPED, task_tgid_nr(current),
				 task_pid_nr(current), dropped);
	if (hook) {
		/* The target's own doing (a bad stack, a hook still running): no log line. */
		if (crdbg_hook_deliver(tramp, arg) < 0)
			crdbg_genl_event(CRDBG_EVENT_HOOK_DROPPED, task_tgid_nr(current),
					 task_pid_nr(current), CRDBG_HOOK_DROP_FAILED);
	}

	thread_put(t);
	works_done();
}

/* Take @fz off the list and let every thread go. Idempotent. */
static void freeze_release(struct crdbg_freeze *fz, u32 event)
{
	struct crdbg_thread *t, *tmp;
	LIST_HEAD(threads);
	unsigned long irqflags;

	spin_lock_irqsave(&freezes_lock, irqflags);
	if (fz->released) {
		spin_unlock_irqrestore(&freezes_lock, irqflags);
		return;
	}
	fz->released = true;
	list_del_rcu(&fz->node);
	atomic_dec(&nr_frozen);
	spin_unlock_irqrestore(&freezes_lock, irqflags);

	/* Before any thread can leave: listeners see THAWED before HOOK_RAN. */
	crdbg_genl_event(event, pid_nr(fz->tgid), 0, 0);

	spin_lock_irqsave(&fz->lock, irqflags);
	WRITE_ONCE(fz->thawed, true);
	/* A thread away from its park (traced, asleep) still owes its hook. */
	list_for_each_entry(t, &fz->threads, node)
		if (t->hook_pending && !READ_ONCE(unloading))
			thread_arm_locked(t);
	list_splice_init(&fz->threads, &threads);
	spin_unlock_irqrestore(&fz->lock, irqflags);
	wake_up_all(&fz->wq);
	wake_up_all(&fz->progress);

	list_for_each_entry_safe(t, tmp, &threads, node) {
		list_del(&t->node);
		thread_put(t);
	}
	freeze_put(fz);		/* the list's reference */
}

/*
 * Arm every thread of @fz that has no record yet. Threads created from now
 * on are caught by the fork tracepoint (fz is on the list already); this
 * catches the ones created before. Returns how many records are missing
 * when @spare ran out, 0 when done.
 */
static unsigned int arm_all(struct crdbg_freeze *fz, struct list_head *spare)
{
	struct task_struct *p;
	unsigned int missing = 0;

	rcu_read_lock();
	for_each_thread(fz->leader, p) {
		struct crdbg_thread *t;

		if (skip_task(p))
			continue;
		spin_lock_irq(&fz->lock);
		if (READ_ONCE(fz->thawed)) {	/* died meanwhile */
			spin_unlock_irq(&fz->lock);
			break;
		}
		if (thread_find_locked(fz, p)) {
			spin_unlock_irq(&fz->lock);
			continue;
		}
		t = list_first_entry_or_null(spare, struct crdbg_thread, node);
		if (!t) {
			spin_unlock_irq(&fz->lock);
			missing++;
			continue;
		}
		list_del(&t->node);
		get_task_struct(p);
		t->task = p;	/* a spare from thread_alloc() */
		t->exec_id = READ_ONCE(p->self_exec_id);
		list_add_tail(&t->node, &fz->threads);
		thread_arm_locked(t);
		spin_unlock_irq(&fz->lock);
	}
	rcu_read_unlock();
	return missing;
}

/*
 * Can @t no longer run a user instruction before it parks? @strict: an
 * interruptible sleeper is woken by TWA_SIGNAL and parks at once, so wait
 * for that (and its registers) during a grace period.
 */
static bool thread_stopped(struct crdbg_thread *t, bool strict)
{
	struct task_struct *p = t->task;
	unsigned int state;

	if (t->state != CRDBG_THREAD_PENDING)
		return true;		/* parked, traced or gone */
	if (p->ptrace || p->exit_state || (p->flags & PF_EXITING))
		return true;
	/*
	 * Any state but TASK_RUNNING means it is in the kernel; the work is
	 * queued with TIF_NOTIFY_SIGNAL set, so it parks before user mode.
	 */
	state = READ_ONCE(p->__state);
	if (strict && (state & TASK_INTERRUPTIBLE))
		return false;
	if (state != TASK_RUNNING)
		return true;
	/*
	 * Runnable but on no CPU (preempted, or throttled by its cgroup):
	 * it left user mode through an interrupt or a syscall and goes back
	 * through the exit-to-user loop, which runs the queued work first.
	 */
	return !strict && !READ_ONCE(p->on_cpu);
}

static bool all_stopped(struct crdbg_freeze *fz, bool strict)
{
	struct crdbg_thread *t;
	bool done = true;

	spin_lock_irq(&fz->lock);
	list_for_each_entry(t, &fz->threads, node) {
		if (!thread_stopped(t, strict)) {
			done = false;
			break;
		}
	}
	spin_unlock_irq(&fz->lock);
	return done || READ_ONCE(fz->released);
}

static void free_spare(struct list_head *spare)
{
	struct crdbg_thread *t, *tmp;

	list_for_each_entry_safe(t, tmp, spare, node) {
		list_del(&t->node);
		freeze_put(t->freeze);
		kfree(t);
	}
}

/* get_dumpable() of the target's mm, -1 if no thread has one. */
static int group_dumpable(struct task_struct *leader)
{
	struct mm_struct *mm = crdbg_group_mm(leader);
	int ret;

	if (!mm)
		return -1;
	ret = get_dumpable(mm);
	mmput(mm);	/* may be the last reference: never under RCU */
	return ret;
}

struct crdbg_freeze *crdbg_freeze_begin(struct task_struct *leader, struct net *net,
					u32 portid, u32 flags, struct netlink_ext_ack *extack)
{
	struct crdbg_freeze *fz, *old;
	unsigned int missing, rounds;
	LIST_HEAD(spare);
	int ret = 0;

	if (same_thread_group(leader, current)) {
		NL_SET_ERR_MSG(extack, "a process cannot freeze itself");
		return ERR_PTR(-EDEADLK);
	}

	fz = kzalloc(sizeof(*fz), GFP_KERNEL);
	if (!fz)
		return ERR_PTR(-ENOMEM);
	refcount_set(&fz->ref, 1);
	get_task_struct(leader);
	fz->leader = leader;
	fz->signal = leader->signal;
	fz->tgid = get_task_pid(leader, PIDTYPE_TGID);
	fz->cred = get_task_cred(leader);
	fz->dumpable = group_dumpable(leader);
	fz->net = net;
	fz->portid = (flags & CRDBG_F_PERSIST) ? 0 : portid;
	fz->flags = flags;
	spin_lock_init(&fz->lock);
	INIT_LIST_HEAD(&fz->threads);
	init_waitqueue_head(&fz->wq);
	init_waitqueue_head(&fz->progress);

	spin_lock_irq(&freezes_lock);
	rcu_read_lock();
	old = freeze_find_rcu(leader->signal);
	rcu_read_unlock();
	if (old || READ_ONCE(unloading) || (leader->signal->flags & SIGNAL_GROUP_EXIT)) {
		spin_unlock_irq(&freezes_lock);
		freeze_put(fz);
		if (old) {
			NL_SET_ERR_MSG(extack, "target is already frozen");
			return ERR_PTR(-EALREADY);
		}
		NL_SET_ERR_MSG(extack, "target is exiting");
		return ERR_PTR(-ESRCH);
	}
	refcount_inc(&fz->ref);		/* the list's */
	list_add_rcu(&fz->node, &freezes);
	atomic_inc(&nr_frozen);
	spin_unlock_irq(&freezes_lock);

	for (missing = get_nr_threads(leader) + 1, rounds = 0; missing; rounds++) {
		while (missing--) {
			struct crdbg_thread *t = thread_alloc(fz, NULL, GFP_KERNEL);

			if (!t) {
				ret = -ENOMEM;
				goto out_release;
			}
			list_add(&t->node, &spare);
		}
		missing = arm_all(fz, &spare);
		if (rounds > 1000) {
			NL_SET_ERR_MSG(extack, "target keeps creating threads");
			ret = -EAGAIN;
			goto out_release;
		}
	}
	free_spare(&spare);
	spin_lock_irq(&fz->lock);
	rounds = list_empty(&fz->threads);
	spin_unlock_irq(&fz->lock);
	if (rounds) {
		NL_SET_ERR_MSG(extack, "target has no live user thread");
		ret = -ESRCH;
		goto out_release;
	}
	return fz;

out_release:
	free_spare(&spare);
	freeze_release(fz, CRDBG_EVENT_THAWED);
	freeze_put(fz);
	return ERR_PTR(ret);
}

/*
 * Wait, killable and on this freeze's own queue, for every thread to be
 * parked or provably on its way to park (see thread_stopped()); during the
 * grace a thread sleeping interruptibly must park (so QUERY has its
 * registers). At the end of the grace FREEZE returns what it has: a thread
 * still not parked is reported PENDING.
 */
int crdbg_freeze_finish(struct crdbg_freeze *fz, struct netlink_ext_ack *extack)
{
	unsigned long grace = jiffies + CRDBG_FREEZE_GRACE;
	int ret = 0;

	while (!all_stopped(fz, time_before(jiffies, grace))) {
		long left;

		if (time_after_eq(jiffies, grace + CRDBG_FREEZE_GRACE))
			break;		/* running in user mode after the kick: see kmod.md */
		left = wait_event_killable_timeout(fz->progress,
						   all_stopped(fz, time_before(jiffies, grace)),
						   msecs_to_jiffies(10));
		if (left < 0) {
			ret = -EINTR;
			NL_SET_ERR_MSG(extack, "interrupted while waiting for the target to park");
			freeze_release(fz, CRDBG_EVENT_THAWED);
			goto out;
		}
	}
	if (READ_ONCE(fz->released)) {
		NL_SET_ERR_MSG(extack, "target exited, exec'd or was thawed while being frozen");
		ret = -ESRCH;
		goto out;
	}
	crdbg_genl_event(CRDBG_EVENT_FROZEN, pid_nr(fz->tgid), 0, 0);
out:
	freeze_put(fz);
	return ret;
}

int crdbg_thaw(struct task_struct *leader, struct netlink_ext_ack *extack)
{
	struct crdbg_freeze *fz;

	fz = freeze_get_by_task(leader);
	if (!fz) {
		NL_SET_ERR_MSG(extack, "target is not frozen");
		return -ENOENT;
	}
	freeze_release(fz, CRDBG_EVENT_THAWED);
	freeze_put(fz);
	return 0;
}

struct crdbg_freeze_info *crdbg_freeze_query(struct task_struct *leader,
					     struct netlink_ext_ack *extack)
{
	struct crdbg_freeze_info *info = NULL;
	struct crdbg_freeze *fz;
	struct crdbg_thread *t;
	unsigned int n, i;

	fz = freeze_get_by_task(leader);
	if (!fz) {
		NL_SET_ERR_MSG(extack, "target is not frozen");
		return ERR_PTR(-ENOENT);
	}
	for (;;) {
		spin_lock_irq(&fz->lock);
		n = list_count_nodes(&fz->threads);
		spin_unlock_irq(&fz->lock);
		kvfree(info);
		info = kvzalloc(struct_size(info, threads, n), GFP_KERNEL);
		if (!info) {
			freeze_put(fz);
			return ERR_PTR(-ENOMEM);
		}
		spin_lock_irq(&fz->lock);
		if (list_count_nodes(&fz->threads) <= n)
			break;
		spin_unlock_irq(&fz->lock);
	}
	i = 0;
	list_for_each_entry(t, &fz->threads, node) {
		struct crdbg_thread_info *ti = &info->threads[i++];

		ti->tid = task_pid_vnr(t->task);
		ti->state = t->state;
		ti->flags = t->hook_pending ? CRDBG_THREAD_F_HOOK_PENDING : 0;
		if (crdbg_hook_in_flight(t->task))
			ti->flags |= CRDBG_THREAD_F_HOOK_IN_FLIGHT;
		ti->regs_valid = t->regs_valid;
		ti->regs = t->regs;
	}
	info->nr_threads = i;
	info->flags = fz->flags;
	info->owner_portid = fz->portid;
	spin_unlock_irq(&fz->lock);
	freeze_put(fz);
	return info;
}

unsigned int crdbg_freeze_list(struct crdbg_freeze_brief *out, unsigned int max,
			       unsigned long skip)
{
	struct crdbg_freeze *fz;
	unsigned long i = 0;
	unsigned int n = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(fz, &freezes, node) {
		if (i++ < skip)
			continue;
		if (n == max)
			break;
		out[n].pid = get_pid(fz->tgid);
		out[n].flags = fz->flags;
		out[n].owner_portid = fz->portid;
		n++;
	}
	rcu_read_unlock();
	return n;
}

/*
 * Why @t may not get a hook now: it exec'd since it was frozen, its
 * credentials are not those the target was frozen with, or the target lost
 * its dumpable flag. NULL if it may. Under freeze->lock.
 */
static const char *hook_refused(const struct crdbg_freeze *fz, const struct crdbg_thread *t,
				int dumpable)
{
	bool same;

	if (READ_ONCE(t->task->self_exec_id) != t->exec_id)
		return "a selected thread exec'd since the freeze";
	rcu_read_lock();
	same = crdbg_cred_same(__task_cred(t->task), fz->cred);
	rcu_read_unlock();
	if (!same)
		return "a selected thread's credentials changed since the freeze";
	if (fz->dumpable == SUID_DUMP_USER && dumpable != SUID_DUMP_USER)
		return "the target is no longer dumpable";
	return NULL;
}

int crdbg_freeze_set_hook(struct task_struct *leader, struct task_struct *thread,
			  u64 trampoline, u64 arg, struct netlink_ext_ack *extack)
{
	int dumpable = group_dumpable(leader);
	struct crdbg_freeze *fz;
	struct crdbg_thread *t;
	const char *why;
	int ret = 0, n = 0;

	fz = freeze_get_by_task(leader);
	if (!fz) {
		NL_SET_ERR_MSG(extack, "target is not frozen");
		return -ENOENT;
	}
	spin_lock_irq(&fz->lock);
	if (READ_ONCE(fz->thawed)) {
		NL_SET_ERR_MSG(extack, "target is not frozen");
		ret = -ENOENT;
		goto out;
	}
	list_for_each_entry(t, &fz->threads, node) {
		if (t->state == CRDBG_THREAD_EXITED || (thread && t->task != thread))
			continue;
		if (t->hook_pending || crdbg_hook_in_flight(t->task)) {
			NL_SET_ERR_MSG(extack, "a hook is already pending or running in a selected thread");
			ret = -EBUSY;
			goto out;
		}
		why = hook_refused(fz, t, dumpable);
		if (why) {
			if (extack)
				extack->_msg = why;	/* a literal; NL_SET_ERR_MSG wants one in place */
			ret = -ESTALE;
			goto out;
		}
		n++;
	}
	if (!n) {
		NL_SET_ERR_MSG(extack, "no such live thread in the frozen target");
		ret = -ESRCH;
		goto out;
	}
	list_for_each_entry(t, &fz->threads, node) {
		if (t->state == CRDBG_THREAD_EXITED || (thread && t->task != thread))
			continue;
		t->hook_pending = true;
		t->hook_trampoline = trampoline;
		t->hook_arg = arg;
		t->hook_exec_id = READ_ONCE(t->task->self_exec_id);
		t->hook_cred = get_task_cred(t->task);
		t->hook_dumpable = dumpable == SUID_DUMP_USER;
	}
out:
	spin_unlock_irq(&fz->lock);
	freeze_put(fz);
	return ret;
}

/* ---- Hooks into the scheduler, ptrace and netlink ---- */

static void on_fork(void *data, struct task_struct *parent, struct task_struct *child)
{
	struct crdbg_freeze *fz;
	struct crdbg_thread *t;
	unsigned long irqflags;

	if (!atomic_read(&nr_frozen) || child->signal != parent->signal ||
	    (child->flags & (PF_KTHREAD | PF_IO_WORKER)))
		return;
	rcu_read_lock();
	fz = freeze_find_rcu(child->signal);
	if (!fz)
		goto out;
	t = thread_alloc(fz, child, GFP_ATOMIC);
	if (!t) {
		pr_err_ratelimited("no memory to freeze new thread %d\n", task_pid_nr(child));
		goto out;
	}
	spin_lock_irqsave(&fz->lock, irqflags);
	if (READ_ONCE(fz->thawed) || thread_find_locked(fz, child)) {
		spin_unlock_irqrestore(&fz->lock, irqflags);
		thread_put(t);
		goto out;
	}
	list_add_tail(&t->node, &fz->threads);
	thread_arm_locked(t);
	spin_unlock_irqrestore(&fz->lock, irqflags);
out:
	rcu_read_unlock();
}

static void on_exit(void *data, struct task_struct *p)
{
	struct crdbg_freeze *fz;
	struct crdbg_thread *t;
	unsigned long irqflags;
	/*
	 * do_exit() drops signal->live before this tracepoint: 0 means the
	 * whole thread group is on its way out. Recorded threads all gone is
	 * not enough: while FREEZE is still arming, the only ones recorded
	 * may be short-lived threads that exit while the rest of the target
	 * runs on.
	 */
	bool group_dead = !atomic_read(&p->signal->live);

	crdbg_hook_forget(p);
	if (!atomic_read(&nr_frozen))
		return;
	rcu_read_lock();
	fz = freeze_find_rcu(p->signal);
	if (!fz || !refcount_inc_not_zero(&fz->ref)) {
		rcu_read_unlock();
		return;
	}
	rcu_read_unlock();

	spin_lock_irqsave(&fz->lock, irqflags);
	list_for_each_entry(t, &fz->threads, node)
		if (t->task == p)
			t->state = CRDBG_THREAD_EXITED;
	spin_unlock_irqrestore(&fz->lock, irqflags);
	if (group_dead)
		freeze_release(fz, CRDBG_EVENT_EXITED);
	freeze_put(fz);
}

/*
 * After the exec committed its credentials and mm. The freeze survives an
 * exec that keeps the credentials it was made with and the dumpable flag
 * (its records now name the new image); any other exec ends it, as if
 * thawed, since whoever froze the old image may have no right over the
 * new one. Pending hooks (their trampoline meant the old image), the hook
 * in flight and its cookie are dropped either way.
 */
static void on_exec(void *data, struct task_struct *p, pid_t old_pid,
		    struct linux_binprm *bprm)
{
	struct crdbg_freeze *fz;
	struct crdbg_thread *t;
	unsigned long irqflags;
	bool keep, dropped = false;

	crdbg_hook_forget(p);
	if (!atomic_read(&nr_frozen))
		return;
	rcu_read_lock();
	fz = freeze_find_rcu(p->signal);
	if (fz && !refcount_inc_not_zero(&fz->ref))
		fz = NULL;
	rcu_read_unlock();
	if (!fz)
		return;

	keep = crdbg_cred_same(current_cred(), fz->cred) &&
	       (fz->dumpable != SUID_DUMP_USER ||
		(p->mm && get_dumpable(p->mm) == SUID_DUMP_USER));
	spin_lock_irqsave(&fz->lock, irqflags);
	list_for_each_entry(t, &fz->threads, node) {
		dropped |= t->hook_pending;
		hook_clear_locked(t);
		if (t->task == p)
			t->exec_id = READ_ONCE(p->self_exec_id);
	}
	spin_unlock_irqrestore(&fz->lock, irqflags);
	crdbg_genl_event(CRDBG_EVENT_EXECED, pid_nr(fz->tgid), 0, 0);
	if (dropped)
		crdbg_genl_event(CRDBG_EVENT_HOOK_DROPPED, pid_nr(fz->tgid), 0,
				 CRDBG_HOOK_DROP_EXEC);
	if (!keep)
		freeze_release(fz, CRDBG_EVENT_THAWED);
	freeze_put(fz);
}

/* __ptrace_unlink(child): a tracer lets go; park the thread again. */
static int on_ptrace_unlink(struct kprobe *kp, struct pt_regs *regs)
{
	struct task_struct *child = (struct task_struct *)regs_get_kernel_argument(regs, 0);
	struct crdbg_freeze *fz;
	struct crdbg_thread *t;
	unsigned long irqflags;

	if (!atomic_read(&nr_frozen) || child->exit_state)
		return 0;
	rcu_read_lock();
	fz = freeze_find_rcu(child->signal);
	if (fz) {
		spin_lock_irqsave(&fz->lock, irqflags);
		t = READ_ONCE(fz->thawed) ? NULL : thread_find_locked(fz, child);
		if (t && t->state == CRDBG_THREAD_TRACED) {
			t->state = CRDBG_THREAD_PENDING;
			thread_arm_locked(t);
		}
		spin_unlock_irqrestore(&fz->lock, irqflags);
	}
	rcu_read_unlock();
	return 0;
}

static struct kprobe unlink_kprobe = {
	.symbol_name = "__ptrace_unlink",
	.pre_handler = on_ptrace_unlink,
};

struct tp_hook {
	const char *name;
	void *probe;
	struct tracepoint *tp;
};

static struct tp_hook tp_hooks[] = {
	{ .name = "sched_process_fork", .probe = on_fork },
	{ .name = "sched_process_exit", .probe = on_exit },
	{ .name = "sched_process_exec", .probe = on_exec },
};

static void tp_lookup(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tp_hooks); i++)
		if (!strcmp(tp->name, tp_hooks[i].name))
			tp_hooks[i].tp = tp;
}

static void tp_unregister(unsigned int n)
{
	while (n--)
		tracepoint_probe_unregister(tp_hooks[n].tp, tp_hooks[n].probe, NULL);
	tracepoint_synchronize_unregister();
}

/*
 * Release every freeze owned by (net, portid), or every freeze when net is
 * NULL, sending event for each. Lockless while nothing matches: a socket
 * close that owns no freeze only walks the RCU list.
 */
static void release_matching(const struct net *net, u32 portid, u32 event)
{
	struct crdbg_freeze *fz, *found;

	do {
		found = NULL;
		rcu_read_lock();
		list_for_each_entry_rcu(fz, &freezes, node) {
			if (net && (fz->portid != portid || fz->net != net))
				continue;
			if (!READ_ONCE(fz->released) && refcount_inc_not_zero(&fz->ref)) {
				found = fz;
				break;
			}
		}
		rcu_read_unlock();
		if (found) {
			freeze_release(found, event);
			freeze_put(found);
		}
	} while (found);
}

static int release_notify(struct notifier_block *nb, unsigned long state, void *data)
{
	struct netlink_notify *n = data;

	if (state != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC || !n->portid ||
	    !atomic_read(&nr_frozen))
		return NOTIFY_DONE;
	release_matching(n->net, n->portid, CRDBG_EVENT_RELEASED);
	return NOTIFY_DONE;
}

static struct notifier_block release_nb = {
	.notifier_call = release_notify,
};

static void release_all(void)
{
	release_matching(NULL, 0, CRDBG_EVENT_THAWED);
}

int crdbg_freeze_init(void)
{
	unsigned int i;
	int ret;

	for_each_kernel_tracepoint(tp_lookup, NULL);
	for (i = 0; i < ARRAY_SIZE(tp_hooks); i++) {
		if (!tp_hooks[i].tp) {
			pr_err("tracepoint %s not found\n", tp_hooks[i].name);
			ret = -ENOENT;
			goto err_tp;
		}
		ret = tracepoint_probe_register(tp_hooks[i].tp, tp_hooks[i].probe, NULL);
		if (ret < 0)
			goto err_tp;
	}
	ret = register_kprobe(&unlink_kprobe);
	if (ret < 0) {
		pr_err("cannot probe __ptrace_unlink: %d\n", ret);
		goto err_tp;
	}
	ret = netlink_register_notifier(&release_nb);
	if (ret < 0)
		goto err_notifier;
	return 0;

err_notifier:
	unregister_kprobe(&unlink_kprobe);
err_tp:
	tp_unregister(i);
	return ret;
}

void crdbg_freeze_uninit(void)
{
	netlink_unregister_notifier(&release_nb);
	WRITE_ONCE(unloading, true);
	release_all();
	unregister_kprobe(&unlink_kprobe);
	tp_unregister(ARRAY_SIZE(tp_hooks));
	/* Queued works point into this module: wait until each has run. */
	wait_event(works_wq, !atomic_read(&works_in_flight));
	rcu_barrier();	/* kfree_rcu of the last freezes */
}
