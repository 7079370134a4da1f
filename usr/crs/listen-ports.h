/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TCP ports a tree listens on, recorded at checkpoint ("listen-ports"
 * in its directory: "crdbg-listen-ports 1", then one "listen <port>" line
 * each) so that a restart can wait, bounded, until no socket of the node
 * listens there any more (CRIU binds them again: "Address already in
 * use" otherwise).
 */
#ifndef CRDBG_CRS_LISTEN_PORTS_H
#define CRDBG_CRS_LISTEN_PORTS_H

#include <time.h>

#include <crdbg/crs.h>

#define CRS_LISTEN_PORTS_NAME	"listen-ports"
#define CRS_LISTEN_PORTS_MAX	1024

/* Record the listening TCP ports of m's processes into the pending directory dir. */
int crs_listen_ports_record(const struct crs_meta *m, const char *dir, char *err,
			    size_t errlen);

/* The record's ports (at most max) into ports: 0, or -EBADMSG when malformed. */
int crs_listen_ports_parse(const char *buf, size_t len, unsigned int *ports, size_t max,
			   size_t *ret_nr);

/*
 * Until no socket of this network namespace listens on a port the
 * checkpoint in dir recorded, or deadline: 0, or -EADDRINUSE and one line.
 */
int crs_listen_ports_wait(const char *dir, const char *handle, time_t deadline, char *err,
			  size_t errlen);

#endif /* CRDBG_CRS_LISTEN_PORTS_H */
