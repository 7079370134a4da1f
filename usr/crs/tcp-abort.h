/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TCP connections of a checkpointed tree, aborted before it is
 * killed: each socket goes to CLOSE at once and its peer gets a reset,
 * through sock_diag's SOCK_DESTROY (what `ss -K` does), so neither side
 * lingers in TIME_WAIT. A connection closed by a kill would: the side
 * that closed first holds its local port for 60 s, and a restart right
 * away of a tree that listens on that port without SO_REUSEADDR (Open
 * MPI's TCP BTL) could not bind it again.
 *
 * Only for a tree that will never run again as it is (the checkpoint
 * was committed, its processes are about to be killed). A socket the
 * tree shares with a process outside it is aborted for that one too:
 * no more than any holder of the descriptor can do (SO_LINGER 0 and a
 * close). It needs
 * CAP_NET_ADMIN in the sockets' network namespace and a kernel with
 * CONFIG_INET_DIAG_DESTROY; without either, nothing is aborted and the
 * restart's wait for the ports (listen-ports.h) covers the lingering.
 */
#ifndef CRDBG_CRS_TCP_ABORT_H
#define CRDBG_CRS_TCP_ABORT_H

#include <crdbg/crs.h>

/*
 * Abort every TCP socket (v4 and v6, any state but TIME_WAIT) m's live
 * processes hold open in this network namespace: the number aborted, or
 * a negative errno (-EPERM, -EOPNOTSUPP) when none could be.
 */
int crs_tcp_abort_tree(const struct crs_meta *m);

#endif /* CRDBG_CRS_TCP_ABORT_H */
