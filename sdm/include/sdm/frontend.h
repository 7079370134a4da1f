/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small SDM front end, for tests, benchmarks and the crdbg CLI: it
 * launches the master and N servers (locally with fork/exec, or through a
 * launcher template), runs the startup protocol, broadcasts commands and
 * collects the aggregated events.
 *
 * Launcher templates (run with /bin/sh -c, stdout read back for the
 * servers' "ready" lines):
 *  - with {id} or {host}: run once per server, e.g. "ssh {host} {cmd}";
 *    {cmd} then carries SDM_ID={id} itself;
 *  - otherwise once for all, e.g. "mpirun -np {n} {cmd}" or
 *    "srun -n {n} {cmd}": the launcher's rank variable gives each id.
 * {cmd} expands to "env SDM_SECRET_FILE=... [SDM_ID=..] sdm-server ...".
 * The secret file must then be visible to the servers (shared file system).
 * With secret_stdin (per-server templates only) {cmd} carries
 * SDM_SECRET_STDIN=1 instead and the secret is written to the launcher's
 * stdin, which it forwards to the server on its node (srun, ssh do).
 */
#ifndef SDM_FRONTEND_H
#define SDM_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sdm/common.h"
#include "sdm/idset.h"

struct sdm_fe;

struct sdm_fe_config {
	uint32_t nservers;
	const char *bindir;	/* sdm-master, sdm-server; default build/sdm */
	const char *server;	/* server program: a name in bindir or a path;
				 * default "sdm-server" (echo backend only) */
	const char *launcher;	/* NULL: local fork/exec */
	const char *hosts;	/* comma-separated, for {host}; default local */
	int base_port;		/* first port servers try; 0: from the pid */
	const char *backend;	/* default "echo" */
	bool star;		/* benchmark: connect to every server directly */
	bool secret_stdin;	/* remote launchers: the secret on their stdin */
	int init_timeout_ms;	/* default 30000 */
	const char *log_path;	/* daemons' stderr (append); NULL: inherit */
	bool bad_secret;	/* test hook: server bad_secret_id gets a */
	sdm_id bad_secret_id;	/* different secret than everyone else */
	const char *backend_args;	/* sdm-server --backend-args, or NULL */
	/*
	 * The ranks each server owns, nservers strings in display form
	 * ("0-1", "2,5"): commands and replies speak of ranks, server i
	 * drives ranks[i] (sdm/route.h, rank-set routing). NULL: server i
	 * owns rank i. Not with star.
	 */
	const char *const *ranks;
};

/* One event received by the front end. */
struct sdm_fe_event {
	uint8_t type;			/* SDM_MSG_REPLY or SDM_MSG_ERROR */
	struct sdm_idset *src;		/* the ids it speaks for */
	uint8_t *payload;
	size_t len;
};

struct sdm_fe_result {
	struct sdm_fe_event *ev;
	unsigned int nev;
	bool complete;		/* every destination id answered */
};

/*
 * Launch and initialise. On success *ret is a running session and 0 is
 * returned. -EHOSTDOWN: the session started but some servers failed to
 * initialise (sdm_fe_init_result() names them; call sdm_fe_stop()).
 * Other -errno: nothing is left running; err (if not NULL) says why.
 */
int sdm_fe_start(const struct sdm_fe_config *cfg, struct sdm_fe **ret,
		 char *err, size_t errlen);
/* Shut the tree down, reap every process, remove the secret file. */
void sdm_fe_stop(struct sdm_fe *fe);

/* The events that answered the initialization command. */
const struct sdm_fe_result *sdm_fe_init_result(struct sdm_fe *fe);

/*
 * Commands, stdin and events address ranks (server ids when the
 * configuration gives no rank sets).
 * Send a command; *ret_req identifies it for sdm_fe_collect. 0 or -errno.
 */
int sdm_fe_submit(struct sdm_fe *fe, const struct sdm_idset *dest,
		  const void *cmd, size_t len, uint32_t timeout_ms,
		  uint32_t *ret_req);
/*
 * Wait until every destination of req answered or its timeout (plus a
 * grace) passed; the ids that never answered are then named by an
 * SDM_MSG_ERROR event made here. Never hangs. *ret is the caller's to free.
 */
int sdm_fe_collect(struct sdm_fe *fe, uint32_t req,
		   struct sdm_fe_result *ret);
/* submit + collect. */
int sdm_fe_command(struct sdm_fe *fe, const struct sdm_idset *dest,
		   const char *cmd, uint32_t timeout_ms,
		   struct sdm_fe_result *ret);
void sdm_fe_result_free(struct sdm_fe_result *r);

/* Stdin for the programs run by the servers in dest. 0 or -errno. */
int sdm_fe_stdin(struct sdm_fe *fe, const struct sdm_idset *dest,
		 const void *buf, size_t len);
/*
 * Next chunk of forwarded output: returns its length (copied into buf,
 * truncated to size), 0 if none arrived within timeout_ms, or -errno.
 * A timeout of 0 still reads what the network already holds.
 */
ssize_t sdm_fe_read_output(struct sdm_fe *fe, int timeout_ms,
			   sdm_id *ret_id, int *ret_stream, void *buf,
			   size_t size);

/*
 * An fd for poll(): readable when the front end has network input (a
 * forwarded output chunk, a late reply) to take in; then call
 * sdm_fe_read_output(). Lets a caller wait for its own input and the
 * session's at once.
 */
int sdm_fe_poll_fd(struct sdm_fe *fe);

pid_t sdm_fe_server_pid(struct sdm_fe *fe, sdm_id id);	/* local only */
int sdm_fe_server_port(struct sdm_fe *fe, sdm_id id);
/* The session's 0600 secret file (tests connect extra peers with it). */
const char *sdm_fe_secret_path(struct sdm_fe *fe);

/* Frames and bytes the front end received since the last reset. */
void sdm_fe_counters(struct sdm_fe *fe, uint64_t *ret_frames,
		     uint64_t *ret_bytes);
void sdm_fe_counters_reset(struct sdm_fe *fe);

#endif /* SDM_FRONTEND_H */
