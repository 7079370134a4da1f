/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CRDBG_NETLINK_H
#define CRDBG_NETLINK_H

#include <linux/types.h>

int crdbg_genl_init(void);
void crdbg_genl_uninit(void);

/* Multicast one event to CRDBG_MCGRP_EVENTS; safe in atomic context. */
void crdbg_genl_event(u32 event, pid_t pid, pid_t tid);

#endif /* CRDBG_NETLINK_H */
