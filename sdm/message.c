// SPDX-License-Identifier: GPL-2.0
/*
 * SDM messages and their framed wire format (see sdm/include/sdm/message.h
 * and Documentation/sdm.md, "Wire format"). Pure data: no I/O.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sdm/message.h"

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static const char *const type_names[] = {
	[SDM_FRAME_AUTH_CHALLENGE] = "auth-challenge",
	[SDM_FRAME_AUTH_RESPONSE] = "auth-response",
	[SDM_MSG_INIT] = "init",
	[SDM_MSG_COMMAND] = "command",
	[SDM_MSG_REPLY] = "reply",
	[SDM_MSG_ERROR] = "error",
	[SDM_MSG_IOF] = "iof",
	[SDM_MSG_CONTROL] = "control",
};

const char *sdm_frame_type_name(unsigned int type)
{
	if (type > SDM_FRAME_TYPE_MAX || !type_names[type])
		return "unknown";
	return type_names[type];
}

int sdm_frame_header_decode(const void *buf, size_t len, struct sdm_frame_hdr *ret)
{
	const uint8_t *p = buf;
	uint32_t body_len;

	if (len < SDM_FRAME_HDR_LEN)
		return -EAGAIN;
	if (p[0] != SDM_FRAME_MAGIC0 || p[1] != SDM_FRAME_MAGIC1 ||
	    p[2] != SDM_WIRE_VERSION || p[3] == SDM_FRAME_UNSPEC ||
	    p[3] > SDM_FRAME_TYPE_MAX)
		return -EBADMSG;
	body_len = get_be32(p + 4);
	if (body_len > SDM_MSG_MAX - SDM_FRAME_HDR_LEN)
		return -EMSGSIZE;
	ret->type = p[3];
	ret->body_len = body_len;
	return 0;
}

int sdm_frame_header_encode(void *buf, unsigned int type, size_t body_len)
{
	uint8_t *p = buf;

	if (type == SDM_FRAME_UNSPEC || type > SDM_FRAME_TYPE_MAX)
		return -EINVAL;
	if (body_len > SDM_MSG_MAX - SDM_FRAME_HDR_LEN)
		return -EMSGSIZE;
	p[0] = SDM_FRAME_MAGIC0;
	p[1] = SDM_FRAME_MAGIC1;
	p[2] = SDM_WIRE_VERSION;
	p[3] = type;
	put_be32(p + 4, body_len);
	return 0;
}

/* A message with empty sets and no payload. */
static struct sdm_message *message_alloc(unsigned int type)
{
	struct sdm_message *msg;

	if (!sdm_frame_type_is_message(type))
		return NULL;
	msg = calloc(1, sizeof(*msg));
	if (!msg)
		return NULL;
	msg->type = type;
	msg->src = sdm_set_new();
	msg->dest = sdm_set_new();
	if (!msg->src || !msg->dest) {
		sdm_message_free(msg);
		return NULL;
	}
	return msg;
}

int sdm_message_set_payload(struct sdm_message *msg, const void *buf, size_t len)
{
	uint8_t *copy = NULL;

	if (len > SDM_MSG_MAX)
		return -EMSGSIZE;
	if (len) {
		copy = malloc(len);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, buf, len);
	}
	free(msg->payload);
	msg->payload = copy;
	msg->len = len;
	return 0;
}

struct sdm_message *sdm_message_new(unsigned int type, const void *buf, size_t len)
{
	struct sdm_message *msg = message_alloc(type);

	if (msg && sdm_message_set_payload(msg, buf, len)) {
		sdm_message_free(msg);
		return NULL;
	}
	return msg;
}

struct sdm_message *sdm_message_dup(const struct sdm_message *msg)
{
	struct sdm_message *copy = sdm_message_new(msg->type, msg->payload, msg->len);

	if (!copy)
		return NULL;
	copy->agg = msg->agg;
	if (sdm_set_assign(copy->src, msg->src) || sdm_set_assign(copy->dest, msg->dest)) {
		sdm_message_free(copy);
		return NULL;
	}
	return copy;
}

void sdm_message_free(struct sdm_message *msg)
{
	if (!msg)
		return;
	sdm_set_free(msg->src);
	sdm_set_free(msg->dest);
	free(msg->payload);
	free(msg);
}

size_t sdm_message_encoded_length(const struct sdm_message *msg)
{
	return SDM_FRAME_HDR_LEN + SDM_MSG_BODY_MIN + sdm_set_serialized_length(msg->src) +
	       sdm_set_serialized_length(msg->dest) + msg->len;
}

/* u32 length, then the set; returns the bytes written. */
static size_t put_set(uint8_t *p, const struct sdm_idset *set, size_t len)
{
	put_be32(p, len);
	sdm_set_serialize(set, p + 4, len);
	return 4 + len;
}

ssize_t sdm_message_encode(const struct sdm_message *msg, void *buf, size_t size)
{
	size_t src_len = sdm_set_serialized_length(msg->src);
	size_t dest_len = sdm_set_serialized_length(msg->dest);
	size_t total = SDM_FRAME_HDR_LEN + SDM_MSG_BODY_MIN + src_len + dest_len + msg->len;
	uint8_t *p = buf;

	if (!sdm_frame_type_is_message(msg->type))
		return -EINVAL;
	if (total > SDM_MSG_MAX)
		return -EMSGSIZE;
	if (total > size)
		return -ENOSPC;
	sdm_frame_header_encode(p, msg->type, total - SDM_FRAME_HDR_LEN);
	p += SDM_FRAME_HDR_LEN;
	put_be32(p, msg->agg.id);
	put_be32(p + 4, msg->agg.timeout_ms);
	p += 8;
	p += put_set(p, msg->src, src_len);
	p += put_set(p, msg->dest, dest_len);
	if (msg->len)
		memcpy(p, msg->payload, msg->len);
	return total;
}

int sdm_message_encode_alloc(const struct sdm_message *msg, void **ret_buf, size_t *ret_len)
{
	size_t len = sdm_message_encoded_length(msg);
	ssize_t n;
	void *buf;

	if (len > SDM_MSG_MAX)
		return -EMSGSIZE;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	n = sdm_message_encode(msg, buf, len);
	if (n < 0) {
		free(buf);
		return n;
	}
	*ret_buf = buf;
	*ret_len = n;
	return 0;
}

/* A u32-length-prefixed set that must fill its length exactly. */
static int get_set(const uint8_t **p, const uint8_t *end, struct sdm_idset *set)
{
	uint32_t len;
	ssize_t n;

	if (end - *p < 4)
		return -EBADMSG;
	len = get_be32(*p);
	*p += 4;
	if ((size_t)(end - *p) < len)
		return -EBADMSG;
	n = sdm_set_deserialize(set, *p, len);
	if (n < 0)
		return n;
	if ((size_t)n != len)
		return -EBADMSG;
	*p += len;
	return 0;
}

int sdm_message_decode_body(unsigned int type, const void *body, size_t len,
			    struct sdm_message **ret)
{
	const uint8_t *p = body, *end = p + len;
	struct sdm_message *msg;
	int err;

	if (!sdm_frame_type_is_message(type) || len < SDM_MSG_BODY_MIN)
		return -EBADMSG;
	if (len > SDM_MSG_MAX - SDM_FRAME_HDR_LEN)
		return -EMSGSIZE;
	msg = message_alloc(type);
	if (!msg)
		return -ENOMEM;
	msg->agg.id = get_be32(p);
	msg->agg.timeout_ms = get_be32(p + 4);
	p += 8;
	err = get_set(&p, end, msg->src);
	if (!err)
		err = get_set(&p, end, msg->dest);
	if (!err)
		err = sdm_message_set_payload(msg, p, end - p);
	if (err) {
		sdm_message_free(msg);
		return err;
	}
	*ret = msg;
	return 0;
}

int sdm_message_decode(const void *buf, size_t len, struct sdm_message **ret)
{
	struct sdm_frame_hdr hdr;
	int err = sdm_frame_header_decode(buf, len, &hdr);

	if (err == -EAGAIN)
		return -EBADMSG;	/* a whole frame was promised */
	if (err)
		return err;
	if (len != SDM_FRAME_HDR_LEN + (size_t)hdr.body_len)
		return -EBADMSG;
	return sdm_message_decode_body(hdr.type, (const uint8_t *)buf + SDM_FRAME_HDR_LEN,
				       hdr.body_len, ret);
}
