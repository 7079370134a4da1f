/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whole writes, sends and positioned reads: the loops over short counts
 * and EINTR that the store, the terminal relay and the page server share.
 */
#ifndef CRDBG_CRS_FDIO_H
#define CRDBG_CRS_FDIO_H

#include <stddef.h>
#include <stdint.h>

/* Write all len bytes: 0, or -errno (-EPIPE if the fd took nothing). */
int crs_write_all(int fd, const void *buf, size_t len);

/* The same on a socket, without SIGPIPE when the peer has gone. */
int crs_send_all(int sk, const void *buf, size_t len);

/* Read exactly len bytes at off: 0, -errno, or -ENODATA at the file's end. */
int crs_pread_all(int fd, void *buf, size_t len, uint64_t off);

#endif /* CRDBG_CRS_FDIO_H */
