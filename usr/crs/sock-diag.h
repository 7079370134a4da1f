/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's socket tables through sock_diag (NETLINK_SOCK_DIAG), not
 * /proc's text: every TCP socket of a family in some states with its
 * 4-tuple and inode, every unix socket with its peer's inode.
 */
#ifndef CRDBG_CRS_SOCK_DIAG_H
#define CRDBG_CRS_SOCK_DIAG_H

#include <linux/inet_diag.h>
#include <stdint.h>

/* Every TCP state but TIME_WAIT (which holds no process's socket). */
#define CRS_TCP_STATES_HELD 0xfbfu

/* A NETLINK_SOCK_DIAG socket of this network namespace, or -errno. */
int crs_sock_diag_open(void);

/*
 * fn(arg, family, msg) for each TCP socket of family in states (a mask
 * of 1 << TCP_*): 0, fn's first non-zero return, or -errno.
 */
int crs_sock_diag_tcp(int fd, unsigned char family, uint32_t states,
		      int (*fn)(void *arg, unsigned char family, const struct inet_diag_msg *m),
		      void *arg);

/*
 * Abort the TCP socket id of family (SOCK_DESTROY, `ss -K`: it goes to
 * CLOSE, its peer is reset): 0, or the kernel's negative errno (-ENOENT:
 * gone already; -EPERM: no CAP_NET_ADMIN; -EOPNOTSUPP: no
 * CONFIG_INET_DIAG_DESTROY).
 */
int crs_sock_diag_tcp_destroy(int fd, unsigned char family, const struct inet_diag_sockid *id);

/*
 * fn(arg, ino, peer_ino) for each unix socket (peer_ino 0: not
 * connected): 0, fn's first non-zero return, or -errno.
 */
int crs_sock_diag_unix(int fd, int (*fn)(void *arg, uint32_t ino, uint32_t peer), void *arg);

#endif /* CRDBG_CRS_SOCK_DIAG_H */
