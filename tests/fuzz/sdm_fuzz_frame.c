// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the authenticated frame decoder (sdm_link_open(), as
 * the transport cuts a link's byte stream after the handshake), and each
 * message body it lets through. Every input is used three ways:
 *
 *  1. as received bytes: nothing is read past the input, and a frame
 *     that the fuzzer did not seal never passes;
 *  2. cut into frames the way the old unauthenticated stream was
 *     (header, then body_len bytes), each sealed by the other end: every
 *     one passes, in order, byte for byte, and its body decodes into a
 *     message of the header's type or is refused as a whole;
 *  3. that sealed stream with one byte flipped (where depends on the
 *     input): the frames before the flipped one pass, it never does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sdm/link.h"
#include "sdm/message.h"

#define INPUT_MAX	(1u << 16)
/* each frame of at least a header gains a tag: at most five times the input */
#define WIRE_MAX	(INPUT_MAX / SDM_FRAME_HDR_LEN * (SDM_FRAME_HDR_LEN + SDM_LINK_TAG_LEN))

struct ends {
	struct sdm_link tx, rx;
};

static void ends_init(struct ends *e)
{
	struct sdm_auth_secret s;
	uint8_t na[SDM_AUTH_NONCE_LEN], nc[SDM_AUTH_NONCE_LEN];

	memset(s.key, 0x5a, sizeof(s.key));
	memset(na, 0x11, sizeof(na));
	memset(nc, 0x22, sizeof(nc));
	if (sdm_link_init(&e->tx, &s, SDM_AUTH_CONNECTOR, nc, na) ||
	    sdm_link_init(&e->rx, &s, SDM_AUTH_ACCEPTOR, na, nc))
		abort();
}

static void ends_free(struct ends *e)
{
	sdm_link_free(&e->tx);
	sdm_link_free(&e->rx);
}

static void decode_body(const struct sdm_frame_hdr *h, const uint8_t *frame)
{
	struct sdm_message *m = NULL;

	if (!sdm_frame_type_is_message(h->type))
		return;
	if (!sdm_message_decode_body(h->type, frame + SDM_FRAME_HDR_LEN, h->body_len, &m) &&
	    m->type != h->type)
		abort();
	sdm_message_free(m);
}

/*
 * Cut wire with the receiving end; returns how many frames passed, and
 * checks each against the frames the sender sealed (starts[], lens[]).
 */
static size_t receive(struct ends *e, const uint8_t *wire, size_t len,
		      const uint8_t *orig, const size_t *starts, const size_t *lens,
		      size_t nsealed)
{
	size_t off = 0, n = 0;

	for (;;) {
		struct sdm_frame_hdr h;
		size_t flen = 0;
		int err = sdm_link_open(&e->rx, wire + off, len - off, SDM_MSG_MAX, &h, &flen);

		if (err == -EAGAIN || err == -EBADMSG || err == -EMSGSIZE ||
		    err == -EKEYREJECTED)
			return n;
		if (err || off + flen + SDM_LINK_TAG_LEN > len)
			abort();
		/* Only what the sender sealed passes, unchanged. */
		if (n >= nsealed || flen != lens[n] || memcmp(wire + off, orig + starts[n], flen))
			abort();
		decode_body(&h, wire + off);
		off += flen + SDM_LINK_TAG_LEN;
		n++;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static size_t starts[INPUT_MAX / SDM_FRAME_HDR_LEN], lens[INPUT_MAX / SDM_FRAME_HDR_LEN];
	static size_t ends_at[INPUT_MAX / SDM_FRAME_HDR_LEN];
	static uint8_t wire[WIRE_MAX];
	size_t off = 0, nframes = 0, wlen = 0, flip, before;
	unsigned int sum = 0;
	struct ends e;

	if (size > INPUT_MAX)
		return 0;
	/* 1: as received, nothing sealed. */
	ends_init(&e);
	if (receive(&e, data, size, data, starts, lens, 0))
		abort();
	ends_free(&e);

	/* 2: the input's frames, sealed. */
	ends_init(&e);
	while (off < size) {
		struct sdm_frame_hdr h;
		size_t flen;

		if (sdm_frame_header_decode(data + off, size - off, &h))
			break;
		flen = SDM_FRAME_HDR_LEN + (size_t)h.body_len;
		if (size - off < flen)
			break;
		memcpy(wire + wlen, data + off, flen);
		if (sdm_link_seal(&e.tx, data + off, flen, wire + wlen + flen))
			abort();
		starts[nframes] = off;
		lens[nframes] = flen;
		wlen += flen + SDM_LINK_TAG_LEN;
		ends_at[nframes++] = wlen;
		off += flen;
	}
	if (receive(&e, wire, wlen, data, starts, lens, nframes) != nframes)
		abort();
	ends_free(&e);
	if (!wlen)
		return 0;

	/* 3: one byte flipped; the frames before it pass, its own never. */
	for (size_t i = 0; i < size; i++)
		sum = sum * 31 + data[i];
	flip = sum % wlen;
	wire[flip] ^= 1 << (sum >> 29);
	for (before = 0; ends_at[before] <= flip; before++)
		;
	ends_init(&e);
	if (receive(&e, wire, wlen, data, starts, lens, before) != before)
		abort();
	ends_free(&e);
	return 0;
}
