// SPDX-License-Identifier: GPL-2.0
/*
 * sdm-master: the root of the SDM tree. Usage: sdm-master [--tries N] HOST:PORT
 * It connects to the front end at HOST:PORT (a set number of attempts,
 * then a clear error), waits for the initialization command carrying the
 * routing table, connects to server 0 and from then on forwards commands
 * down and aggregated events up.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "startup.h"
#include "transport.h"

int main(int argc, char **argv)
{
	char host[SDM_STARTUP_HOST_MAX], why[256];
	struct sdm_node node = { 0 };
	int port, rc, tries = SDM_STARTUP_CONNECT_TRIES;
	const char *addr;

	if (argc == 4 && !strcmp(argv[1], "--tries")) {
		tries = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc != 2 || tries < 1 || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		fprintf(argc == 2 && tries > 0 ? stdout : stderr,
			"usage: sdm-master [--tries N] HOST:PORT  (the front end's address;\n"
			"  the session secret from SDM_SECRET_FILE or SDM_SECRET)\n");
		return argc == 2 && tries > 0 ? 0 : 2;
	}
	addr = argv[1];
	if (sdm_startup_parse_hostport(addr, host, sizeof(host), &port) < 0) {
		fprintf(stderr, "sdm-master: bad front-end address '%s' (want HOST:PORT)\n",
			addr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	rc = sdm_node_init(&node, SDM_MASTER, why, sizeof(why));
	if (rc < 0) {
		fprintf(stderr, "sdm-master: %s\n", why);
		return rc == -EINVAL ? 2 : 1;
	}
	node.t->cfg.connect_tries = tries;
	node.parent = sdm_transport_connect(node.t, host, port,
					    SDM_TRANSPORT_ID_FRONTEND);
	if (node.parent < 0) {
		fprintf(stderr, "sdm-master: cannot connect to %s: %s\n",
			addr, strerror(-node.parent));
		return 1;
	}
	rc = sdm_node_run(&node);
	if (!node.initialised) {
		fprintf(stderr, "sdm-master: could not reach the front end at %s:%d "
			"after %d attempts\n", host, port, tries);
		rc = 1;
	}
	sdm_node_finalize(&node);
	return rc;
}
