// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: a byte stream cut into frames the way the transport
 * does it (header, then body_len bytes), each message body decoded.
 * Stops at the first malformed header, as a connection would be dropped.
 */
#include <errno.h>
#include <stdlib.h>

#include "sdm/message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (off < size) {
		struct sdm_frame_hdr hdr;
		struct sdm_message *m = NULL;
		int err = sdm_frame_header_decode(data + off, size - off, &hdr);

		if (err == -EAGAIN || err)
			break;
		if (hdr.body_len > SDM_MSG_MAX - SDM_FRAME_HDR_LEN)
			abort();
		if (size - off - SDM_FRAME_HDR_LEN < hdr.body_len)
			break;		/* would wait for more bytes */
		off += SDM_FRAME_HDR_LEN;
		if (sdm_frame_type_is_message(hdr.type)) {
			err = sdm_message_decode_body(hdr.type, data + off, hdr.body_len, &m);
			if (!err && m->type != hdr.type)
				abort();
			sdm_message_free(m);
		}
		off += hdr.body_len;
	}
	return 0;
}
