// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the lineage keeper's SPAWN decoder
 * (usr/crs/lineage-wire.c): any bytes as one message. What it accepts
 * must be safe to act on: argv[0] a path, 1-16 distinct target fds in
 * 0-1023, every string inside the message, every env entry NAME=VALUE.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lineage-wire.h"

static void inside(const char *s, const char *buf, size_t size)
{
	if (s < buf || s >= buf + size || !memchr(s, '\0', (size_t)(buf + size - s)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	struct lin_spawn s;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (!lin_decode_spawn(buf, size, &s)) {
		if (s.nr_fds < 1 || s.nr_fds > LIN_MAX_FDS || !s.argv[0] || s.argv[0][0] != '/')
			abort();
		for (size_t i = 0; i < s.nr_fds; i++) {
			if (s.targets[i] < 0 || s.targets[i] > 1023)
				abort();
			for (size_t j = 0; j < i; j++)
				if (s.targets[i] == s.targets[j])
					abort();
		}
		for (size_t i = 0; s.argv[i]; i++)
			inside(s.argv[i], buf, size);
		for (size_t i = 0; s.env[i]; i++) {
			inside(s.env[i], buf, size);
			if (!strchr(s.env[i], '=') || s.env[i][0] == '=')
				abort();
		}
	}
	free(buf);
	return 0;
}
