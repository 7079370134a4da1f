// SPDX-License-Identifier: GPL-2.0
/* The "listen-ports" record of a checkpoint parsed (listen-ports.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "listen-ports.h"

/* One "addr <address>" value: an IPv4 or IPv6 address, as inet_ntop() writes it. */
static bool valid_addr(const char *s)
{
	unsigned char bin[16];
	char back[CRS_LISTEN_ADDR_LEN];
	int af = strchr(s, ':') ? AF_INET6 : AF_INET;

	return inet_pton(af, s, bin) == 1 && inet_ntop(af, bin, back, sizeof(back)) &&
	       !strcmp(back, s);
}

int crs_listen_ports_parse(const char *buf, size_t len, struct crs_listen_record *ret)
{
	static const char head[] = "crdbg-listen-ports ";
	size_t pos = sizeof(head) + 1;	/* "crdbg-listen-ports N\n" */
	int version;

	memset(ret, 0, sizeof(*ret));
	if (len < pos || memcmp(buf, head, sizeof(head) - 1) || buf[pos - 1] != '\n' ||
	    buf[pos - 2] < '1' || buf[pos - 2] > '3')
		return -EBADMSG;
	version = buf[pos - 2] - '0';
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		char line[64], addr[CRS_LISTEN_ADDR_LEN];
		unsigned int port;
		size_t n = nl ? (size_t)(nl - buf - pos) : 0;
		int end = -1;

		if (!nl || n >= sizeof(line))
			return -EBADMSG;
		memcpy(line, buf + pos, n);
		line[n] = '\0';
		if (sscanf(line, "listen %5u%n", &port, &end) == 1 && port <= 65535 &&
		    ret->nr_ports < CRS_LISTEN_PORTS_MAX &&
		    (end == (int)n || (version >= 3 &&
				       !strcmp(line + end, " " CRS_LISTEN_NO_REUSEADDR)))) {
			ret->no_reuseaddr[ret->nr_ports] = end != (int)n;
			ret->ports[ret->nr_ports++] = port;
		} else if (version >= 2 && sscanf(line, "addr %45s%n", addr, &end) == 1 && end == (int)n &&
			   valid_addr(addr) && ret->nr_addrs < CRS_LISTEN_ADDRS_MAX) {
			memcpy(ret->addrs[ret->nr_addrs++], addr, sizeof(addr));
		} else {
			return -EBADMSG;
		}
		pos += n + 1;
	}
	return 0;
}
