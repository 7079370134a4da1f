/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Server-side debugger backends. A server hands every command addressed
 * to it to its backend as an opaque string; the backend answers, now or
 * later, through the reply callback (exactly one reply per command,
 * tagged with the command's request id). Unsolicited events (a breakpoint
 * hit while running, say) go through the same callback with request id 0
 * and travel upstream without aggregation. The backend adds whatever
 * descriptors and timers it needs to the server's engine (a GDB backend:
 * GDB's MI pipes, and a pty from iof.h given to GDB with -tty).
 */
#ifndef SDM_BACKEND_H
#define SDM_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "sdm/common.h"

struct sdm_transport;
struct sdm_backend;

/* What the server gives the backend. */
struct sdm_backend_host {
	struct sdm_transport *engine;	/* watch_fd / add_timer */
	sdm_id id;			/* this server */
	uint32_t size;			/* number of servers */
	/* error != 0 makes an SDM_MSG_ERROR event instead of a reply. */
	void (*reply)(void *arg, uint32_t req, int error, const void *buf,
		      size_t len);
	void *arg;
};

struct sdm_backend_ops {
	const char *name;
	const char *help;	/* one line: the commands it understands */
	/* 0 or -errno; *ret_priv is passed back to the other calls. */
	int (*start)(const struct sdm_backend_host *host, const char *args,
		     void **ret_priv);
	/* Take a command; reply later through host->reply. 0 or -errno. */
	int (*command)(void *priv, uint32_t req, const void *cmd, size_t len);
	void (*stop)(void *priv);
};

extern const struct sdm_backend_ops sdm_backend_echo;

/* Find a backend by name; NULL if unknown. */
const struct sdm_backend_ops *sdm_backend_find(const char *name);

#endif /* SDM_BACKEND_H */
