/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Authenticated frames: integrity and order for every frame of a link
 * after its handshake (auth.h).
 *
 * Both ends derive two keys from the session secret and the handshake's
 * two nonces with HKDF-SHA-256, one per direction:
 *
 *   salt = acceptor's nonce || connector's nonce
 *   info = "crdbg-sdm-frame-v1" || direction   (1: connector to acceptor,
 *                                                2: acceptor to connector)
 *
 * and follow every frame with a tag
 *
 *   HMAC-SHA-256(key of its direction, seq || header || body)
 *
 * where seq is the frame's number in its direction (a big-endian u64
 * counted from 0, never sent). So a frame altered, replayed, reordered,
 * dropped, or built by anyone without the secret fails verification, and
 * so does one reflected back to its sender (the other direction's key).
 * New nonces make new keys for every connection: a frame recorded on one
 * link fails on any other. The first frame each way is the "hello".
 *
 *   header (8) | body (header's length) | tag (SDM_LINK_TAG_LEN)
 *
 * No I/O here: the transport cuts its byte stream with sdm_link_open().
 */
#ifndef SDM_LINK_H
#define SDM_LINK_H

#include "sdm/auth.h"
#include "sdm/common.h"
#include "sdm/message.h"

#define SDM_LINK_TAG_LEN	32

/* One link's keyed state, both directions. */
struct sdm_link {
	void *tx_mac, *rx_mac;	/* keyed MAC contexts (libcrypto) */
	uint64_t tx_seq, rx_seq;	/* number of the next frame each way */
};

/*
 * Key *ret for the end that played role in the handshake, where it sent
 * my_nonce and received peer_nonce. 0, -ENOMEM or -EIO.
 */
int sdm_link_init(struct sdm_link *ret, const struct sdm_auth_secret *s,
		  enum sdm_auth_role role,
		  const uint8_t my_nonce[SDM_AUTH_NONCE_LEN],
		  const uint8_t peer_nonce[SDM_AUTH_NONCE_LEN]);

/* Free the keys (a zeroed or freed link is fine). */
void sdm_link_free(struct sdm_link *l);

/*
 * The tag of the next frame to send (header and body, len bytes), which
 * the sender writes right after it. Counts the frame. 0 or -EIO.
 */
int sdm_link_seal(struct sdm_link *l, const void *frame, size_t len,
		  uint8_t ret_tag[SDM_LINK_TAG_LEN]);

/*
 * Cut the next received frame from the start of buf (len bytes) and check
 * its tag. Returns 0 with *ret_hdr and *ret_len (header and body, the tag
 * excluded; the frame uses *ret_len + SDM_LINK_TAG_LEN bytes of buf),
 * -EAGAIN while the whole frame and its tag are not there yet, -EBADMSG or
 * -EMSGSIZE for a bad header (as sdm_frame_header_decode(), or a frame
 * above max_frame when max_frame is not 0), -EKEYREJECTED when the tag does
 * not match, -EIO if libcrypto fails. Only a verified frame is counted; after any error other than
 * -EAGAIN the link cannot go on.
 */
int sdm_link_open(struct sdm_link *l, const void *buf, size_t len,
		  size_t max_frame, struct sdm_frame_hdr *ret_hdr,
		  size_t *ret_len);

/* The number of the next frame to be received (for a person: "frame N"). */
static inline uint64_t sdm_link_rx_seq(const struct sdm_link *l)
{
	return l->rx_seq;
}

#endif /* SDM_LINK_H */
