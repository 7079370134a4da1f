/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A launcher's own options that give its ranks an environment variable
 * and nobody else (not the launcher, not the daemons it starts on the
 * nodes): what crdbg debug --preload adds to a launcher's command line.
 * Documentation/console.md, "Checkpoint and restart inside a session".
 */
#ifndef CRDBG_CONSOLE_LAUNCHER_ENV_H
#define CRDBG_CONSOLE_LAUNCHER_ENV_H

#include "mpir-probe.h"

#define DBG_LAUNCHER_ENV_MAX_ARGS 3

/*
 * The arguments that set LD_PRELOAD=lib for the ranks of a launcher of
 * family f, in ret_args (up to DBG_LAUNCHER_ENV_MAX_ARGS, one of them
 * *ret_made, malloc'd, to free after use): their number, 0 when the
 * family has no such option, -ENOMEM.
 */
int dbg_launcher_preload_args(enum mpir_family f, const char *lib,
			      const char *ret_args[DBG_LAUNCHER_ENV_MAX_ARGS], char **ret_made);

#endif /* CRDBG_CONSOLE_LAUNCHER_ENV_H */
