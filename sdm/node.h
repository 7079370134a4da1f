/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A node of the SDM tree (the master or a server): commands from the
 * parent go down to the children the routing layer names (and to the local
 * backend if this server is a destination); replies from the children are
 * aggregated (aggregate.h) and sent up when the request completes or times
 * out. A child that dies answers its whole subtree with an error event.
 */
#ifndef SDM_NODE_H
#define SDM_NODE_H

#include <stdbool.h>

#include "sdm/auth.h"
#include "sdm/common.h"
#include "sdm/route.h"
#include "startup.h"

struct sdm_transport;
struct sdm_agg_table;
struct sdm_message;

struct sdm_node {
	struct sdm_transport *t;
	struct sdm_auth_secret secret;
	sdm_id id;			/* SDM_MASTER for the master */
	bool initialised, quit;
	struct sdm_table table;
	struct sdm_rank_route rr;	/* the tree, and which ranks are where */
	int parent;			/* peer handle, -1 if none yet */
	unsigned int nchildren;
	sdm_id child_id[SDM_ROUTE_MAX_CHILDREN];
	int child_peer[SDM_ROUTE_MAX_CHILDREN];	/* -1: gone */
	bool child_ready[SDM_ROUTE_MAX_CHILDREN];
	struct sdm_message *init_msg;	/* forwarded as children connect */
	struct sdm_agg_table *agg;
	int agg_timer;
	/*
	 * Local delivery (servers): a command for ranks (its destination's
	 * ranks that this server owns); 0 or -errno.
	 */
	int (*deliver)(struct sdm_node *n, const struct sdm_message *m,
		       const struct sdm_idset *ranks);
	/* Stdin bytes (SDM_MSG_IOF downstream) for this server's ranks. */
	void (*deliver_iof)(struct sdm_node *n, const void *buf, size_t len);
	void *priv;
};

/*
 * Create the transport, its settings and the session secret from the
 * environment. 0, or -errno with a one-line reason in why: -EINVAL for a
 * bad setting (SDM_PEER_TIMEOUT), which main() takes as a usage error.
 */
int sdm_node_init(struct sdm_node *n, sdm_id id, char *why, size_t size);
void sdm_node_finalize(struct sdm_node *n);
/* Run until quit; returns the exit status for main(). */
int sdm_node_run(struct sdm_node *n);

/*
 * A local answer for request req (error: an SDM_MSG_ERROR event) that
 * speaks for ranks (NULL: all of this server's ranks); only ranks this
 * server owns count.
 */
void sdm_node_local_reply(struct sdm_node *n, uint32_t req,
			  const struct sdm_idset *ranks, int error,
			  const void *buf, size_t len);
/* Forwarded output of a local program, sent up tagged with its rank. */
void sdm_node_local_output(struct sdm_node *n, sdm_id rank, int stream,
			   const void *buf, size_t len);

/* Encode and send a message to a peer. 0 or -errno. */
int sdm_node_send(struct sdm_transport *t, int peer,
		  const struct sdm_message *m);

#endif /* SDM_NODE_H */
