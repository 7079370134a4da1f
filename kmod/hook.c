// SPDX-License-Identifier: GPL-2.0
/*
 * Callback push. crdbg_hook_deliver() runs in the target thread's own
 * context on its way back to user mode (from the parking task_work at
 * thaw): it saves the thread's user registers and restart_block in a
 * kernel-side record, writes the hook frame on the user stack, installs
 * the hook's return fd in the thread and points the thread at the
 * trampoline (fd in rsi). The trampoline comes back through write() on
 * that fd, which puts the saved state back; returning the saved rax as
 * write()'s own result makes the syscall exit path leave it intact, and
 * orig_ax = -1 keeps the signal code from "restarting" anything.
 *
 * The return fd is an anonymous file made for one hook, close-on-exec,
 * and bound to that hook and thread: a write through it by any other task
 * (a child it forked, a program it was passed to, the thread itself after
 * an exec or in a later hook) fails. Exit and exec drop the hook, its
 * cookie and so the binding. The file holds a module reference, so the
 * module stays loaded while a hook can still return through it.
 * /dev/crdbg remains only as root's "is the module loaded" probe: 0600,
 * read-only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/anon_inodes.h>
#include <linux/crdbg.h>
#include <linux/errno.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/ptrace.h>
#include <linux/rseq.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <uapi/linux/rseq.h>
#include <asm/ptrace.h>
#include <asm/unistd.h>
#include <asm/user.h>

#include "hook.h"
#include "regs.h"
#include "netlink.h"

struct hook_ctx {
	struct list_head node;		/* in in_flight, under hook_lock */
	struct task_struct *task;	/* not referenced: dropped at its exit */
	u64 id;				/* binds the return fd's file to this hook */
	u64 cookie;
	struct pt_regs regs;		/* what the thread resumes with */
	struct restart_block restart;
};

static const struct file_operations hook_return_fops;

static LIST_HEAD(in_flight);
static DEFINE_SPINLOCK(hook_lock);
static atomic_t nr_in_flight = ATOMIC_INIT(0);
static atomic64_t last_id = ATOMIC64_INIT(0);
static bool disabled;

static struct hook_ctx *ctx_find_locked(struct task_struct *task)
{
	struct hook_ctx *ctx;

	list_for_each_entry(ctx, &in_flight, node)
		if (ctx->task == task)
			return ctx;
	return NULL;
}

bool crdbg_hook_in_flight(struct task_struct *task)
{
	unsigned long flags;
	bool ret;

	if (!atomic_read(&nr_in_flight))
		return false;
	spin_lock_irqsave(&hook_lock, flags);
	ret = ctx_find_locked(task);
	spin_unlock_irqrestore(&hook_lock, flags);
	return ret;
}

void crdbg_hook_forget(struct task_struct *task)
{
	struct hook_ctx *ctx;
	unsigned long flags;

	if (!atomic_read(&nr_in_flight))
		return;
	spin_lock_irqsave(&hook_lock, flags);
	ctx = ctx_find_locked(task);
	if (ctx) {
		list_del(&ctx->node);
		atomic_dec(&nr_in_flight);
	}
	spin_unlock_irqrestore(&hook_lock, flags);
	kfree(ctx);
}

/* As the kernel does before it delivers a signal (rseq_ip_fixup()). */
static int rseq_abort(struct pt_regs *regs)
{
	struct rseq __user *rseq = current->rseq;
	struct rseq_cs cs;
	u64 cs_ptr;
	u32 sig;

	if (!rseq)
		return 0;
	if (get_user(cs_ptr, &rseq->rseq_cs))
		return -EFAULT;
	if (!cs_ptr)
		return 0;
	if (copy_from_user(&cs, (void __user *)(unsigned long)cs_ptr, sizeof(cs)))
		return -EFAULT;
	if (regs->ip - cs.start_ip >= cs.post_commit_offset)
		return 0;	/* not inside the critical section */
	if (cs.version || cs.abort_ip - cs.start_ip < cs.post_commit_offset ||
	    get_user(sig, (u32 __user *)(unsigned long)(cs.abort_ip - sizeof(u32))) ||
	    sig != current->rseq_sig)
		return -EINVAL;
	if (put_user(0ULL, &rseq->rseq_cs))
		return -EFAULT;
	regs->ip = cs.abort_ip;
	return 0;
}

/* Fold an interrupted syscall's restart into @regs, as if no signal came. */
static void fold_restart(struct pt_regs *regs)
{
	if ((long)regs->orig_ax < 0)
		return;
	switch ((long)regs->ax) {
	case -ERESTARTNOHAND:
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
		regs->ax = regs->orig_ax;
		regs->ip -= 2;
		break;
	case -ERESTART_RESTARTBLOCK:
		regs->ax = __NR_restart_syscall;
		regs->ip -= 2;
		break;
	}
}

static void frame_regs(struct crdbg_regs *out, const struct pt_regs *regs)
{
	struct user_regs_struct ur = {};

	crdbg_user_regs(&ur);	/* segments and bases; pt_regs has the rest */
	ur.r15 = regs->r15;
	ur.r14 = regs->r14;
	ur.r13 = regs->r13;
	ur.r12 = regs->r12;
	ur.bp = regs->bp;
	ur.bx = regs->bx;
	ur.r11 = regs->r11;
	ur.r10 = regs->r10;
	ur.r9 = regs->r9;
	ur.r8 = regs->r8;
	ur.ax = regs->ax;
	ur.cx = regs->cx;
	ur.dx = regs->dx;
	ur.si = regs->si;
	ur.di = regs->di;
	ur.orig_ax = regs->orig_ax;
	ur.ip = regs->ip;
	ur.flags = regs->flags;
	ur.sp = regs->sp;
	BUILD_BUG_ON(sizeof(ur) != sizeof(*out));
	memcpy(out, &ur, sizeof(ur));
}

int crdbg_hook_deliver(u64 trampoline, u64 arg)
{
	struct pt_regs *regs = current_pt_regs();
	struct crdbg_hook_frame frame;
	struct crdbg_regs uregs;
	struct hook_ctx *ctx;
	struct file *file;
	unsigned long sp;
	int ret, fd;

	if (READ_ONCE(disabled))
		return -ENODEV;
	if (!user_64bit_mode(regs))
		return -EOPNOTSUPP;
	if (crdbg_hook_in_flight(current))
		return -EBUSY;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->task = current;
	ctx->id = atomic64_inc_return(&last_id);
	ctx->cookie = get_random_u64();
	ctx->regs = *regs;
	ctx->restart = current->restart_block;
	fold_restart(&ctx->regs);
	ctx->regs.orig_ax = -1;
	ret = rseq_abort(&ctx->regs);
	if (ret < 0)
		goto err;

	/*
	 * ctx->regs is folded already (the kmod return restores it) and
	 * has orig_ax = -1, so the UAPI's fold finds nothing to do.
	 */
	frame_regs(&uregs, &ctx->regs);
	BUILD_BUG_ON(sizeof(frame) % 16);
	sp = crdbg_hook_frame_init(&frame, &uregs, arg, CRDBG_HOOK_RETURN_KMOD,
				   ctx->cookie);
	if (copy_to_user((void __user *)sp, &frame, sizeof(frame))) {
		ret = -EFAULT;
		goto err;
	}

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err;
	}
	file = anon_inode_getfile("[crdbg-hook]", &hook_return_fops,
				  (void *)(uintptr_t)ctx->id, O_WRONLY | O_CLOEXEC);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		ret = PTR_ERR(file);
		goto err;
	}

	spin_lock_irq(&hook_lock);
	list_add(&ctx->node, &in_flight);
	atomic_inc(&nr_in_flight);
	spin_unlock_irq(&hook_lock);
	fd_install(fd, file);

	regs->ip = trampoline;
	regs->sp = sp;
	regs->di = arg;
	regs->si = fd;
	regs->flags &= ~(X86_EFLAGS_DF | X86_EFLAGS_TF);
	regs->orig_ax = -1;	/* the signal code must not rewind the new ip */
	return 0;

err:
	kfree(ctx);
	return ret;
}

static ssize_t hook_write(struct file *file, const char __user *buf, size_t len,
			  loff_t *ppos)
{
	struct crdbg_hook_return req;
	struct hook_ctx *ctx;
	struct file *f;
	long ax;

	if (len != sizeof(req))
		return -EINVAL;
	if (copy_from_user(&req, buf, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;

	spin_lock_irq(&hook_lock);
	ctx = ctx_find_locked(current);
	if (ctx && ctx->id == (u64)(uintptr_t)file->private_data && ctx->cookie == req.cookie) {
		list_del(&ctx->node);
		atomic_dec(&nr_in_flight);
	} else {
		ctx = NULL;
	}
	spin_unlock_irq(&hook_lock);
	if (!ctx)
		return -EINVAL;

	f = fget(req.fd);
	if (f) {
		bool same = f == file;

		fput(f);
		if (same)
			close_fd(req.fd);
	}

	*current_pt_regs() = ctx->regs;
	current->restart_block = ctx->restart;
	rseq_set_notify_resume(current);
	ax = ctx->regs.ax;
	kfree(ctx);
	crdbg_genl_event(CRDBG_EVENT_HOOK_RAN, task_tgid_nr(current), task_pid_nr(current), 0);
	return ax;	/* the syscall exit stores this in regs->ax */
}

static const struct file_operations hook_return_fops = {
	.owner = THIS_MODULE,
	.write = hook_write,
	.llseek = noop_llseek,
};

/*
 * /dev/crdbg: a read-only handle that can do nothing, root's probe for
 * the module. A hook returns through its own fd, never through this node.
 */
static int probe_open(struct inode *inode, struct file *file)
{
	return file->f_mode & FMODE_WRITE ? -EPERM : 0;
}

static const struct file_operations probe_fops = {
	.owner = THIS_MODULE,
	.open = probe_open,
	.llseek = noop_llseek,
};

static struct miscdevice probe_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "crdbg",
	.fops = &probe_fops,
	.mode = 0600,
};

int crdbg_hook_init(void)
{
	return misc_register(&probe_dev);
}

void crdbg_hook_uninit(void)
{
	struct hook_ctx *ctx, *tmp;

	WRITE_ONCE(disabled, true);
	misc_deregister(&probe_dev);
	spin_lock_irq(&hook_lock);
	list_for_each_entry_safe(ctx, tmp, &in_flight, node) {
		list_del(&ctx->node);
		kfree(ctx);
	}
	atomic_set(&nr_in_flight, 0);
	spin_unlock_irq(&hook_lock);
}
