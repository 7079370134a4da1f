/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An SDM server and its debugger backends. A server program is
 * sdm_server_main() plus a table of backends; sdm/ builds `sdm-server`
 * with the echo backend, the debugger builds its own server with the GDB
 * backend (usr/server/).
 *
 * A server owns a set of ranks (the INIT routing table's; by default
 * just its own id) and hands every command addressed to some of them to
 * its backend as an opaque string, with the ranks it is for. The backend
 * answers, now or later, through the reply callback, tagged with the
 * command's request id and the ranks each answer speaks for: one call
 * for all of them, or several with disjoint subsets (a reply per rank,
 * say) until every rank is answered; identical answers merge in the
 * server as in the tree. Unsolicited events (a breakpoint hit while
 * running, say) go through the same callback with request id 0 and
 * travel upstream without aggregation. The backend adds whatever descriptors and timers it needs
 * to the server's engine (sdm/engine.h) and forwards its program's output
 * with sdm/iof.h. Settings a backend needs (a library to preload, say)
 * come as arguments of its commands, never from the server's environment,
 * which a launcher on another node does not carry.
 */
#ifndef SDM_SERVER_H
#define SDM_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "sdm/common.h"
#include "sdm/engine.h"
#include "sdm/idset.h"
#include "sdm/iof.h"

struct sdm_transport;

/* What the server gives the backend. */
struct sdm_backend_host {
	struct sdm_transport *engine;	/* watch_fd / add_timer */
	sdm_id id;			/* this server */
	uint32_t size;			/* number of servers */
	/*
	 * An answer for ranks (NULL: every rank of this server); error != 0
	 * makes an SDM_MSG_ERROR event instead of a reply.
	 */
	void (*reply)(void *arg, uint32_t req, const struct sdm_idset *ranks,
		      int error, const void *buf, size_t len);
	/* Output of rank's program, sent upstream labelled with it. */
	void (*output)(void *arg, sdm_id rank, int stream, const void *buf,
		       size_t len);
	void *arg;
};

struct sdm_backend_ops {
	const char *name;
	const char *help;	/* one line: the commands it understands */
	/* 0 or -errno; *ret_priv is passed back to the other calls. */
	int (*start)(const struct sdm_backend_host *host, const char *args,
		     void **ret_priv);
	/*
	 * Take a command for ranks (never empty, all this server's); reply
	 * later through host->reply. 0 or -errno (the server then answers
	 * every rank of the command with an error).
	 */
	int (*command)(void *priv, uint32_t req, const struct sdm_idset *ranks,
		       const void *cmd, size_t len);
	void (*stop)(void *priv);
};

/* Answers every command with its own text (tests and benchmarks). */
extern const struct sdm_backend_ops sdm_backend_echo;

/*
 * The whole server program: parses argv (see `sdm-server --help`), picks
 * --backend NAME from backends (a NULL-terminated table; the first is the
 * default), joins the tree and serves until told to quit. Returns the
 * process's exit status.
 */
int sdm_server_main(int argc, char **argv,
		    const struct sdm_backend_ops *const *backends);

#endif /* SDM_SERVER_H */
