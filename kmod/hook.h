/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRDBG_HOOK_H
#define CRDBG_HOOK_H

#include <linux/types.h>

struct task_struct;

int crdbg_hook_init(void);
void crdbg_hook_uninit(void);

/*
 * Divert current, which is on its way back to user mode, into the
 * trampoline (see "The hook frame" in uapi/linux/crdbg.h). Returns 0 or a
 * negative errno; on error current's registers are unchanged.
 */
int crdbg_hook_deliver(u64 trampoline, u64 arg);

/* Is @task running a hook that has not returned yet? */
bool crdbg_hook_in_flight(struct task_struct *task);

/* @task exits or execs: forget its hook in flight and cookie, if any. */
void crdbg_hook_forget(struct task_struct *task);

#endif /* CRDBG_HOOK_H */
