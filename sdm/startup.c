// SPDX-License-Identifier: GPL-2.0
/*
 * Startup protocol helpers: id from the environment, host:port parsing and
 * the routing table carried by the initialization command.
 *
 * Table payload (text, so a human can read a captured INIT):
 *   "sdm-init 1 n=<N> span=<S> star=<0|1>\n"
 *   then N lines "<id> <host> <port>[ <ranks>]\n", ids in order 0..N-1;
 *   <ranks> (display form, "0-3,7") is the set of ranks the server owns,
 *   by default its own id alone.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdm/message.h"
#include "startup.h"
#include "transport.h"

const char *const sdm_startup_id_vars[] = {
	"SDM_ID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
	"SLURM_PROCID", NULL,
};

static int parse_uint(const char *s, unsigned long max, unsigned long *ret)
{
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int sdm_startup_id_from_env(sdm_id *ret_id, const char **ret_var)
{
	for (int i = 0; sdm_startup_id_vars[i]; i++) {
		const char *v = getenv(sdm_startup_id_vars[i]);
		unsigned long id;

		if (!v)
			continue;
		if (parse_uint(v, SDM_SET_MAX_ID, &id) < 0)
			return -EINVAL;
		*ret_id = id;
		if (ret_var)
			*ret_var = sdm_startup_id_vars[i];
		return 0;
	}
	return -ENOENT;
}

int sdm_startup_parse_hostport(const char *s, char *host, size_t size,
			       int *ret_port)
{
	const char *colon = strrchr(s, ':');
	unsigned long port;
	size_t hl;

	if (!colon || parse_uint(colon + 1, 65535, &port) < 0 || !port)
		return -EINVAL;
	hl = colon - s;
	if (hl >= size)
		return -EINVAL;
	if (hl == 0)
		snprintf(host, size, "127.0.0.1");
	else
		snprintf(host, size, "%.*s", (int)hl, s);
	*ret_port = port;
	return 0;
}

int sdm_table_alloc(struct sdm_table *t, uint32_t n)
{
	memset(t, 0, sizeof(*t));
	if (!n || n > SDM_SET_MAX_ID + 1u)
		return -EINVAL;
	t->e = calloc(n, sizeof(*t->e));
	if (!t->e)
		return -ENOMEM;
	t->n = n;
	t->span = 1;
	return 0;
}

int sdm_table_set_ranks(struct sdm_table *t, sdm_id id,
			const struct sdm_idset *ranks)
{
	if (id >= t->n || !ranks || sdm_set_is_empty(ranks))
		return -EINVAL;
	if (!t->ranks) {
		t->ranks = calloc(t->n, sizeof(*t->ranks));
		if (!t->ranks)
			return -ENOMEM;
	}
	sdm_set_free(t->ranks[id]);
	t->ranks[id] = sdm_set_copy(ranks);
	return t->ranks[id] ? 0 : -ENOMEM;
}

void sdm_table_free(struct sdm_table *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; t->ranks && i < t->n; i++)
		sdm_set_free(t->ranks[i]);
	free(t->ranks);
	t->ranks = NULL;
	free(t->e);
	t->e = NULL;
	t->n = 0;
}

int sdm_table_encode(const struct sdm_table *t, char **ret_buf,
		     size_t *ret_len)
{
	size_t cap = 64 + (size_t)t->n * (SDM_STARTUP_HOST_MAX + 24);
	char *buf, **names = NULL;
	size_t len;
	int rc = -ENOMEM;

	if (t->ranks) {
		names = calloc(t->n, sizeof(*names));
		if (!names)
			return -ENOMEM;
		for (uint32_t i = 0; i < t->n; i++) {
			if (!t->ranks[i])
				continue;
			names[i] = sdm_set_to_string(t->ranks[i]);
			if (!names[i])
				goto out;
			cap += strlen(names[i]) + 1;
		}
	}
	buf = malloc(cap);
	if (!buf)
		goto out;
	len = snprintf(buf, cap, "sdm-init 1 n=%u span=%d star=%d\n", t->n,
		       t->span, t->star);
	for (uint32_t i = 0; i < t->n; i++)
		len += snprintf(buf + len, cap - len, "%u %s %d%s%s\n", i,
				t->e[i].host, t->e[i].port,
				names && names[i] ? " " : "",
				names && names[i] ? names[i] : "");
	*ret_buf = buf;
	*ret_len = len;
	rc = 0;
out:
	for (uint32_t i = 0; names && i < t->n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/*
 * Next line of [*p, end), NUL-terminated, into *line (grown as needed:
 * a rank set can be long); false at the end or on ENOMEM.
 */
static bool next_line(const char **p, const char *end, char **line,
		      size_t *size)
{
	const char *nl = memchr(*p, '\n', end - *p);
	size_t n;

	if (!nl)
		return false;
	n = nl - *p;
	if (n >= *size) {
		char *l = realloc(*line, n + 1);

		if (!l)
			return false;
		*line = l;
		*size = n + 1;
	}
	memcpy(*line, *p, n);
	(*line)[n] = 0;
	*p = nl + 1;
	return true;
}

/* An entry's optional rank set: " 0-3,7" to the end of the line. */
static int parse_ranks(struct sdm_table *t, uint32_t i, const char *s)
{
	struct sdm_idset *set;
	const char *end = NULL;
	int rc;

	if (!*s)
		return 0;
	if (*s != ' ' || !s[1])
		return -EBADMSG;
	set = sdm_set_new();
	if (!set)
		return -ENOMEM;
	rc = sdm_set_parse(set, s + 1, &end);
	if (rc == 0 && (!end || *end || sdm_set_is_empty(set)))
		rc = -EBADMSG;
	if (rc == 0)
		rc = sdm_table_set_ranks(t, i, set);
	sdm_set_free(set);
	return rc < 0 && rc != -ENOMEM ? -EBADMSG : rc;
}

int sdm_table_parse(struct sdm_table *ret, const void *buf, size_t len)
{
	const char *p = buf, *end = p + len;
	size_t size = SDM_STARTUP_HOST_MAX + 64;
	char *line = malloc(size);
	struct sdm_table t;
	unsigned int n, star;
	int span, rc;

	if (!line)
		return -ENOMEM;
	if (!next_line(&p, end, &line, &size) ||
	    sscanf(line, "sdm-init 1 n=%u span=%d star=%u", &n, &span,
		   &star) != 3 || span < 1 || span > 65535 || star > 1 ||
	    !n || n > SDM_SET_MAX_ID + 1u || n > len / 6) {
		free(line);
		return -EBADMSG;
	}
	rc = sdm_table_alloc(&t, n);
	if (rc < 0) {
		free(line);
		return rc;
	}
	t.span = span;
	t.star = star;
	for (uint32_t i = 0; i < n; i++) {
		unsigned int id;
		int port, used = 0;

		if (!next_line(&p, end, &line, &size) ||
		    sscanf(line, "%u %63s %d%n", &id, t.e[i].host, &port,
			   &used) != 3 || id != i || port < 1 || port > 65535)
			rc = -EBADMSG;
		else
			rc = parse_ranks(&t, i, line + used);
		if (rc)
			goto bad;
		t.e[i].port = port;
	}
	if (p != end) {
		rc = -EBADMSG;
		goto bad;
	}
	free(line);
	*ret = t;
	return 0;
bad:
	free(line);
	sdm_table_free(&t);
	return rc;
}

static int peer_timeout_ms(int *ret_ms, char *why, size_t size)
{
	const char *v = getenv(SDM_PEER_TIMEOUT_VAR);
	unsigned long s = SDM_PEER_TIMEOUT_S;

	if (v && (parse_uint(v, SDM_PEER_TIMEOUT_MAX_S, &s) < 0 || !s)) {
		snprintf(why, size, "%s='%.32s': want seconds, 1 to %d",
			 SDM_PEER_TIMEOUT_VAR, v, SDM_PEER_TIMEOUT_MAX_S);
		return -EINVAL;
	}
	*ret_ms = (int)s * 1000;
	return 0;
}

int sdm_startup_transport_defaults(struct sdm_transport_config *cfg,
				   char *why, size_t size)
{
	cfg->peer_timeout_ms = SDM_PEER_TIMEOUT_S * 1000;
	cfg->max_frame = SDM_MSG_MAX;
	cfg->send_queue_max = 4 * (size_t)SDM_MSG_MAX;
	cfg->connect_tries = SDM_STARTUP_CONNECT_TRIES;
	cfg->connect_backoff_ms = SDM_STARTUP_BACKOFF_MS;
	cfg->connect_port_span = 1;
	cfg->handshake_timeout_ms = 10000;
	return peer_timeout_ms(&cfg->peer_timeout_ms, why, size);
}
