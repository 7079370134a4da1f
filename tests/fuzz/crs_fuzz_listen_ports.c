// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for a checkpoint's "listen-ports" record decoder
 * (usr/crs/listen-ports.c): any bytes as one record. What it accepts is
 * at most the cap on their number, each a TCP port (0-65535).
 */
#include <stdint.h>
#include <stdlib.h>

#include "listen-ports.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int ports[CRS_LISTEN_PORTS_MAX];
	size_t nr = 0;

	if (crs_listen_ports_parse((const char *)data, size, ports, CRS_LISTEN_PORTS_MAX, &nr))
		return 0;
	if (nr > CRS_LISTEN_PORTS_MAX)
		abort();
	for (size_t i = 0; i < nr; i++)
		if (ports[i] > 65535)
			abort();
	return 0;
}
