// SPDX-License-Identifier: GPL-2.0
/*
 * The echo/test backend: a stand-in for a debugger, for tests and
 * benchmarks. Commands (text):
 *   echo TEXT           reply TEXT (identical on every server)
 *   id                  reply "id I" (distinct on every server)
 *   mod K               reply "mod I%K" (K distinct replies)
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

static void reply_str(struct echo *e, uint32_t req, int error,
		      const char *s)
{
	e->host.reply(e->host.arg, req, error, s, strlen(s));
}

static void delayed_fire(void *arg)
{
	struct delayed *d = arg;

	d->e->host.reply(d->e->host.arg, d->req, 0, d->text, d->len);
	free(d);
}

static int spawn(struct echo *e, uint32_t req, char *argstr)
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
		reply_str(e, req, 1, "spawn: no program");
		return 0;
	}
	pid = sdm_iof_pty_spawn(argv);
	if (pid < 0) {
		snprintf(buf, sizeof(buf), "spawn: %s", strerror(-pid));
		reply_str(e, req, 1, buf);
		return 0;
	}
	reply_str(e, req, 0, "spawned");
	return 0;
}

static int echo_command(void *priv, uint32_t req, const void *cmd,
			size_t len)
{
	struct echo *e = priv;
	char c[ECHO_CMD_MAX + 1], out[64];
	unsigned long k, ms;
	int used = 0;

	if (len > ECHO_CMD_MAX) {
		reply_str(e, req, 1, "echo backend: command too long");
		return 0;
	}
	memcpy(c, cmd, len);
	c[len] = 0;
	if (!strncmp(c, "echo ", 5)) {
		reply_str(e, req, 0, c + 5);
	} else if (!strcmp(c, "id")) {
		snprintf(out, sizeof(out), "id %u", e->host.id);
		reply_str(e, req, 0, out);
	} else if (sscanf(c, "mod %lu", &k) == 1 && k > 0) {
		snprintf(out, sizeof(out), "mod %lu", e->host.id % k);
		reply_str(e, req, 0, out);
	} else if (sscanf(c, "sleep %lu %n", &ms, &used) == 1 && used &&
		   ms < 3600000) {
		size_t tl = len - used;
		struct delayed *d = malloc(sizeof(*d) + tl);

		if (!d)
			return -ENOMEM;
		d->e = e;
		d->req = req;
		d->len = tl;
		memcpy(d->text, c + used, tl);
		if (sdm_transport_add_timer(e->host.engine, ms, delayed_fire,
					    d) < 0) {
			free(d);
			return -ENOMEM;
		}
	} else if (!strncmp(c, "fail ", 5)) {
		reply_str(e, req, 1, c + 5);
	} else if (!strncmp(c, "spawn ", 6)) {
		return spawn(e, req, c + 6);
	} else if (!strcmp(c, "exit")) {
		_exit(3);
	} else {
		reply_str(e, req, 1, "echo backend: unknown command");
	}
	return 0;
}

static void echo_stop(void *priv)
{
	free(priv);
}

const struct sdm_backend_ops sdm_backend_echo = {
	.name = "echo",
	.help = "echo TEXT | id | mod K | sleep MS TEXT | fail TEXT | spawn PROG ARGS | exit",
	.start = echo_start,
	.command = echo_command,
	.stop = echo_stop,
};
