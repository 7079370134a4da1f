// SPDX-License-Identifier: GPL-2.0
/*
 * Who may freeze, thaw, query or push into a target. ptrace_may_access()
 * is not exported, so the default check rebuilds the core of
 * __ptrace_may_access(PTRACE_MODE_ATTACH_REALCREDS) from exported and
 * inline helpers; it does not consult LSMs or Yama. The stronger proof is
 * an fd of /proc/<pid>/mem: opening it ran the full ptrace attach check,
 * LSMs included, and its private data is the mm it was opened for.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "perm.h"

static bool creds_match(const struct cred *c, const struct cred *t)
{
	return uid_eq(c->uid, t->euid) && uid_eq(c->uid, t->suid) &&
	       uid_eq(c->uid, t->uid) && gid_eq(c->gid, t->egid) &&
	       gid_eq(c->gid, t->sgid) && gid_eq(c->gid, t->gid);
}

static int cred_check(struct task_struct *task, struct netlink_ext_ack *extack)
{
	const struct cred *tcred;
	struct mm_struct *mm;
	bool ok;

	if (same_thread_group(task, current))
		return 0;

	rcu_read_lock();
	tcred = __task_cred(task);
	ok = creds_match(current_cred(), tcred) ||
	     ns_capable(tcred->user_ns, CAP_SYS_PTRACE);
	rcu_read_unlock();
	if (!ok) {
		NL_SET_ERR_MSG(extack, "not allowed to trace the target (other uid/gid and no CAP_SYS_PTRACE)");
		return -EPERM;
	}

	task_lock(task);
	mm = task->mm;
	ok = !mm || get_dumpable(mm) == SUID_DUMP_USER ||
	     ns_capable(mm->user_ns, CAP_SYS_PTRACE);
	task_unlock(task);
	if (!ok) {
		NL_SET_ERR_MSG(extack, "target is not dumpable and the caller lacks CAP_SYS_PTRACE");
		return -EPERM;
	}
	return 0;
}

static int proof_check(struct task_struct *task, int fd, struct netlink_ext_ack *extack)
{
	struct mm_struct *mm;
	struct file *file;
	bool ok;

	file = fget(fd);
	if (!file) {
		NL_SET_ERR_MSG(extack, "CRDBG_A_PROC_MEM_FD is not an open fd");
		return -EBADF;
	}
	mm = get_task_mm(task);
	ok = mm && file_inode(file)->i_sb->s_magic == PROC_SUPER_MAGIC &&
	     !strcmp(file->f_path.dentry->d_name.name, "mem") &&
	     file->private_data == mm;
	if (mm)
		mmput(mm);
	fput(file);
	if (!ok) {
		NL_SET_ERR_MSG(extack, "CRDBG_A_PROC_MEM_FD is not /proc/<pid>/mem of the target");
		return -EPERM;
	}
	return 0;
}

int crdbg_perm_check(struct task_struct *task, int proof_fd,
		     struct netlink_ext_ack *extack)
{
	if (task->flags & PF_KTHREAD) {
		NL_SET_ERR_MSG(extack, "target is a kernel thread");
		return -EPERM;
	}
	if (proof_fd >= 0)
		return proof_check(task, proof_fd, extack);
	return cred_check(task, extack);
}
