// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the servers' "part" command parser (what a peer
 * of the SDM tree can make a server read): any bytes, as one command.
 * A start it accepts must name only crdbg's part operations.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "part-cmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	struct part_cmd c;
	const char *why;
	bool part = false;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	if (!part_cmd_parse(buf, &c, &why) && c.op == PART_START) {
		if (c.argc < 2 || c.argv[c.argc + 1])
			abort();
		for (int i = 2; i <= c.argc; i++)
			part |= !strcmp(c.argv[i], "--part");
		if (!part || (strcmp(c.argv[1], "checkpoint") && strcmp(c.argv[1], "restart") &&
			      strcmp(c.argv[1], "verify") && strcmp(c.argv[1], "rm")))
			abort();
	}
	free(buf);
	return 0;
}
