// SPDX-License-Identifier: GPL-2.0
/*
 * The echo/test backend: a stand-in for a debugger, for tests and
 * benchmarks. A server may own several ranks; commands (text):
 *   echo TEXT           reply TEXT, once per rank (identical everywhere:
 *                       the server merges its ranks' replies)
 *   id                  reply "id R" for each rank R (distinct)
 *   mod K               reply "mod R%K" for each rank R (K distinct replies)
 *   server              reply "server S" for all its ranks at once
 *   sleep MS TEXT       reply TEXT after MS milliseconds
 *   fail TEXT           error event TEXT
 *   spawn PROG ARGS...  run PROG on a pty, its output forwarded (iof.h)
 *   exit                the server exits at once (crash simulation)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdm/server.h"

#define ECHO_CMD_MAX	4096
#define ECHO_ARGS_MAX	32

struct echo {
	struct sdm_backend_host host;
};

struct delayed {
	struct echo *e;
	uint32_t req;
	struct sdm_idset *ranks;
	size_t len;
	char text[];
};

static int echo_start(const struct sdm_backend_host *host, const char *args,
		      void **ret_priv)
{
	struct echo *e = calloc(1, sizeof(*e));

	(void)args;
	if (!e)
		return -ENOMEM;
	e->host = *host;
	*ret_priv = e;
	return 0;
}

static void reply_str(struct echo *e, uint32_t req,
		      const struct sdm_idset *ranks, int error, const char *s)
{
	e->host.reply(e->host.arg, req, ranks, error, s, strlen(s));
}

/* One reply per rank: prefix and the rank (modulo mod, if not 0). */
static int reply_each(struct echo *e, uint32_t req,
		      const struct sdm_idset *ranks, const char *prefix,
		      unsigned long mod)
{
	struct sdm_idset *one = sdm_set_new();
	char out[64];
	sdm_id r;

	if (!one)
		return -ENOMEM;
	sdm_set_for_each(r, ranks) {
		sdm_set_clear(one);
		if (sdm_set_add_element(one, r) < 0)
			break;
		snprintf(out, sizeof(out), "%s%lu", prefix,
			 mod ? r % mod : (unsigned long)r);
		reply_str(e, req, one, 0, out);
	}
	sdm_set_free(one);
	return 0;
}

/* The same text for each rank, in one reply per rank. */
static int echo_each(struct echo *e, uint32_t req,
		     const struct sdm_idset *ranks, const char *text)
{
	struct sdm_idset *one = sdm_set_new();
	sdm_id r;

	if (!one)
		return -ENOMEM;
	sdm_set_for_each(r, ranks) {
		sdm_set_clear(one);
		if (sdm_set_add_element(one, r) < 0)
			break;
		reply_str(e, req, one, 0, text);
	}
	sdm_set_free(one);
	return 0;
}

static void delayed_fire(void *arg)
{
	struct delayed *d = arg;

	d->e->host.reply(d->e->host.arg, d->req, d->ranks, 0, d->text,
			 d->len);
	sdm_set_free(d->ranks);
	free(d);
}

static int spawn(struct echo *e, uint32_t req, const struct sdm_idset *ranks,
		 char *argstr)
{
	char *argv[ECHO_ARGS_MAX + 1];
	char buf[64];
	int argc = 0;
	pid_t pid;

	for (char *tok = strtok(argstr, " "); tok && argc < ECHO_ARGS_MAX;
	     tok = strtok(NULL, " "))
		argv[argc++] = tok;
	argv[argc] = NULL;
	if (!argc) {
		reply_str(e, req, ranks, 1, "spawn: no program");
		return 0;
	}
	pid = sdm_iof_pty_spawn(argv);
	if (pid < 0) {
		snprintf(buf, sizeof(buf), "spawn: %s", strerror(-pid));
		reply_str(e, req, ranks, 1, buf);
		return 0;
	}
	reply_str(e, req, ranks, 0, "spawned");
	return 0;
}

static int echo_command(void *priv, uint32_t req,
			const struct sdm_idset *ranks, const void *cmd,
			size_t len)
{
	struct echo *e = priv;
	char c[ECHO_CMD_MAX + 1], out[64];
	unsigned long k, ms;
	int used = 0;

	if (len > ECHO_CMD_MAX) {
		reply_str(e, req, ranks, 1, "echo backend: command too long");
		return 0;
	}
	memcpy(c, cmd, len);
	c[len] = 0;
	if (!strncmp(c, "echo ", 5)) {
		return echo_each(e, req, ranks, c + 5);
	} else if (!strcmp(c, "id")) {
		return reply_each(e, req, ranks, "id ", 0);
	} else if (sscanf(c, "mod %lu", &k) == 1 && k > 0) {
		return reply_each(e, req, ranks, "mod ", k);
	} else if (!strcmp(c, "server")) {
		snprintf(out, sizeof(out), "server %u", e->host.id);
		reply_str(e, req, ranks, 0, out);
	} else if (sscanf(c, "sleep %lu %n", &ms, &used) == 1 && used &&
		   ms < 3600000) {
		size_t tl = len - used;
		struct delayed *d = malloc(sizeof(*d) + tl);

		if (!d)
			return -ENOMEM;
		d->e = e;
		d->req = req;
		d->len = tl;
		d->ranks = sdm_set_copy(ranks);
		memcpy(d->text, c + used, tl);
		if (!d->ranks || sdm_transport_add_timer(e->host.engine, ms,
							 delayed_fire, d) < 0) {
			sdm_set_free(d->ranks);
			free(d);
			return -ENOMEM;
		}
	} else if (!strncmp(c, "fail ", 5)) {
		reply_str(e, req, ranks, 1, c + 5);
	} else if (!strncmp(c, "spawn ", 6)) {
		return spawn(e, req, ranks, c + 6);
	} else if (!strcmp(c, "exit")) {
		_exit(3);
	} else {
		reply_str(e, req, ranks, 1, "echo backend: unknown command");
	}
	return 0;
}

static void echo_stop(void *priv)
{
	free(priv);
}

const struct sdm_backend_ops sdm_backend_echo = {
	.name = "echo",
	.help = "echo TEXT | id | mod K | server | sleep MS TEXT | fail TEXT | spawn PROG ARGS | exit",
	.start = echo_start,
	.command = echo_command,
	.stop = echo_stop,
};
