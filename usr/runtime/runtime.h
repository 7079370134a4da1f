/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals shared by the files of libcrdbg. Everything here may run from
 * the hook, i.e. on top of arbitrary interrupted code: only
 * async-signal-safe calls.
 */
#ifndef CRDBG_RUNTIME_H
#define CRDBG_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include <crdbg/mpir-checkpoint.h>

#define CRDBG_EXPORT __attribute__((visibility("default")))

#define CRDBG_RT_CMD_LEN 256

extern struct crdbg_rt_info crdbg_runtime_info;
extern char crdbg_rt_checkpoint_command[CRDBG_RT_CMD_LEN];
extern char crdbg_rt_restart_command[CRDBG_RT_CMD_LEN];
extern char crdbg_rt_listing_command[CRDBG_RT_CMD_LEN];
extern char crdbg_rt_hostname[CRDBG_RT_CMD_LEN];


bool crdbg_rt_is_designated(void);
int crdbg_rt_gettid(void);

/* Sleep a little without touching errno-visible state beyond EINTR. */
void crdbg_rt_nap(void);

/* Number of threads of this process (from /proc/self/task), or -1. */
int crdbg_rt_count_threads(void);

/* Print "MPIR debug info) <host>:<pid>" on stderr (fd 2). */
void crdbg_rt_announce(void);

/* Refresh MPIR_controller_hostname (after a restart on another host). */
void crdbg_rt_update_hostname(void);

/* Called by the trampoline; see hook.c. */
void crdbg_hook_entry(uint64_t arg) CRDBG_EXPORT;

#endif /* CRDBG_RUNTIME_H */
