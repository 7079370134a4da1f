// SPDX-License-Identifier: GPL-2.0
/* The lineage keeper's decoder of a SPAWN request (lineage-wire.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "lineage-wire.h"

int lin_decode_spawn(char *msg, size_t len, struct lin_spawn *s)
{
	struct lin_hdr h;
	size_t off = sizeof(h), n, k, nr_args = 0, nr_env = 0;
	bool in_env = false;

	memset(s, 0, sizeof(*s));
	if (len < sizeof(h) || len > LIN_MSG_MAX)
		return -EBADMSG;
	memcpy(&h, msg, sizeof(h));
	if (h.type != LIN_SPAWN || h.nr_fds == 0 || h.nr_fds > LIN_MAX_FDS || h.arg < -1 ||
	    len - off < h.nr_fds * sizeof(int32_t))
		return -EBADMSG;
	s->pgid = h.arg;
	s->nr_fds = h.nr_fds;
	for (k = 0; k < s->nr_fds; k++, off += sizeof(int32_t)) {
		int32_t t;

		memcpy(&t, msg + off, sizeof(t));
		if (t < 0 || t > 1023)
			return -EBADMSG;
		for (size_t j = 0; j < k; j++)
			if (s->targets[j] == t)
				return -EBADMSG;
		s->targets[k] = t;
	}
	while (off < len) {
		char *str = msg + off, *nul = memchr(str, '\0', len - off);

		if (!nul)
			return -EBADMSG;
		n = (size_t)(nul - str) + 1;
		off += n;
		if (!in_env && n == 1) {
			in_env = true;
			continue;
		}
		if (in_env ? nr_env >= LIN_MAX_ARGS : nr_args >= LIN_MAX_ARGS)
			return -EBADMSG;
		if (in_env)
			s->env[nr_env++] = str;
		else
			s->argv[nr_args++] = str;
	}
	if (!in_env || nr_args == 0 || s->argv[0][0] != '/')
		return -EBADMSG;
	for (k = 0; k < nr_env; k++)
		if (!strchr(s->env[k], '=') || s->env[k][0] == '=')
			return -EBADMSG;
	return 0;
}
