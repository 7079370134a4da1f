/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SDM startup protocol pieces shared by the front end, the master and the
 * servers (Documentation/sdm.md, "Startup"):
 *  - a server's id comes from the launcher's environment;
 *  - a server binds starting at a given port, incrementing while in use,
 *    and announces "sdm-server ready id=I host=H port=P" on stdout, which
 *    the launcher (or the local fork) carries back to the front end;
 *  - the front end sends the routing table (id -> host:port) as the
 *    payload of the SDM_MSG_INIT command (text, one line per id).
 */
#ifndef SDM_STARTUP_H
#define SDM_STARTUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sdm/common.h"
#include "sdm/idset.h"

struct sdm_transport_config;

/* Environment variables that can carry a server's id, in priority order. */
extern const char *const sdm_startup_id_vars[];

#define SDM_STARTUP_HOST_MAX	64
#define SDM_STARTUP_READY_FMT	"sdm-server ready id=%u host=%s port=%d"
#define SDM_STARTUP_READY_SCAN	"sdm-server ready id=%u host=%63s port=%d"
/* Connect attempts: the master to the front end, a node to a child. */
#define SDM_STARTUP_CONNECT_TRIES	20
#define SDM_STARTUP_BACKOFF_MS		10
#define SDM_STARTUP_BIND_SPAN		1000	/* ports tried by a server */

struct sdm_table_entry {
	char host[SDM_STARTUP_HOST_MAX];
	int port;
};

/* The routing table sent in SDM_MSG_INIT. */
struct sdm_table {
	uint32_t n;		/* number of servers */
	int span;		/* ports to try above each entry's port */
	bool star;		/* benchmark mode: no tree, front end is parent */
	struct sdm_table_entry *e;	/* n entries, indexed by id */
	/*
	 * The ranks each server owns (sdm/route.h, rank-set routing), or
	 * NULL: server i owns rank i. A NULL entry: that server owns its id.
	 */
	struct sdm_idset **ranks;
};

/* Id from SDM_ID, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID. */
int sdm_startup_id_from_env(sdm_id *ret_id, const char **ret_var);
/* "host:port" (host may be empty: 127.0.0.1). 0 or -EINVAL. */
int sdm_startup_parse_hostport(const char *s, char *host, size_t size,
			       int *ret_port);

int sdm_table_alloc(struct sdm_table *t, uint32_t n);
/* Server id owns ranks (a copy is kept). 0, -EINVAL or -ENOMEM. */
int sdm_table_set_ranks(struct sdm_table *t, sdm_id id,
			const struct sdm_idset *ranks);
void sdm_table_free(struct sdm_table *t);
/* Encode to a malloc'd text payload; 0 or -ENOMEM. */
int sdm_table_encode(const struct sdm_table *t, char **ret_buf,
		     size_t *ret_len);
/* Parse a payload; 0 or -EBADMSG for anything malformed. */
int sdm_table_parse(struct sdm_table *ret, const void *buf, size_t len);

/*
 * How long a link's peer node may answer nothing before the link is
 * closed (Documentation/sdm.md, "A lost node"): SDM_PEER_TIMEOUT_S, or
 * SDM_PEER_TIMEOUT=SECONDS (1-3600) in the environment, which the front
 * end's servers and master inherit.
 */
#define SDM_PEER_TIMEOUT_S	60
#define SDM_PEER_TIMEOUT_MAX_S	3600
#define SDM_PEER_TIMEOUT_VAR	"SDM_PEER_TIMEOUT"

/*
 * The transport settings every SDM process uses, the peer timeout from
 * the environment among them. 0, or -EINVAL with a one-line reason in
 * why (which may be NULL with size 0) for a bad SDM_PEER_TIMEOUT; cfg
 * then holds the defaults.
 */
int sdm_startup_transport_defaults(struct sdm_transport_config *cfg,
				   char *why, size_t size);

#endif /* SDM_STARTUP_H */
