/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a restart needs of the node's network for a tree's TCP sockets,
 * recorded at checkpoint ("listen-ports" in its directory: "crdbg-listen-
 * ports 3", then one "listen <port>" line for each port it listens on,
 * "listen <port> no-reuseaddr" for a listener without SO_REUSEADDR, and
 * one "addr <address>" line for each address of the node its sockets are
 * bound to; version 1 has listen lines only, version 2 no flag):
 *
 *  - a restart waits, bounded, until no socket of the node listens on
 *    those ports any more, nor, for a listener without SO_REUSEADDR,
 *    holds one in TIME_WAIT (CRIU binds them again: "Address already in
 *    use" otherwise);
 *  - a restart is refused before anything is ended or restored when one
 *    of those addresses is not the node's (the checkpoint was taken on
 *    another node, or the node's address changed): CRIU could bind none
 *    of those sockets.
 *
 * Addresses are recorded only for a tree in the network namespace of the
 * checkpoint's own process (a namespace of the tree's own comes back
 * with it), and never the wildcard, a loopback or a link-local address.
 */
#ifndef CRDBG_CRS_LISTEN_PORTS_H
#define CRDBG_CRS_LISTEN_PORTS_H

#include <stdbool.h>
#include <time.h>

#include <crdbg/crs.h>

#define CRS_LISTEN_PORTS_NAME	"listen-ports"
#define CRS_LISTEN_PORTS_MAX	1024
#define CRS_LISTEN_ADDRS_MAX	64
#define CRS_LISTEN_ADDR_LEN	46	/* INET6_ADDRSTRLEN */

#define CRS_LISTEN_NO_REUSEADDR	"no-reuseaddr"

struct crs_listen_record {
	unsigned int ports[CRS_LISTEN_PORTS_MAX];
	bool no_reuseaddr[CRS_LISTEN_PORTS_MAX];	/* its listener's SO_REUSEADDR off */
	size_t nr_ports;
	char addrs[CRS_LISTEN_ADDRS_MAX][CRS_LISTEN_ADDR_LEN];
	size_t nr_addrs;
};

/* Record the listening TCP ports of m's processes into the pending directory dir. */
int crs_listen_ports_record(const struct crs_meta *m, const char *dir, char *err,
			    size_t errlen);

/* The record into *ret (its ports and addresses): 0, or -EBADMSG when malformed. */
int crs_listen_ports_parse(const char *buf, size_t len, struct crs_listen_record *ret);

/*
 * Until no socket of this network namespace listens on a port the
 * checkpoint in dir recorded, or deadline: 0, or -EADDRINUSE and one line.
 */
int crs_listen_ports_wait(const char *dir, const char *handle, time_t deadline, char *err,
			  size_t errlen);

/*
 * Every address the checkpoint in dir recorded is one this host has: 0,
 * or -EADDRNOTAVAIL and one line naming the first that is not.
 */
int crs_listen_addrs_check(const char *dir, const char *handle, char *err, size_t errlen);

#endif /* CRDBG_CRS_LISTEN_PORTS_H */
