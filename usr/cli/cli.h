/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The crdbg command line: one handler per top-level command, each in the
 * cmd-<group>.c file of its group, listed in the table in crdbg.c.
 */
#ifndef CRDBG_CLI_H
#define CRDBG_CLI_H

#include <stdbool.h>

/* Print "crdbg: <message>" on stderr; the handler then returns 1. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* True when argv[0] is -h/--help/help (handlers print their usage then). */
bool cli_wants_help(int argc, char **argv);

int cmd_kmod(int argc, char **argv);
int cmd_freeze(int argc, char **argv);
int cmd_thaw(int argc, char **argv);
int cmd_threads(int argc, char **argv);
int cmd_checkpoint(int argc, char **argv);
int cmd_restart(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_debug(int argc, char **argv);
int cmd_attach(int argc, char **argv);

#endif /* CRDBG_CLI_H */
