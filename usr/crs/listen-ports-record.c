// SPDX-License-Identifier: GPL-2.0
/* The "listen-ports" record of a checkpoint parsed (listen-ports.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "listen-ports.h"

int crs_listen_ports_parse(const char *buf, size_t len, unsigned int *ports, size_t max,
			   size_t *ret_nr)
{
	static const char head[] = "crdbg-listen-ports 1\n";
	size_t pos = sizeof(head) - 1, nr = 0;

	if (len < pos || memcmp(buf, head, pos))
		return -EBADMSG;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		char line[32];
		unsigned int port;
		size_t n = nl ? (size_t)(nl - buf - pos) : 0;
		int end = -1;

		if (!nl || n >= sizeof(line) || nr >= max)
			return -EBADMSG;
		memcpy(line, buf + pos, n);
		line[n] = '\0';
		if (sscanf(line, "listen %5u%n", &port, &end) != 1 || end != (int)n || port > 65535)
			return -EBADMSG;
		ports[nr++] = port;
		pos += n + 1;
	}
	*ret_nr = nr;
	return 0;
}
