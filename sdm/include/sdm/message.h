/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SDM messages (sdm_message_*) and the framed wire format.
 *
 * Every byte between two SDM processes travels in a frame:
 *
 *   offset size field
 *   0      2    magic "SD" (0x53 0x44)
 *   2      1    version (SDM_WIRE_VERSION)
 *   3      1    type (enum sdm_frame_type)
 *   4      4    body length, big endian, <= SDM_MSG_MAX - SDM_FRAME_HDR_LEN
 *   8      ...  body
 *
 * Auth frames carry a fixed-size body (auth.h). Every other type is a
 * message whose body is
 *
 *   u32 request id, u32 timeout (ms)       the aggregate element
 *   u32 n, n bytes                         source id set (idset.h form)
 *   u32 n, n bytes                         destination id set
 *   remaining bytes                        opaque payload
 *
 * (all integers big endian). Documentation/sdm.md, "Wire format", has the
 * full description. The sending, progress and callback parts of the classic
 * sdm_message_* API belong to the transport (its own header); this header
 * is the data structure and its codec, with no I/O.
 */
#ifndef SDM_MESSAGE_H
#define SDM_MESSAGE_H

#include <sys/types.h>

#include "sdm/common.h"
#include "sdm/idset.h"

#define SDM_WIRE_VERSION	2	/* 2: frames after the handshake carry a tag (link.h) */
#define SDM_FRAME_MAGIC0	0x53	/* 'S' */
#define SDM_FRAME_MAGIC1	0x44	/* 'D' */
#define SDM_FRAME_HDR_LEN	8
/* Largest frame, header included; a peer announcing more is dropped. */
#define SDM_MSG_MAX		(8u << 20)
#define SDM_MSG_BODY_MIN	16	/* aggregate element + two set lengths */

enum sdm_frame_type {
	SDM_FRAME_UNSPEC,
	/* Connection handshake, see auth.h. Bodies of fixed size. */
	SDM_FRAME_AUTH_CHALLENGE,	/* SDM_AUTH_NONCE_LEN-byte nonce */
	SDM_FRAME_AUTH_RESPONSE,	/* SDM_AUTH_MAC_LEN-byte HMAC */
	/* Messages: body as above. */
	SDM_MSG_INIT,		/* down: initialization, routing table payload */
	SDM_MSG_COMMAND,	/* down: a command for the destination ids */
	SDM_MSG_REPLY,		/* up: a reply, aggregated by payload */
	SDM_MSG_ERROR,		/* up: error event; source = the ids that failed,
				 *     payload = a one-line reason */
	SDM_MSG_IOF,		/* either way: forwarded I/O, see the transport */
	SDM_MSG_CONTROL,	/* transport-internal (shutdown, ping, ...) */
	__SDM_FRAME_TYPE_LAST,
};
#define SDM_FRAME_TYPE_MAX	(__SDM_FRAME_TYPE_LAST - 1)

static inline bool sdm_frame_type_is_message(unsigned int type)
{
	return type >= SDM_MSG_INIT && type <= SDM_FRAME_TYPE_MAX;
}

struct sdm_frame_hdr {
	uint8_t type;		/* enum sdm_frame_type */
	uint32_t body_len;	/* bytes that follow the header */
};

/*
 * Stream framing: decode the header at the start of buf. Returns 0 and
 * fills *ret, -EAGAIN if len < SDM_FRAME_HDR_LEN (read more), -EBADMSG for
 * a bad magic, version or type, -EMSGSIZE for a body above the maximum.
 * The caller then needs SDM_FRAME_HDR_LEN + ret->body_len bytes in all.
 */
int sdm_frame_header_decode(const void *buf, size_t len, struct sdm_frame_hdr *ret);
/* Write a header (SDM_FRAME_HDR_LEN bytes). -EMSGSIZE, -EINVAL for a bad type. */
int sdm_frame_header_encode(void *buf, unsigned int type, size_t body_len);

/*
 * The aggregate element (sdm_aggregate): which request a
 * message belongs to and how long replies to it may take. id 0 means "not
 * aggregated". Replies and error events carry the id of their command.
 */
struct sdm_aggregate {
	uint32_t id;
	uint32_t timeout_ms;
};

struct sdm_message {
	uint8_t type;			/* enum sdm_frame_type, a message type */
	struct sdm_aggregate agg;
	struct sdm_idset *src;		/* ids the message speaks for */
	struct sdm_idset *dest;		/* ids it is addressed to */
	uint8_t *payload;		/* owned, NULL when len == 0 */
	size_t len;
};

/*
 * A new message of the given type with a copy of the payload (buf may be
 * NULL when len is 0) and empty source and destination sets. NULL on
 * ENOMEM or if len exceeds what fits in a frame.
 */
struct sdm_message *sdm_message_new(unsigned int type, const void *buf, size_t len);
/* Deep copy. NULL on ENOMEM. */
struct sdm_message *sdm_message_dup(const struct sdm_message *msg);
/* Frees the sets and the payload too. Accepts NULL. */
void sdm_message_free(struct sdm_message *msg);
/* Replace the payload with a copy of buf. 0, -ENOMEM or -EMSGSIZE. */
int sdm_message_set_payload(struct sdm_message *msg, const void *buf, size_t len);

/* Accessors. */
static inline struct sdm_idset *sdm_message_get_destination(struct sdm_message *msg)
{
	return msg->dest;
}
static inline struct sdm_idset *sdm_message_get_source(struct sdm_message *msg)
{
	return msg->src;
}
static inline struct sdm_aggregate *sdm_message_get_aggregate(struct sdm_message *msg)
{
	return &msg->agg;
}
static inline void sdm_message_get_payload(const struct sdm_message *msg,
					   const uint8_t **ret_buf, size_t *ret_len)
{
	*ret_buf = msg->payload;
	*ret_len = msg->len;
}

/*
 * Encoding. sdm_message_encoded_length() is the exact size of the whole
 * frame (header included). sdm_message_encode() writes the frame into buf
 * and returns its length, -ENOSPC if size is too small, -EMSGSIZE if the
 * frame would exceed SDM_MSG_MAX, -EINVAL for a non-message type.
 * sdm_message_encode_alloc() returns a malloc'd frame in *ret_buf, its length in *ret_len.
 */
size_t sdm_message_encoded_length(const struct sdm_message *msg);
ssize_t sdm_message_encode(const struct sdm_message *msg, void *buf, size_t size);
int sdm_message_encode_alloc(const struct sdm_message *msg, void **ret_buf, size_t *ret_len);

/*
 * Decoding. sdm_message_decode() takes one whole frame (exactly len bytes,
 * header included); sdm_message_decode_body() a body already split off by
 * sdm_frame_header_decode(). Both return 0 and a new message in *ret,
 * -EBADMSG for anything malformed (trailing bytes in the sets included),
 * -EMSGSIZE, or -ENOMEM. They never read outside [buf, buf + len).
 */
int sdm_message_decode(const void *buf, size_t len, struct sdm_message **ret);
int sdm_message_decode_body(unsigned int type, const void *body, size_t len,
			    struct sdm_message **ret);

/* Name of a frame type for logs ("reply", "error", ...; "unknown"). */
const char *sdm_frame_type_name(unsigned int type);

#endif /* SDM_MESSAGE_H */
