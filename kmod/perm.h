/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRDBG_PERM_H
#define CRDBG_PERM_H

#include <linux/types.h>

struct task_struct;
struct netlink_ext_ack;

/*
 * May the caller act on @task as if it ptrace-attached to it? With
 * @proof_fd >= 0 the caller proves it with an open /proc/<pid>/mem of the
 * target instead. Returns 0 or -EPERM (-EBADF for a bad fd), with a reason
 * in @extack.
 */
int crdbg_perm_check(struct task_struct *task, int proof_fd,
		     struct netlink_ext_ack *extack);

#endif /* CRDBG_PERM_H */
