/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A job's ranks by node (ranks.c): the placement of one SDM server per
 * node over a table of processes, and the attach of every rank's gdb.
 */
#ifndef CRDBG_CONSOLE_RANKS_H
#define CRDBG_CONSOLE_RANKS_H

#include <stdbool.h>

#define DBG_PATH_MAX	1024
#define DBG_HOST_MAX	64

struct dbg_session;
struct dbg_placement;

/* One rank: its pid on its node, executable ("" to let gdb find it), node. */
struct dbg_proc {
	int pid;
	char exe[DBG_PATH_MAX];
	char host[DBG_HOST_MAX];
};

/* Whether host (a process table's entry) names this machine. */
bool dbg_host_is_local(const char *host);

/*
 * One server per node: the distinct hosts of p, in rank order, into
 * where->hosts ("a,b,c", server i on the i-th) and each one's ranks into
 * where->ranks ("0-1", ...). 0, -EINVAL (err set) or -ENOMEM.
 */
int dbg_ranks_by_node(const struct dbg_proc *p, long n, struct dbg_placement *where,
		      char *err, size_t errlen);

/* Attach rank i's gdb to p[i].pid, every request in flight; prints the result. */
int dbg_attach_ranks(struct dbg_session *s, const struct dbg_proc *p, long n);

/* The session's node of each rank (for messages), from p. 0 or -ENOMEM. */
int dbg_ranks_set_hosts(struct dbg_session *s, const struct dbg_proc *p, long n);

#endif /* CRDBG_CONSOLE_RANKS_H */
