// SPDX-License-Identifier: GPL-2.0
/*
 * Authenticated frames (sdm/include/sdm/link.h) without a network: the
 * two ends of a link accept each other's frames in order; a frame with
 * any byte changed, replayed, reordered, after a dropped one, reflected
 * back to its sender, sealed on another link or with another secret is
 * refused; the tags match HKDF and HMAC computed by Python's hmac module.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "sdm/link.h"

/* A CONTROL frame with body "abc". */
static const uint8_t abc[] = { 0x53, 0x44, SDM_WIRE_VERSION, SDM_MSG_CONTROL,
			       0, 0, 0, 3, 'a', 'b', 'c' };

FIXTURE(link) {
	struct sdm_auth_secret secret;
	uint8_t na[SDM_AUTH_NONCE_LEN], nc[SDM_AUTH_NONCE_LEN];
	struct sdm_link acc, con;	/* the acceptor's and the connector's ends */
	uint8_t wire[4][sizeof(abc) + SDM_LINK_TAG_LEN];
};

FIXTURE_SETUP(link)
{
	for (int i = 0; i < SDM_AUTH_SECRET_LEN; i++)
		self->secret.key[i] = (uint8_t)i;
	for (int i = 0; i < SDM_AUTH_NONCE_LEN; i++) {
		self->na[i] = (uint8_t)(0x40 + i);
		self->nc[i] = (uint8_t)(0x60 + i);
	}
	ASSERT_EQ(0, sdm_link_init(&self->acc, &self->secret, SDM_AUTH_ACCEPTOR,
				   self->na, self->nc));
	ASSERT_EQ(0, sdm_link_init(&self->con, &self->secret, SDM_AUTH_CONNECTOR,
				   self->nc, self->na));
	/* Four frames from the connector, each followed by its tag. */
	for (int i = 0; i < 4; i++) {
		memcpy(self->wire[i], abc, sizeof(abc));
		ASSERT_EQ(0, sdm_link_seal(&self->con, abc, sizeof(abc),
					   self->wire[i] + sizeof(abc)));
	}
}

FIXTURE_TEARDOWN(link)
{
	sdm_link_free(&self->acc);
	sdm_link_free(&self->con);
}

static int open_one(struct sdm_link *l, const uint8_t *buf, size_t len)
{
	struct sdm_frame_hdr h;
	size_t n = 0;
	int rc = sdm_link_open(l, buf, len, 0, &h, &n);

	if (rc == 0 && (n != sizeof(abc) || h.type != SDM_MSG_CONTROL || h.body_len != 3))
		return -EPROTO;
	return rc;
}

TEST_F(link, frames_in_order_pass)
{
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(0, open_one(&self->acc, self->wire[i], sizeof(self->wire[i])));
	EXPECT_EQ(4, sdm_link_rx_seq(&self->acc));
}

/* Not yet whole, header, body or tag: wait for more bytes. */
TEST_F(link, partial_frame_waits)
{
	for (size_t len = 0; len < sizeof(self->wire[0]); len++)
		EXPECT_EQ(-EAGAIN, open_one(&self->acc, self->wire[0], len));
	EXPECT_EQ(0, open_one(&self->acc, self->wire[0], sizeof(self->wire[0])));
}

/* Every bit of the header, the body and the tag is covered. */
TEST_F(link, any_altered_bit_is_refused)
{
	uint8_t f[sizeof(self->wire[0])];

	for (size_t i = 0; i < sizeof(f); i++) {
		for (int bit = 0; bit < 8; bit++) {
			int rc;

			memcpy(f, self->wire[0], sizeof(f));
			f[i] ^= 1 << bit;
			rc = open_one(&self->acc, f, sizeof(f));
			/* A header change may also make it malformed or longer. */
			EXPECT_TRUE(rc == -EKEYREJECTED || rc == -EBADMSG ||
				    rc == -EAGAIN || rc == -EMSGSIZE)
				TH_LOG("byte %zu bit %d: %d", i, bit, rc);
		}
	}
	/* Refusals do not count: the untouched frame is still frame 0. */
	EXPECT_EQ(0, sdm_link_rx_seq(&self->acc));
	EXPECT_EQ(0, open_one(&self->acc, self->wire[0], sizeof(self->wire[0])));
}

TEST_F(link, replayed_frame_is_refused)
{
	ASSERT_EQ(0, open_one(&self->acc, self->wire[0], sizeof(self->wire[0])));
	EXPECT_EQ(-EKEYREJECTED, open_one(&self->acc, self->wire[0], sizeof(self->wire[0])));
}

TEST_F(link, reordered_or_dropped_frame_is_refused)
{
	EXPECT_EQ(-EKEYREJECTED, open_one(&self->acc, self->wire[1], sizeof(self->wire[1])));
	ASSERT_EQ(0, open_one(&self->acc, self->wire[0], sizeof(self->wire[0])));
	/* frame 2 after frame 0: frame 1 was dropped */
	EXPECT_EQ(-EKEYREJECTED, open_one(&self->acc, self->wire[2], sizeof(self->wire[2])));
}

/* A frame sent back to its sender fails: each direction has its own key. */
TEST_F(link, reflected_frame_is_refused)
{
	EXPECT_EQ(-EKEYREJECTED, open_one(&self->con, self->wire[0], sizeof(self->wire[0])));
}

/* Other nonces (another connection) or another secret: other keys. */
TEST_F(link, frame_of_another_link_is_refused)
{
	struct sdm_auth_secret other = self->secret;
	struct sdm_link l;

	self->nc[0] ^= 1;
	ASSERT_EQ(0, sdm_link_init(&l, &self->secret, SDM_AUTH_ACCEPTOR, self->na, self->nc));
	EXPECT_EQ(-EKEYREJECTED, open_one(&l, self->wire[0], sizeof(self->wire[0])));
	sdm_link_free(&l);
	self->nc[0] ^= 1;
	other.key[5] ^= 0x80;
	ASSERT_EQ(0, sdm_link_init(&l, &other, SDM_AUTH_ACCEPTOR, self->na, self->nc));
	EXPECT_EQ(-EKEYREJECTED, open_one(&l, self->wire[0], sizeof(self->wire[0])));
	sdm_link_free(&l);
}

TEST_F(link, frame_above_the_limit_is_refused_before_its_body)
{
	EXPECT_EQ(-EMSGSIZE, sdm_link_open(&self->acc, self->wire[0], SDM_FRAME_HDR_LEN,
					   sizeof(abc) - 1, &(struct sdm_frame_hdr){ 0 },
					   &(size_t){ 0 }));
}

/*
 * HKDF-SHA-256 (salt = acceptor's nonce || connector's nonce, info =
 * "crdbg-sdm-frame-v1" || direction) and HMAC-SHA-256 over seq || frame,
 * as computed by Python's hmac module: secret 00..1f, acceptor's nonce
 * 40..5f, connector's 60..7f, the frame abc above.
 */
TEST_F(link, known_answer)
{
	static const uint8_t to_acceptor[2][SDM_LINK_TAG_LEN] = { {
		0x1d, 0x61, 0x89, 0x80, 0x4f, 0x71, 0xe0, 0x66, 0x20, 0x99, 0xd0, 0x95,
		0x79, 0x0a, 0xa0, 0x30, 0xf2, 0xca, 0xd3, 0xf7, 0xd4, 0x20, 0x4e, 0x18,
		0xa3, 0xf6, 0xa5, 0xf8, 0xc5, 0x20, 0xb2, 0xc1,
	}, {
		0x48, 0x94, 0x9d, 0x9d, 0x2b, 0x48, 0x73, 0xaf, 0xad, 0x13, 0xa4, 0x2c,
		0xac, 0xd1, 0xf1, 0xdd, 0xdb, 0xe6, 0x42, 0x78, 0x58, 0x46, 0xe9, 0x40,
		0xc8, 0xf5, 0xbd, 0x7c, 0x4c, 0x04, 0x5a, 0xa9,
	} };
	static const uint8_t to_connector[2][SDM_LINK_TAG_LEN] = { {
		0x3a, 0xa4, 0x87, 0x1d, 0x4c, 0xfe, 0x60, 0x2b, 0x7d, 0xa8, 0x92, 0x9a,
		0x4f, 0x56, 0xf3, 0xa0, 0x39, 0x0b, 0xec, 0xdc, 0x00, 0xec, 0x65, 0x23,
		0x65, 0xf4, 0xd4, 0x82, 0x3d, 0xaa, 0xbe, 0x8e,
	}, {
		0x70, 0x88, 0x36, 0x91, 0x61, 0x33, 0x0f, 0xa5, 0xff, 0x28, 0x9d, 0xa6,
		0xd6, 0x33, 0x8a, 0xaf, 0x8c, 0x5e, 0x8f, 0xf7, 0xa1, 0x64, 0x08, 0xe8,
		0xe9, 0x06, 0x0d, 0x67, 0x92, 0xd6, 0x4f, 0x98,
	} };
	uint8_t tag[SDM_LINK_TAG_LEN];

	EXPECT_EQ(0, memcmp(self->wire[0] + sizeof(abc), to_acceptor[0], SDM_LINK_TAG_LEN));
	EXPECT_EQ(0, memcmp(self->wire[1] + sizeof(abc), to_acceptor[1], SDM_LINK_TAG_LEN));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, sdm_link_seal(&self->acc, abc, sizeof(abc), tag));
		EXPECT_EQ(0, memcmp(tag, to_connector[i], SDM_LINK_TAG_LEN));
	}
}

TEST_HARNESS_MAIN
