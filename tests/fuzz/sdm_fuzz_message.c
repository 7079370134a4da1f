// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: one whole frame into sdm_message_decode(). A message
 * that decodes must re-encode into a frame that decodes to the same thing.
 */
#include <stdlib.h>
#include <string.h>

#include "sdm/message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sdm_message *m = NULL, *again = NULL;
	void *buf;
	size_t len;

	if (sdm_message_decode(data, size, &m))
		return 0;
	if (sdm_message_encode_alloc(m, &buf, &len) || sdm_message_decode(buf, len, &again))
		abort();
	if (again->type != m->type || again->agg.id != m->agg.id ||
	    again->agg.timeout_ms != m->agg.timeout_ms ||
	    !sdm_set_equal(again->src, m->src) || !sdm_set_equal(again->dest, m->dest) ||
	    again->len != m->len || (m->len && memcmp(again->payload, m->payload, m->len)))
		abort();
	free(buf);
	sdm_message_free(m);
	sdm_message_free(again);
	return 0;
}
