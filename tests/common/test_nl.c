// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg/nl.h on the host: a reply decodes only when every attribute
 * lies inside its message with the type the family gives it, an
 * extended ack's text is found whether or not the request comes back
 * with it, and a million mutated datagrams either decode sanely or are
 * refused. The socket half is tried against the host's kernel, which
 * has no crdbg family (the guest's kmod group runs it against crdbg.ko).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <crdbg/nl.h>

#include "kselftest_harness.h"

/* A crdbg message (an event or a reply) built as the kernel would, by libnl. */
static size_t build_event(char *buf, size_t size, uint32_t pid)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nlmsghdr *h;

	if (!msg || !genlmsg_put(msg, 0, 0, 0x20, 0, 0, CRDBG_CMD_EVENT, CRDBG_GENL_VERSION) ||
	    nla_put_u32(msg, CRDBG_A_EVENT, CRDBG_EVENT_FROZEN) ||
	    nla_put_u32(msg, CRDBG_A_PID, pid) || nla_put_string(msg, CRDBG_A_VERSION, "0.1.0"))
		abort();
	h = nlmsg_hdr(msg);
	if (h->nlmsg_len > size)
		abort();
	memcpy(buf, h, h->nlmsg_len);
	size = h->nlmsg_len;
	nlmsg_free(msg);
	return size;
}

static struct nlattr *first_attr(char *msg)
{
	return (struct nlattr *)(msg + NLMSG_HDRLEN + GENL_HDRLEN);
}

TEST(a_reply_decodes_with_its_types)
{
	struct nlattr *tb[CRDBG_A_MAX + 1];
	char msg[256];
	size_t len = build_event(msg, sizeof(msg), 77);

	ASSERT_EQ(0, crdbg_nl_parse_message((struct nlmsghdr *)msg, len, tb));
	ASSERT_NE(NULL, tb[CRDBG_A_EVENT]);
	EXPECT_EQ(CRDBG_EVENT_FROZEN, nla_get_u32(tb[CRDBG_A_EVENT]));
	EXPECT_EQ(77, nla_get_u32(tb[CRDBG_A_PID]));
	EXPECT_STREQ("0.1.0", nla_get_string(tb[CRDBG_A_VERSION]));
}

TEST(malformed_replies_are_refused)
{
	struct nlattr *tb[CRDBG_A_MAX + 1];
	char msg[256];
	size_t len = build_event(msg, sizeof(msg), 77);
	struct nlmsghdr *h = (struct nlmsghdr *)msg;
	struct nlattr *a = first_attr(msg);

	/* the message claims more than arrived */
	EXPECT_EQ(-EPROTO, crdbg_nl_parse_message(h, len - 1, tb));
	/* shorter than its generic netlink header */
	h->nlmsg_len = NLMSG_HDRLEN + 2;
	EXPECT_EQ(-EPROTO, crdbg_nl_parse_message(h, len, tb));
	h->nlmsg_len = (uint32_t)len;
	/* an attribute shorter than its own header */
	a->nla_len = 3;
	EXPECT_EQ(-EPROTO, crdbg_nl_parse_message(h, len, tb));
	/* an attribute past the message's end */
	a->nla_len = 200;
	EXPECT_EQ(-EPROTO, crdbg_nl_parse_message(h, len, tb));
	/* a u32 of two bytes */
	a->nla_len = NLA_HDRLEN + 2;
	EXPECT_EQ(-EPROTO, crdbg_nl_parse_message(h, len, tb));
	a->nla_len = NLA_HDRLEN + 4;
	ASSERT_EQ(0, crdbg_nl_parse_message(h, len, tb));
	/* a string without its NUL: the version is the last attribute */
	memcpy(msg + len - 4, "abcd", 4);
	EXPECT_EQ(-EPROTO, crdbg_nl_parse_message(h, len, tb));
	/* an unknown type is skipped, not refused */
	len = build_event(msg, sizeof(msg), 77);
	a->nla_type = CRDBG_A_MAX + 7;
	ASSERT_EQ(0, crdbg_nl_parse_message(h, len, tb));
	EXPECT_EQ(NULL, tb[CRDBG_A_EVENT]);
	EXPECT_NE(NULL, tb[CRDBG_A_PID]);
}

/* An NLMSG_ERROR carrying msg as NLMSGERR_ATTR_MSG; capped or with the request. */
static size_t build_ack(char *buf, int error, bool capped, const char *msg, size_t text_len)
{
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct nlmsgerr *e = NLMSG_DATA(h);
	size_t at = NLMSG_HDRLEN + sizeof(*e), echoed = capped ? 0 : 12;
	struct nlattr *a;

	memset(buf, 0, 512);
	h->nlmsg_type = NLMSG_ERROR;
	h->nlmsg_flags = NLM_F_ACK_TLVS | (capped ? NLM_F_CAPPED : 0);
	e->error = error;
	e->msg.nlmsg_len = (uint32_t)(sizeof(e->msg) + echoed);
	at += echoed;
	a = (struct nlattr *)(buf + at);
	a->nla_type = NLMSGERR_ATTR_MSG;
	a->nla_len = (uint16_t)(NLA_HDRLEN + text_len);
	memcpy(a + 1, msg, text_len);
	h->nlmsg_len = (uint32_t)(at + NLA_ALIGN(a->nla_len));
	return h->nlmsg_len;
}

TEST(extack_text_is_found_and_bounded)
{
	static const char text[] = "pid 5 is not yours";
	char buf[512];
	size_t len;

	len = build_ack(buf, -EPERM, true, text, sizeof(text));
	EXPECT_STREQ(text, crdbg_nl_extack_text((struct nlmsghdr *)buf, len));
	len = build_ack(buf, -EPERM, false, text, sizeof(text));
	EXPECT_STREQ(text, crdbg_nl_extack_text((struct nlmsghdr *)buf, len));
	/* the text cut before its NUL */
	len = build_ack(buf, -EPERM, true, text, 8);
	EXPECT_EQ(NULL, crdbg_nl_extack_text((struct nlmsghdr *)buf, len));
	/* an echoed request longer than the message */
	len = build_ack(buf, -EPERM, false, text, sizeof(text));
	((struct nlmsgerr *)NLMSG_DATA((struct nlmsghdr *)buf))->msg.nlmsg_len = 4000;
	EXPECT_EQ(NULL, crdbg_nl_extack_text((struct nlmsghdr *)buf, len));
	/* no TLVs */
	len = build_ack(buf, -EPERM, true, text, sizeof(text));
	((struct nlmsghdr *)buf)->nlmsg_flags = NLM_F_CAPPED;
	EXPECT_EQ(NULL, crdbg_nl_extack_text((struct nlmsghdr *)buf, len));
}

static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Whatever a decoder accepted lies inside buf[0..len) and has its type. */
static void check_decoded(struct __test_metadata *_metadata, const char *buf, size_t len,
			  struct nlattr *const *tb)
{
	for (int t = 0; t <= CRDBG_A_MAX; t++) {
		const char *p = (const char *)tb[t];

		if (!p)
			continue;
		ASSERT_TRUE(p >= buf && p + tb[t]->nla_len <= buf + len);
		if (t == CRDBG_A_PID || t == CRDBG_A_EVENT || t == CRDBG_A_TID)
			ASSERT_LE(4, nla_len(tb[t]));
		if (t == CRDBG_A_VERSION)
			ASSERT_NE(NULL, memchr(nla_data(tb[t]), 0, nla_len(tb[t])));
	}
}

TEST(mutated_datagrams_decode_sanely_or_not_at_all)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	size_t accepted = 0, texts = 0;
	char good[256], ack[512];
	size_t good_len = build_event(good, sizeof(good), 4242);
	size_t ack_len = build_ack(ack, -EINVAL, false, "bad pid", 8);

	for (int round = 0; round < 1000000; round++) {
		bool is_ack = round & 1;
		size_t len = is_ack ? ack_len : good_len;
		struct nlattr *tb[CRDBG_A_MAX + 1];
		/* a heap copy of the exact length: ASan sees any read past it */
		char *buf = malloc(len);
		const char *text;

		memcpy(buf, is_ack ? ack : good, len);
		for (int k = (int)(next_random(&seed) % 4) + 1; k > 0; k--)
			buf[next_random(&seed) % len] = (char)next_random(&seed);
		if (next_random(&seed) % 8 == 0)
			len -= next_random(&seed) % len;
		if (is_ack) {
			text = len >= NLMSG_HDRLEN ? crdbg_nl_extack_text((struct nlmsghdr *)buf, len) : NULL;
			if (text) {
				texts++;
				ASSERT_TRUE(text >= buf && text < buf + len);
				ASSERT_NE(NULL, memchr(text, 0, (size_t)(buf + len - text)));
			}
		} else if (len >= NLMSG_HDRLEN &&
			   !crdbg_nl_parse_message((struct nlmsghdr *)buf, len, tb)) {
			accepted++;
			check_decoded(_metadata, buf, len, tb);
		}
		free(buf);
	}
	/* the mutations left some intact: the decoders were not refusing everything */
	EXPECT_LT(1000, accepted);
	EXPECT_LT(1000, texts);
}

TEST(a_kernel_without_the_family_says_so)
{
	struct crdbg_nl nl;
	char err[256];
	int r;

	if (access("/sys/module/crdbg", F_OK) == 0)
		SKIP(return, "crdbg.ko is loaded here: the guest's kmod group tries the family");
	r = crdbg_nl_open(&nl, err, sizeof(err));
	if (r == -ENOTCONN)
		SKIP(return, "no generic netlink here: %s", err);
	EXPECT_EQ(-ENOENT, r);
	EXPECT_NE(NULL, strstr(err, "crdbg.ko is not loaded")) TH_LOG("%s", err);
	EXPECT_EQ(NULL, nl.sk);
	crdbg_nl_close(&nl);	/* a closed handle may be closed again */
}

TEST_HARNESS_MAIN
