// SPDX-License-Identifier: GPL-2.0
/*
 * A job's ranks by node (ranks.h): which server drives which ranks, and
 * each rank's gdb attached to its node-local pid. Shared by the MPIR
 * acquisition (mpir.c) and a session adopting a restarted job
 * checkpoint (adopt.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crdbg/dbgproto.h"
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "ranks.h"
#include "session.h"

bool dbg_host_is_local(const char *host)
{
	char self[256];

	if (!*host || !strcmp(host, "localhost") || !strcmp(host, "127.0.0.1"))
		return true;
	if (gethostname(self, sizeof(self)) < 0)
		return false;
	self[sizeof(self) - 1] = 0;
	/* "node1" and "node1.cluster" are one machine. */
	return !strncmp(host, self, strcspn(self, ".")) &&
	       (host[strcspn(self, ".")] == 0 || host[strcspn(self, ".")] == '.');
}

int dbg_ranks_by_node(const struct dbg_proc *p, long n, struct dbg_placement *where,
		      char *err, size_t errlen)
{
	struct sdm_idset *set = sdm_set_new();
	char **ranks = calloc(n, sizeof(*ranks));
	char *hosts = calloc(n, DBG_HOST_MAX + 1), *q = hosts;
	uint32_t ns = 0;
	int rc = -ENOMEM;

	if (!set || !ranks || !hosts)
		goto out;
	for (long i = 0; i < n; i++) {
		bool seen = false;

		if (strspn(p[i].host, "abcdefghijklmnopqrstuvwxyz"
			   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") !=
		    strlen(p[i].host)) {
			snprintf(err, errlen, "rank %ld's host name '%.64s' is not a "
				 "host name", i, p[i].host);
			rc = -EINVAL;
			goto out;
		}
		for (long j = 0; j < i && !seen; j++)
			seen = !strcmp(p[j].host, p[i].host);
		if (seen)
			continue;
		/* Server ns drives every rank on this host. */
		sdm_set_clear(set);
		for (long j = i; j < n; j++)
			if (!strcmp(p[j].host, p[i].host) &&
			    sdm_set_add_element(set, j) < 0)
				goto out;
		ranks[ns] = sdm_set_to_string(set);
		if (!ranks[ns])
			goto out;
		q += sprintf(q, "%s%s", ns ? "," : "", p[i].host);
		ns++;
	}
	where->nservers = ns;
	where->ranks = (const char *const *)ranks;
	where->hosts = hosts;
	ranks = NULL;
	hosts = NULL;
	rc = 0;
out:
	for (long i = 0; ranks && i < n; i++)
		free(ranks[i]);
	free(ranks);
	free(hosts);
	sdm_set_free(set);
	return rc;
}

int dbg_attach_ranks(struct dbg_session *s, const struct dbg_proc *p, long n)
{
	struct sdm_fe_result acc = { 0 };
	uint32_t *req = calloc(n, sizeof(*req));
	struct sdm_idset *one = sdm_set_new();
	char cmd[DBGP_CMD_MAX + 1];
	int rc = 0;

	if (!req || !one) {
		rc = -ENOMEM;
		goto out;
	}
	for (long i = 0; i < n; i++) {
		struct dbgp_cmd c = { .verb = DBGP_ATTACH, .pid = p[i].pid, .arg = p[i].exe };
		int len = dbgp_encode(cmd, sizeof(cmd), &c);

		if (len < 0) {
			rc = len;
			goto out;
		}
		sdm_set_clear(one);
		sdm_set_add_element(one, i);
		rc = sdm_fe_submit(s->fe, one, cmd, len, dbg_load_timeout(s), &req[i]);
		if (rc < 0)
			goto out;
	}
	for (long i = 0; i < n; i++) {
		struct sdm_fe_result r;

		if (sdm_fe_collect(s->fe, req[i], &r) < 0)
			continue;
		for (unsigned int k = 0; k < r.nev; k++) {
			struct sdm_fe_event *ev = &r.ev[k];
			unsigned int j;

			for (j = 0; j < acc.nev; j++) {
				if (acc.ev[j].type == ev->type &&
				    !strcmp((char *)acc.ev[j].payload,
					    (char *)ev->payload)) {
					sdm_set_union(acc.ev[j].src, ev->src);
					break;
				}
			}
			if (j < acc.nev)
				continue;
			/* Move the event into acc. */
			struct sdm_fe_event *v = realloc(acc.ev, (acc.nev + 1) *
							 sizeof(*v));

			if (!v)
				continue;
			acc.ev = v;
			acc.ev[acc.nev++] = *ev;
			ev->src = NULL;
			ev->payload = NULL;
		}
		sdm_fe_result_free(&r);
	}
	dbg_print_result(s, "attach", &acc);
out:
	sdm_fe_result_free(&acc);
	sdm_set_free(one);
	free(req);
	return rc;
}

int dbg_ranks_set_hosts(struct dbg_session *s, const struct dbg_proc *p, long n)
{
	char **host = calloc(n, sizeof(*host));
	int rc;

	if (!host)
		return -ENOMEM;
	for (long i = 0; i < n; i++)
		host[i] = (char *)p[i].host;
	rc = dbg_session_set_hosts(s, host);
	free(host);
	return rc;
}
