// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the ELF reader that recognises MPIR starters by their
 * symbols. Whatever the bytes, it must stay inside them and answer either
 * -ENOEXEC or a set of the three MPIR symbol bits with a printable build id.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpir-probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char id[64];
	/* A copy of exactly size bytes, so ASan sees any read past the end. */
	uint8_t *buf = malloc(size ? size : 1);
	int bits;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	bits = mpir_probe_elf(buf, size, id, sizeof(id));
	if (bits != -ENOEXEC && (bits < 0 || bits > 7))
		abort();
	if (strlen(id) >= sizeof(id) || strspn(id, "0123456789abcdef") != strlen(id))
		abort();
	free(buf);
	return 0;
}
