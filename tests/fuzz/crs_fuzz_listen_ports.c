// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for a checkpoint's "listen-ports" record decoder
 * (usr/crs/listen-ports.c): any bytes as one record. What it accepts is
 * at most the caps on their numbers, each port a TCP port (0-65535), each
 * address a NUL-terminated IPv4 or IPv6 address.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "listen-ports.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct crs_listen_record rec;
	unsigned char bin[16];

	if (crs_listen_ports_parse((const char *)data, size, &rec))
		return 0;
	if (rec.nr_ports > CRS_LISTEN_PORTS_MAX || rec.nr_addrs > CRS_LISTEN_ADDRS_MAX)
		abort();
	for (size_t i = 0; i < rec.nr_ports; i++)
		if (rec.ports[i] > 65535)
			abort();
	for (size_t i = 0; i < rec.nr_addrs; i++)
		if (!memchr(rec.addrs[i], '\0', CRS_LISTEN_ADDR_LEN) ||
		    (inet_pton(AF_INET, rec.addrs[i], bin) != 1 &&
		     inet_pton(AF_INET6, rec.addrs[i], bin) != 1))
			abort();
	return 0;
}
