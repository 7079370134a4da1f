// SPDX-License-Identifier: GPL-2.0
/*
 * Who may freeze, thaw, query or push into a target. Every check runs for
 * the request's netlink socket: its opener's credentials (the socket
 * file's f_cred) and the writer's (current) must both pass, so a socket
 * handed to a more privileged writer gains nothing, and a less privileged
 * writer gains nothing from a privileged opener. Every thread of the
 * target counts, and the caller holds the target's exec_update_lock
 * (crdbg_perm_lock()), so credentials and mm cannot change under the
 * check nor between the check and the operation. See "Permissions" in
 * Documentation/kmod.md.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/magic.h>
#include <linux/net.h>
#include <linux/netlink.h>
#include <linux/ptrace.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <net/sock.h>

#include "perm.h"

/*
 * ptrace_may_access() is not exported to modules on 6.1. Its address is
 * resolved once at load through a kprobe registered on the symbol (and
 * unregistered at once): the kernel's own check then runs, capabilities,
 * dumpability, Yama and every LSM included.
 */
static bool (*may_access)(struct task_struct *task, unsigned int mode);

int crdbg_perm_init(void)
{
	struct kprobe kp = { .symbol_name = "ptrace_may_access" };
	int ret;

	ret = register_kprobe(&kp);
	if (ret < 0) {
		pr_err("cannot resolve ptrace_may_access: %d\n", ret);
		return ret;
	}
	may_access = (void *)kp.addr;
	unregister_kprobe(&kp);
	/* With IBT a kprobe sits past the ENDBR64; the function starts before it. */
	if (IS_ENABLED(CONFIG_X86_KERNEL_IBT) &&
	    !memcmp((u8 *)kp.addr - 4, "\xf3\x0f\x1e\xfa", 4))
		may_access = (void *)((u8 *)kp.addr - 4);
	return 0;
}

int crdbg_perm_lock(struct task_struct *leader)
{
	return down_read_killable(&leader->signal->exec_update_lock);
}

void crdbg_perm_unlock(struct task_struct *leader)
{
	up_read(&leader->signal->exec_update_lock);
}

static const struct cred *opener_cred(const struct sk_buff *skb)
{
	struct sock *sk = NETLINK_CB(skb).sk;

	if (!sk || !sk->sk_socket || !sk->sk_socket->file)
		return NULL;
	return sk->sk_socket->file->f_cred;
}

struct mm_struct *crdbg_group_mm(struct task_struct *leader)
{
	struct mm_struct *mm = NULL;
	struct task_struct *t;

	rcu_read_lock();
	for_each_thread(leader, t) {
		mm = get_task_mm(t);
		if (mm)
			break;
	}
	rcu_read_unlock();
	return mm;
}

bool crdbg_cred_same(const struct cred *a, const struct cred *b)
{
	return uid_eq(a->uid, b->uid) && uid_eq(a->euid, b->euid) &&
	       uid_eq(a->suid, b->suid) && uid_eq(a->fsuid, b->fsuid) &&
	       gid_eq(a->gid, b->gid) && gid_eq(a->egid, b->egid) &&
	       gid_eq(a->sgid, b->sgid) && gid_eq(a->fsgid, b->fsgid) &&
	       cap_issubset(a->cap_permitted, b->cap_permitted) &&
	       cap_issubset(b->cap_permitted, a->cap_permitted) &&
	       a->user_ns == b->user_ns;
}

/*
 * CAP_SYS_PTRACE, for the opener and the writer, over every thread's user
 * namespace and, when the target is not plainly dumpable, over its mm's.
 */
static bool privileged(struct task_struct *leader, const struct sk_buff *skb,
		       struct mm_struct *mm)
{
	struct task_struct *t;
	bool ok = true;

	rcu_read_lock();
	for_each_thread(leader, t) {
		if (!netlink_ns_capable(skb, __task_cred(t)->user_ns, CAP_SYS_PTRACE)) {
			ok = false;
			break;
		}
	}
	rcu_read_unlock();
	if (ok && mm && get_dumpable(mm) != SUID_DUMP_USER)
		ok = netlink_ns_capable(skb, mm->user_ns, CAP_SYS_PTRACE);
	return ok;
}

/* Do all threads of @leader's group share one set of ids? */
static bool creds_uniform(struct task_struct *leader)
{
	const struct cred *first = NULL;
	struct task_struct *t;
	bool ok = true;

	rcu_read_lock();
	for_each_thread(leader, t) {
		const struct cred *c = __task_cred(t);

		if (!first)
			first = c;
		else if (c != first && !crdbg_cred_same(c, first)) {
			ok = false;
			break;
		}
	}
	rcu_read_unlock();
	return ok;
}

static int proof_check(struct mm_struct *mm, int fd, struct netlink_ext_ack *extack)
{
	struct file *file;
	bool ok;

	file = fget(fd);
	if (!file) {
		NL_SET_ERR_MSG(extack, "CRDBG_A_PROC_MEM_FD is not an open fd");
		return -EBADF;
	}
	ok = mm && file_inode(file)->i_sb->s_magic == PROC_SUPER_MAGIC &&
	     !strcmp(file->f_path.dentry->d_name.name, "mem") &&
	     file->private_data == mm;
	fput(file);
	if (!ok) {
		NL_SET_ERR_MSG(extack, "CRDBG_A_PROC_MEM_FD is not /proc/<pid>/mem of the target");
		return -EPERM;
	}
	return 0;
}

/* ptrace_may_access(ATTACH_REALCREDS) on every thread, as current's creds are now. */
static bool may_attach_all(struct task_struct *leader)
{
	struct task_struct *t;
	bool ok = true;

	rcu_read_lock();
	for_each_thread(leader, t) {
		if (!may_access(t, PTRACE_MODE_ATTACH_REALCREDS)) {
			ok = false;
			break;
		}
	}
	rcu_read_unlock();
	return ok;
}

static int attach_check(struct task_struct *leader, const struct cred *opener,
			struct netlink_ext_ack *extack)
{
	const struct cred *old;
	bool ok;

	if (!may_attach_all(leader)) {
		NL_SET_ERR_MSG(extack, "not allowed to trace the target (ptrace_may_access refused: uid/gid, dumpable, Yama or an LSM)");
		return -EPERM;
	}
	if (opener == current_cred())
		return 0;
	old = override_creds(opener);
	ok = may_attach_all(leader);
	revert_creds(old);
	if (!ok) {
		NL_SET_ERR_MSG(extack, "not allowed to trace the target with the rights of the socket's opener");
		return -EPERM;
	}
	return 0;
}

int crdbg_perm_check(struct task_struct *leader, const struct sk_buff *skb, int proof_fd,
		     struct netlink_ext_ack *extack)
{
	const struct cred *opener = opener_cred(skb);
	struct mm_struct *mm;
	int ret;

	if (leader->flags & PF_KTHREAD) {
		NL_SET_ERR_MSG(extack, "target is a kernel thread");
		return -EPERM;
	}
	if (!opener) {
		NL_SET_ERR_MSG(extack, "the request's socket has no opener");
		return -EPERM;
	}
	if (same_thread_group(leader, current) && opener == current_cred())
		return 0;

	mm = crdbg_group_mm(leader);
	/* A proof given must hold, whoever gives it. */
	ret = proof_fd >= 0 ? proof_check(mm, proof_fd, extack) : 0;
	if (ret < 0 || privileged(leader, skb, mm))
		goto out;
	/*
	 * The proof counts for the writer, whose fd table it is in, and only
	 * when the writer is the opener; it proves the right over the thread
	 * it was opened for, so every thread must have that one's ids.
	 */
	if (proof_fd >= 0 && crdbg_cred_same(opener, current_cred()) && creds_uniform(leader))
		goto out;
	ret = attach_check(leader, opener, extack);
out:
	if (mm)
		mmput(mm);
	return ret;
}
