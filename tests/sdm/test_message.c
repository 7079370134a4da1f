// SPDX-License-Identifier: GPL-2.0
/*
 * SDM messages: frame header, encode/decode round trip, exact lengths,
 * maximum size, and malformed frames (truncated, mutated, inconsistent).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

/* A second or two of CPU each; leave room for a loaded machine. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#include "sdm/message.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state % n;
}

static struct sdm_message *sample(void)
{
	static const char text[] = "$1 = 42";
	struct sdm_message *m = sdm_message_new(SDM_MSG_REPLY, text, sizeof(text) - 1);

	if (!m)
		return NULL;
	m->agg.id = 0x01020304;
	m->agg.timeout_ms = 5000;
	sdm_set_parse(m->src, "0-3,5,7-1023", NULL);
	sdm_set_add_range(m->dest, 0, 999999);
	for (sdm_id i = 2000000; i < 2100000; i += 3)	/* a dense chunk: bitmap form */
		sdm_set_add_element(m->dest, i);
	return m;
}

static bool same_message(const struct sdm_message *a, const struct sdm_message *b)
{
	return a->type == b->type && a->agg.id == b->agg.id &&
	       a->agg.timeout_ms == b->agg.timeout_ms &&
	       sdm_set_equal(a->src, b->src) && sdm_set_equal(a->dest, b->dest) &&
	       a->len == b->len && (!a->len || !memcmp(a->payload, b->payload, a->len));
}

TEST(round_trip)
{
	struct sdm_message *m = sample(), *back = NULL, *copy;
	size_t len = sdm_message_encoded_length(m), alen;
	uint8_t *buf = malloc(len);
	void *abuf;
	struct sdm_frame_hdr hdr;

	ASSERT_NE(NULL, m);
	ASSERT_EQ((ssize_t)len, sdm_message_encode(m, buf, len));
	ASSERT_EQ(-ENOSPC, sdm_message_encode(m, buf, len - 1));
	ASSERT_EQ(0, sdm_frame_header_decode(buf, len, &hdr));
	ASSERT_EQ(SDM_MSG_REPLY, hdr.type);
	ASSERT_EQ(len - SDM_FRAME_HDR_LEN, hdr.body_len);
	ASSERT_EQ(0, sdm_message_decode(buf, len, &back));
	ASSERT_TRUE(same_message(m, back));
	sdm_message_free(back);
	ASSERT_EQ(0, sdm_message_decode_body(hdr.type, buf + SDM_FRAME_HDR_LEN,
					     hdr.body_len, &back));
	ASSERT_TRUE(same_message(m, back));
	sdm_message_free(back);

	ASSERT_EQ(0, sdm_message_encode_alloc(m, &abuf, &alen));
	ASSERT_EQ(len, alen);
	ASSERT_EQ(0, memcmp(abuf, buf, len));
	free(abuf);

	copy = sdm_message_dup(m);
	ASSERT_NE(NULL, copy);
	ASSERT_TRUE(same_message(m, copy));
	sdm_message_free(copy);

	/* An empty message is header + 16 + two one-byte sets. */
	sdm_message_free(m);
	m = sdm_message_new(SDM_MSG_COMMAND, NULL, 0);
	ASSERT_EQ(SDM_FRAME_HDR_LEN + SDM_MSG_BODY_MIN + 2, sdm_message_encoded_length(m));
	ASSERT_EQ(SDM_FRAME_HDR_LEN + SDM_MSG_BODY_MIN + 2, sdm_message_encode(m, buf, len));
	ASSERT_EQ(0, sdm_message_decode(buf, SDM_FRAME_HDR_LEN + SDM_MSG_BODY_MIN + 2, &back));
	ASSERT_TRUE(same_message(m, back));
	ASSERT_EQ(NULL, back->payload);
	sdm_message_free(back);
	sdm_message_free(m);
	free(buf);
}

TEST(frame_header)
{
	uint8_t h[SDM_FRAME_HDR_LEN];
	struct sdm_frame_hdr hdr;

	ASSERT_EQ(0, sdm_frame_header_encode(h, SDM_FRAME_AUTH_CHALLENGE, 32));
	ASSERT_EQ(-EAGAIN, sdm_frame_header_decode(h, SDM_FRAME_HDR_LEN - 1, &hdr));
	ASSERT_EQ(0, sdm_frame_header_decode(h, sizeof(h), &hdr));
	ASSERT_EQ(SDM_FRAME_AUTH_CHALLENGE, hdr.type);
	ASSERT_EQ(32, hdr.body_len);

	h[0] ^= 1;
	ASSERT_EQ(-EBADMSG, sdm_frame_header_decode(h, sizeof(h), &hdr));
	h[0] ^= 1;
	h[2] = SDM_WIRE_VERSION + 1;
	ASSERT_EQ(-EBADMSG, sdm_frame_header_decode(h, sizeof(h), &hdr));
	h[2] = SDM_WIRE_VERSION;
	h[3] = 0;
	ASSERT_EQ(-EBADMSG, sdm_frame_header_decode(h, sizeof(h), &hdr));
	h[3] = SDM_FRAME_TYPE_MAX + 1;
	ASSERT_EQ(-EBADMSG, sdm_frame_header_decode(h, sizeof(h), &hdr));
	h[3] = SDM_MSG_REPLY;
	h[4] = 0xff;	/* body of about 4 GiB */
	ASSERT_EQ(-EMSGSIZE, sdm_frame_header_decode(h, sizeof(h), &hdr));

	ASSERT_EQ(-EMSGSIZE, sdm_frame_header_encode(h, SDM_MSG_REPLY, SDM_MSG_MAX));
	ASSERT_EQ(-EINVAL, sdm_frame_header_encode(h, SDM_FRAME_TYPE_MAX + 1, 0));
	ASSERT_STREQ("reply", sdm_frame_type_name(SDM_MSG_REPLY));
	ASSERT_STREQ("unknown", sdm_frame_type_name(200));
}

TEST(maximum_size)
{
	struct sdm_message *m;
	size_t big = SDM_MSG_MAX - SDM_FRAME_HDR_LEN - SDM_MSG_BODY_MIN - 2;
	uint8_t *payload = calloc(1, big + 1), *buf;

	ASSERT_EQ(NULL, sdm_message_new(SDM_MSG_REPLY, payload, SDM_MSG_MAX + 1));
	ASSERT_EQ(NULL, sdm_message_new(SDM_FRAME_AUTH_CHALLENGE, NULL, 0));
	m = sdm_message_new(SDM_MSG_REPLY, payload, big);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(SDM_MSG_MAX, sdm_message_encoded_length(m));
	buf = malloc(SDM_MSG_MAX + 1);
	ASSERT_EQ(SDM_MSG_MAX, sdm_message_encode(m, buf, SDM_MSG_MAX + 1));
	ASSERT_EQ(0, sdm_message_set_payload(m, payload, big + 1));
	ASSERT_EQ(-EMSGSIZE, sdm_message_encode(m, buf, SDM_MSG_MAX + 1));
	m->type = SDM_FRAME_AUTH_RESPONSE;
	ASSERT_EQ(-EINVAL, sdm_message_encode(m, buf, SDM_MSG_MAX + 1));
	sdm_message_free(m);
	free(payload);
	free(buf);
}

TEST(malformed_frames)
{
	struct sdm_message *m = sample(), *back = NULL;
	size_t len = sdm_message_encoded_length(m);
	uint8_t *buf = malloc(len + 8);
	int accepted = 0, rejected = 0;

	ASSERT_EQ((ssize_t)len, sdm_message_encode(m, buf, len));
	/* Truncated, or a longer buffer than the frame says. */
	for (size_t cut = 0; cut < len; cut++) {
		ASSERT_NE(0, sdm_message_decode(buf, cut, &back)) TH_LOG("cut %zu", cut);
	}
	memset(buf + len, 0, 8);
	ASSERT_EQ(-EBADMSG, sdm_message_decode(buf, len + 8, &back));
	/* Body shorter than its fixed part. */
	ASSERT_EQ(-EBADMSG, sdm_message_decode_body(SDM_MSG_REPLY, buf + 8, 15, &back));
	ASSERT_EQ(-EBADMSG, sdm_message_decode_body(SDM_FRAME_AUTH_CHALLENGE, buf + 8,
						    len - 8, &back));
	/* Source set length one too long: the set must fill it exactly. */
	buf[8 + 8 + 3]++;
	ASSERT_EQ(-EBADMSG, sdm_message_decode(buf, len, &back));
	buf[8 + 8 + 3] -= 2;
	ASSERT_EQ(-EBADMSG, sdm_message_decode(buf, len, &back));
	buf[8 + 8 + 3]++;
	/* Set length far beyond the body. */
	buf[8 + 8] = 0x7f;
	ASSERT_EQ(-EBADMSG, sdm_message_decode(buf, len, &back));
	ASSERT_EQ((ssize_t)len, sdm_message_encode(m, buf, len));

	/* Random mutations: rejected or decoded into a re-encodable message. */
	for (int k = 0; k < 20000; k++) {
		size_t at = rnd(len);
		uint8_t old = buf[at];

		buf[at] = rnd(256);
		if (sdm_message_decode(buf, len, &back) == 0) {
			size_t l2 = sdm_message_encoded_length(back);
			uint8_t *b2 = malloc(l2);
			struct sdm_message *again = NULL;

			ASSERT_EQ((ssize_t)l2, sdm_message_encode(back, b2, l2));
			ASSERT_EQ(0, sdm_message_decode(b2, l2, &again));
			ASSERT_TRUE(same_message(back, again));
			sdm_message_free(again);
			sdm_message_free(back);
			free(b2);
			accepted++;
		} else {
			rejected++;
		}
		buf[at] = old;
	}
	TH_LOG("mutations: %d accepted, %d rejected", accepted, rejected);
	ASSERT_GT(rejected, 0);
	ASSERT_GT(accepted, 0);	/* payload bytes are opaque */
	sdm_message_free(m);
	free(buf);
}

TEST_HARNESS_MAIN
