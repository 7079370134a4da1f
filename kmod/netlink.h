/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRDBG_NETLINK_H
#define CRDBG_NETLINK_H

#include <linux/types.h>

int crdbg_genl_init(void);
void crdbg_genl_uninit(void);

/*
 * Multicast one event to CRDBG_MCGRP_EVENTS; safe in atomic context. @tid
 * and @reason (enum crdbg_hook_drop) are left out when 0.
 */
void crdbg_genl_event(u32 event, pid_t pid, pid_t tid, u32 reason);

#endif /* CRDBG_NETLINK_H */
