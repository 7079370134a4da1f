/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parking a rank's threads in libcrdbg's waitpoint through its gdb, for
 * the console's checkpoint (the "hook" command of <crdbg/dbgproto.h>).
 * The frame pushed is the UAPI's (crdbg_hook_frame_init() in
 * <linux/crdbg.h>), the same one crdbg.ko and the ptrace backend push.
 */
#ifndef CRDBG_SERVER_HOOK_PARK_H
#define CRDBG_SERVER_HOOK_PARK_H

#include <stddef.h>

#include <crdbg/gdbmi.h>

/*
 * Run "park ARG", "unpark", "plan" or "release" (see dbgproto.h) in the stopped
 * program of d. 0 and the reply text in *ret_text (malloc'd), or a
 * negative errno and the reason in err.
 */
int hook_park_command(struct mi_driver *d, const char *arg, char **ret_text, char *err,
		      size_t errlen);

#endif /* CRDBG_SERVER_HOOK_PARK_H */
