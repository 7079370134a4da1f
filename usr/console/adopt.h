/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A session over a restarted job checkpoint (adopt.c, crdbg debug
 * --restart JOB).
 */
#ifndef CRDBG_CONSOLE_ADOPT_H
#define CRDBG_CONSOLE_ADOPT_H

#include <stddef.h>

struct dbg_session;

/*
 * Start s with one rank per part of job checkpoint handle, the servers
 * on the parts' nodes; nothing is restored yet (dbg_ckpt_adopt() does).
 * *ret_launch (malloc'd, or NULL when every part is on this host) starts
 * a command on another node. 0 or -errno with err set.
 */
int dbg_adopt_start(struct dbg_session *s, const char *handle, const char *bindir,
		    char **ret_launch, char *err, size_t errlen);

#endif /* CRDBG_CONSOLE_ADOPT_H */
