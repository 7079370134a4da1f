/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tree's stdio across checkpoint and restart: what each process's fds
 * 0, 1 and 2 lead to is recorded at checkpoint ("stdio" records of the
 * metadata); at restart, what is outside the tree or gone is replaced by
 * crdbg restart's own fd of the same number (criu --inherit-fd).
 * Documentation/checkpoint.md, "Stdio and terminals at restart".
 */
#ifndef CRDBG_CRS_TREE_STDIO_H
#define CRDBG_CRS_TREE_STDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <crdbg/crs.h>

/* Record fds 0-2 of every live process of m (pids: the whole tree). */
int crs_stdio_record(const pid_t *pids, size_t nr, struct crs_meta *m);

/*
 * The criu restore arguments that replace m's outside or vanished stdio
 * endpoints: pairs "--inherit-fd" "fd[N]:<key>", one per distinct key,
 * in a malloc'd array of *ret_nr malloc'd strings (crs_stdio_args_free).
 * With terminal_fd >= 0, every external pty of crs_stdio_needs_terminal()
 * becomes "fd[terminal_fd]:tty[RDEV:DEV]".
 */
int crs_stdio_inherit_args(const struct crs_meta *m, int terminal_fd, char ***ret_args,
			   size_t *ret_nr);
void crs_stdio_args_free(char **args, size_t nr);

/*
 * A terminal of the tree: a pty slave on a process's fd 0-2 whose master
 * is outside the tree (the first such record). When the tree holds its
 * own session (not a shell job), CRIU dumps every such pty as external
 * (crs_stdio_external_args) and a restart must hand CRIU a pty slave of
 * its own to take its place, the tree's controlling terminal included
 * (terminal_fd of crs_stdio_inherit_args).
 */
const struct crs_stdio *crs_stdio_terminal(const struct crs_meta *m);
bool crs_stdio_needs_terminal(const struct crs_meta *m);

/* "--external" "tty[RDEV:DEV]" pairs for the dump, as crs_stdio_inherit_args. */
int crs_stdio_external_args(const struct crs_meta *m, char ***ret_args, size_t *ret_nr);

#endif /* CRDBG_CRS_TREE_STDIO_H */
