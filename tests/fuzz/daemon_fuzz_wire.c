// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the service's wire decoder (usr/daemon/wire.c):
 * any bytes as one message. What it accepts has a known kind, known
 * flags, NUL-terminated strings, and formats back to a message that
 * parses to the same attributes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <crdbg/crdbgd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct crdbgd_msg m, back;
	static uint8_t buf[CRDBGD_MSG_MAX * 2];
	int n;

	if (crdbgd_parse(data, size, &m))
		return 0;
	if (m.kind <= CRDBGD_OP_UNSPEC || m.kind > CRDBGD_OP_MAX ||
	    (m.flags & ~(uint32_t)__CRDBGD_F_ALL) || m.nr_criu_opts > CRS_MAX_CRIU_OPTS ||
	    !memchr(m.handle, '\0', sizeof(m.handle)) || !memchr(m.error, '\0', sizeof(m.error)))
		abort();
	n = crdbgd_format(&m, buf, sizeof(buf));
	if (n < 0 || crdbgd_parse(buf, (size_t)n, &back) || back.have != m.have ||
	    back.pid != m.pid || strcmp(back.handle, m.handle) || back.nr_criu_opts != m.nr_criu_opts)
		abort();
	return 0;
}
