// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the core image's credentials decoder
 * (usr/crs/criu-creds.c): any bytes as a core-TID.img. What it accepts
 * has every id field present and no more groups than it counted.
 */
#include <stdint.h>
#include <stdlib.h>

#include "criu-creds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct crs_criu_creds c;

	if (!crs_criu_creds_parse(data, size, &c)) {
		if (c.have != 0xff || c.nr_groups > CRS_CREDS_MAX_GROUPS ||
		    (c.nr_groups <= 64 && c.groups_truncated))
			abort();
	}
	return 0;
}
