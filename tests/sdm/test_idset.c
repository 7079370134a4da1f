// SPDX-License-Identifier: GPL-2.0
/*
 * Id sets against a plain bitmap reference under random operations, plus
 * serialization, display form and iteration.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

/* A second or two of CPU each; leave room for a loaded machine. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#include "sdm/idset.h"

/* Reference: a plain bit array over [0, REF_IDS). */
#define REF_IDS		(5u << 16)	/* 5 chunks: runs, bitmaps, crossings */

struct ref {
	uint8_t *bit;
};

static uint64_t rng_state = 0x12345678abcdefULL;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state % n;
}

static size_t ref_size(const struct ref *r)
{
	size_t n = 0;

	for (uint32_t i = 0; i < REF_IDS; i++)
		n += r->bit[i];
	return n;
}

/* Full comparison of a set with its reference, through the public API. */
static int check_same(const struct sdm_idset *s, const struct ref *r)
{
	sdm_id id, expect = 0;
	size_t n = 0;

	if (sdm_set_size(s) != ref_size(r))
		return -1;
	sdm_set_for_each(id, s) {
		while (expect < REF_IDS && !r->bit[expect])
			expect++;
		if (id != expect)
			return -2;
		expect++;
		n++;
	}
	if (n != sdm_set_size(s))
		return -3;
	for (int k = 0; k < 200; k++) {
		id = rnd(REF_IDS);
		if (sdm_set_contains(s, id) != r->bit[id])
			return -4;
	}
	return 0;
}

/* Serialize, deserialize, compare; and the same through the display form. */
static int check_round_trip(const struct sdm_idset *s)
{
	size_t len = sdm_set_serialized_length(s);
	struct sdm_idset *back = sdm_set_new();
	uint8_t *buf = malloc(len + 1);
	char *str = sdm_set_to_string(s);
	int ret = 0;

	if (!back || !buf || !str)
		ret = -100;
	else if (sdm_set_serialize(s, buf, len) != (ssize_t)len)
		ret = -101;
	else if (len && sdm_set_serialize(s, buf, len - 1) != -ENOSPC)
		ret = -102;
	else if (sdm_set_deserialize(back, buf, len) != (ssize_t)len)
		ret = -103;
	else if (!sdm_set_equal(s, back) || sdm_set_compare(s, back))
		ret = -104;
	else if (sdm_set_clear(back), sdm_set_parse(back, str, NULL))
		ret = -105;
	else if (!sdm_set_equal(s, back))
		ret = -106;
	sdm_set_free(back);
	free(buf);
	free(str);
	return ret;
}

static void random_range(uint32_t *first, uint32_t *last)
{
	uint32_t a = rnd(REF_IDS), len;

	switch (rnd(4)) {
	case 0:
		len = rnd(4);
		break;
	case 1:
		len = rnd(200);
		break;
	case 2:
		len = rnd(5000);
		break;
	default:
		len = rnd(1u << 17);	/* may span chunks */
		break;
	}
	*first = a;
	*last = a + len < REF_IDS ? a + len : REF_IDS - 1;
}

/* A random set mixing dense noise, ranges and single ids. */
static void random_set(struct sdm_idset *s, struct ref *r)
{
	uint32_t first, last;

	sdm_set_clear(s);
	memset(r->bit, 0, REF_IDS);
	for (int k = 0, n = rnd(40); k < n; k++) {
		random_range(&first, &last);
		if (rnd(3) == 0) {	/* noise: about every other id */
			for (uint32_t i = first; i <= last; i++)
				if (rnd(2)) {
					sdm_set_add_element(s, i);
					r->bit[i] = 1;
				}
		} else {
			sdm_set_add_range(s, first, last);
			memset(r->bit + first, 1, last - first + 1);
		}
	}
}

TEST(random_ops_against_bitmap)
{
	struct ref a = { calloc(REF_IDS, 1) }, b = { calloc(REF_IDS, 1) };
	struct sdm_idset *sa = sdm_set_new(), *sb = sdm_set_new();
	uint32_t first, last, id;

	ASSERT_NE(NULL, a.bit);
	ASSERT_NE(NULL, b.bit);
	ASSERT_NE(NULL, sa);
	ASSERT_NE(NULL, sb);
	random_set(sb, &b);
	for (int op = 0; op < 100000; op++) {
		switch (rnd(12)) {
		case 0 ... 3:
			id = rnd(REF_IDS);
			ASSERT_EQ(0, sdm_set_add_element(sa, id));
			a.bit[id] = 1;
			break;
		case 4 ... 6:
			id = rnd(REF_IDS);
			ASSERT_EQ(0, sdm_set_remove_element(sa, id));
			a.bit[id] = 0;
			break;
		case 7:
			random_range(&first, &last);
			ASSERT_EQ(0, sdm_set_add_range(sa, first, last));
			memset(a.bit + first, 1, last - first + 1);
			break;
		case 8:
			random_range(&first, &last);
			ASSERT_EQ(0, sdm_set_remove_range(sa, first, last));
			memset(a.bit + first, 0, last - first + 1);
			break;
		case 9: {
			int which = rnd(100);

			if (which == 0) {
				ASSERT_EQ(0, sdm_set_union(sa, sb));
				for (uint32_t i = 0; i < REF_IDS; i++)
					a.bit[i] |= b.bit[i];
			} else if (which == 1) {
				ASSERT_EQ(0, sdm_set_intersect(sa, sb));
				for (uint32_t i = 0; i < REF_IDS; i++)
					a.bit[i] &= b.bit[i];
			} else if (which == 2) {
				ASSERT_EQ(0, sdm_set_diff(sa, sb));
				for (uint32_t i = 0; i < REF_IDS; i++)
					a.bit[i] &= !b.bit[i];
			} else if (which == 3) {
				random_set(sb, &b);
			}
			break;
		}
		case 10: {
			/* Predicates against the reference. */
			bool sub = true, eq = true, inter = false;

			if (rnd(50))
				break;
			for (uint32_t i = 0; i < REF_IDS; i++) {
				sub &= !a.bit[i] || b.bit[i];
				eq &= a.bit[i] == b.bit[i];
				inter |= a.bit[i] && b.bit[i];
			}
			ASSERT_EQ(sub, sdm_set_is_subset(sa, sb));
			ASSERT_EQ(eq, sdm_set_equal(sa, sb));
			ASSERT_EQ(!eq, sdm_set_compare(sa, sb));
			ASSERT_EQ(inter, sdm_set_intersects(sa, sb));
			break;
		}
		default: {
			size_t n = 0;
			sdm_id next;
			bool found;

			random_range(&first, &last);
			for (uint32_t i = first; i <= last; i++)
				n += a.bit[i];
			ASSERT_EQ(n, sdm_set_count_range(sa, first, last));
			ASSERT_EQ(n > 0, sdm_set_intersects_range(sa, first, last));
			found = sdm_set_find_next(sa, first, &next);
			while (first < REF_IDS && !a.bit[first])
				first++;
			ASSERT_EQ(first < REF_IDS, found);
			if (found)
				ASSERT_EQ(first, next);
			break;
		}
		}
		if (op % 100 == 0) {
			ASSERT_EQ(ref_size(&a), sdm_set_size(sa))
				TH_LOG("size mismatch after op %d", op);
		}
		if (op % 2000 == 0) {
			ASSERT_EQ(0, check_same(sa, &a)) TH_LOG("op %d", op);
			ASSERT_EQ(0, check_round_trip(sa)) TH_LOG("op %d", op);
			ASSERT_EQ(0, check_same(sb, &b));
			ASSERT_EQ(0, check_round_trip(sb));
		}
	}
	ASSERT_EQ(0, check_same(sa, &a));
	sdm_set_free(sa);
	sdm_set_free(sb);
	free(a.bit);
	free(b.bit);
}

TEST(contiguous_million_is_small)
{
	struct sdm_idset *s = sdm_set_new();
	uint8_t buf[64];
	ssize_t n;

	ASSERT_EQ(0, sdm_set_add_all(s, 999999));
	ASSERT_EQ(1000000, sdm_set_size(s));
	n = sdm_set_serialize(s, buf, sizeof(buf));
	ASSERT_GT(n, 0);
	ASSERT_LE(n, 32);
	ASSERT_EQ(0, sdm_set_add_all(s, SDM_SET_MAX_ID));
	n = sdm_set_serialize(s, buf, sizeof(buf));
	ASSERT_LE(n, 10);
	/* The empty set is one byte. */
	sdm_set_clear(s);
	ASSERT_EQ(1, sdm_set_serialize(s, buf, sizeof(buf)));
	sdm_set_free(s);
}

TEST(display_form)
{
	struct sdm_idset *s = sdm_set_new();
	const char *end;
	char buf[64];

	ASSERT_EQ(0, sdm_set_add_range(s, 0, 3));
	ASSERT_EQ(0, sdm_set_add_element(s, 5));
	ASSERT_EQ(0, sdm_set_add_range(s, 7, 1023));
	ASSERT_EQ(12, sdm_set_format(s, buf, sizeof(buf)));
	ASSERT_STREQ("0-3,5,7-1023", buf);
	/* Truncation keeps whole items and reports the full length. */
	ASSERT_EQ(12, sdm_set_format(s, buf, 6));
	ASSERT_STREQ("0-3,5", buf);
	/* Ranges across chunk boundaries print as one. */
	sdm_set_clear(s);
	ASSERT_EQ(0, sdm_set_add_range(s, 65530, 131080));
	sdm_set_format(s, buf, sizeof(buf));
	ASSERT_STREQ("65530-131080", buf);

	sdm_set_clear(s);
	ASSERT_EQ(0, sdm_set_parse(s, " 7 - 9 , 1,3-4", NULL));
	sdm_set_format(s, buf, sizeof(buf));
	ASSERT_STREQ("1,3-4,7-9", buf);

	sdm_set_clear(s);
	ASSERT_EQ(0, sdm_set_parse(s, "0-3,7] print x", &end));
	ASSERT_STREQ("] print x", end);
	ASSERT_EQ(5, sdm_set_size(s));

	ASSERT_EQ(0, sdm_set_parse(s, "", NULL));
	ASSERT_EQ(-EINVAL, sdm_set_parse(s, "1,", NULL));
	ASSERT_EQ(-EINVAL, sdm_set_parse(s, "5-3", NULL));
	ASSERT_EQ(-EINVAL, sdm_set_parse(s, "1-", NULL));
	ASSERT_EQ(-EINVAL, sdm_set_parse(s, "1 x", NULL));
	ASSERT_EQ(-EINVAL, sdm_set_parse(s, "-1", NULL));
	ASSERT_EQ(-ERANGE, sdm_set_parse(s, "99999999999999999999", NULL));
	ASSERT_EQ(-ERANGE, sdm_set_parse(s, "16777216", NULL));
	ASSERT_EQ(5, sdm_set_size(s));		/* unchanged by the failures */
	sdm_set_free(s);
}

TEST(seed_iterator)
{
	struct sdm_idset *s = sdm_set_new();
	sdm_id seen[8];
	int n = 0;

	sdm_set_first(s);
	ASSERT_TRUE(sdm_set_done(s));
	sdm_set_add_element(s, 3);
	sdm_set_add_element(s, 70000);
	sdm_set_add_element(s, SDM_SET_MAX_ID);
	for (sdm_id id = sdm_set_first(s); !sdm_set_done(s); id = sdm_set_next(s))
		seen[n++] = id;
	ASSERT_EQ(3, n);
	ASSERT_EQ(3, seen[0]);
	ASSERT_EQ(70000, seen[1]);
	ASSERT_EQ(SDM_SET_MAX_ID, seen[2]);
	ASSERT_EQ(-ERANGE, sdm_set_add_element(s, SDM_SET_MAX_ID + 1));
	ASSERT_FALSE(sdm_set_contains(s, SDM_SET_MAX_ID + 1));
	sdm_set_free(s);
}

static bool set_is(const struct sdm_idset *s, const char *text)
{
	struct sdm_idset *want = sdm_set_new();
	bool eq = want && !sdm_set_parse(want, text, NULL) && sdm_set_equal(s, want);

	sdm_set_free(want);
	return eq;
}

TEST(equal_across_forms)
{
	struct sdm_idset *a = sdm_set_new(), *b = sdm_set_new(), *c;

	/*
	 * The same 1501 ids, every 4th of 0..6000 (1501 runs): a keeps the
	 * bitmap it got from denser contents (removals alone never make it a
	 * run list while more than 1024 ids remain), b is a run list.
	 */
	for (sdm_id i = 0; i < 65536; i += 2)
		sdm_set_add_element(a, i);
	ASSERT_EQ(0, sdm_set_remove_range(a, 6001, 65535));
	for (sdm_id i = 2; i < 6000; i += 4)
		sdm_set_remove_element(a, i);
	for (sdm_id i = 0; i <= 6000; i += 4)
		sdm_set_add_element(b, i);
	ASSERT_EQ(1501, sdm_set_size(a));
	ASSERT_TRUE(sdm_set_equal(a, b));
	ASSERT_TRUE(sdm_set_is_subset(a, b));
	ASSERT_TRUE(sdm_set_is_subset(b, a));
	ASSERT_TRUE(sdm_set_intersects(a, b));
	sdm_set_remove_element(b, 100);
	ASSERT_FALSE(sdm_set_equal(a, b));
	ASSERT_TRUE(sdm_set_is_subset(b, a));
	ASSERT_FALSE(sdm_set_is_subset(a, b));
	c = sdm_set_copy(a);
	ASSERT_TRUE(sdm_set_equal(a, c));
	ASSERT_EQ(0, sdm_set_diff(c, b));
	ASSERT_TRUE(set_is(c, "100"));
	ASSERT_EQ(0, sdm_set_diff(c, c));
	ASSERT_TRUE(sdm_set_is_empty(c));
	ASSERT_EQ(0, sdm_set_union(a, a));
	ASSERT_EQ(1501, sdm_set_size(a));
	ASSERT_EQ(0, sdm_set_intersect_range(a, 10, 20));
	ASSERT_TRUE(set_is(a, "12,16,20"));
	/* Removing down to few ids turns a bitmap into runs; contents stay. */
	sdm_set_clear(a);
	for (sdm_id i = 0; i < 65536; i += 2)
		sdm_set_add_element(a, i);
	ASSERT_EQ(0, sdm_set_remove_range(a, 2000, 65535));
	ASSERT_EQ(1000, sdm_set_size(a));
	ASSERT_EQ(1000, sdm_set_count_range(a, 0, 1999));
	sdm_set_free(a);
	sdm_set_free(b);
	sdm_set_free(c);
}

/* Decode bytes; on success the result must re-encode and decode the same. */
static int decode_check(const uint8_t *buf, size_t len)
{
	struct sdm_idset *s = sdm_set_new(), *t = sdm_set_new();
	ssize_t n = sdm_set_deserialize(s, buf, len);
	int ret = n < 0 ? (int)n : 0;

	if (n >= 0) {
		size_t l2 = sdm_set_serialized_length(s);
		uint8_t *b2 = malloc(l2);

		if ((size_t)n > len || sdm_set_serialize(s, b2, l2) != (ssize_t)l2 ||
		    sdm_set_deserialize(t, b2, l2) != (ssize_t)l2 || !sdm_set_equal(s, t))
			ret = 1;	/* not a decode error: a real failure */
		free(b2);
	}
	sdm_set_free(s);
	sdm_set_free(t);
	return ret;
}

TEST(malformed_inputs)
{
	static const struct {
		const char *why;
		uint8_t bytes[16];
		size_t len;
	} bad[] = {
		{ "empty input", { 0 }, 0 },
		{ "no end record", { 0x00, 0x05 }, 2 },
		{ "truncated varint", { 0x80 }, 1 },
		{ "overlong varint", { 0x82, 0x00 }, 2 },
		{ "varint above 32 bits", { 0xff, 0xff, 0xff, 0xff, 0x7f }, 5 },
		{ "six-byte varint", { 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 }, 6 },
		{ "reserved kind 3", { 0x03 }, 1 },
		{ "end with a gap", { 0x06 }, 1 },
		{ "run past the max id", { 0x00, 0xff, 0xff, 0xff, 0x08, 0x02 }, 6 },
		{ "gap past the max id", { 0x80, 0x80, 0x80, 0x20, 0x00, 0x02 }, 6 },
		{ "misaligned bitmap", { 0x05, 0x00, 1, 0, 0, 0, 0, 0, 0, 0, 0x02 }, 11 },
		{ "bitmap crossing its chunk", { 0x81, 0xff, 0x0f, 0x01 }, 4 },
		{ "truncated bitmap words", { 0x01, 0x00, 1, 2, 3 }, 5 },
	};
	uint8_t buf[64];

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EBADMSG, decode_check(bad[i].bytes, bad[i].len))
			TH_LOG("accepted: %s", bad[i].why);
	}

	/* A valid bitmap record at the top of a chunk is fine. */
	memset(buf, 0, sizeof(buf));
	buf[0] = 0x01;	/* bitmap at 0 */
	buf[1] = 0x00;	/* one word */
	buf[2] = 0x0f;
	buf[10] = 0x02;
	ASSERT_EQ(0, decode_check(buf, 11));
	ASSERT_EQ(-EBADMSG, decode_check(buf, 10));	/* no end */
}

TEST(truncation_and_mutation)
{
	struct ref r = { calloc(REF_IDS, 1) };
	struct sdm_idset *s = sdm_set_new();
	int accepted = 0, rejected = 0;

	for (int round = 0; round < 20; round++) {
		size_t len;
		uint8_t *buf;

		random_set(s, &r);
		len = sdm_set_serialized_length(s);
		buf = malloc(len);
		ASSERT_EQ((ssize_t)len, sdm_set_serialize(s, buf, len));
		/* Every strict prefix is malformed (the end record is last). */
		for (size_t cut = 0; cut < len; cut += 1 + len / 500) {
			ASSERT_EQ(-EBADMSG, decode_check(buf, cut))
				TH_LOG("cut %zu/%zu", cut, len);
		}
		/* Bit flips: decoded or rejected, never a crash or a bad set. */
		for (int k = 0; k < 300; k++) {
			size_t at = rnd(len);
			uint8_t bit = 1u << rnd(8);
			int ret;

			buf[at] ^= bit;
			ret = decode_check(buf, len);
			ASSERT_NE(1, ret);
			ret ? rejected++ : accepted++;
			buf[at] ^= bit;
		}
		free(buf);
	}
	TH_LOG("mutations: %d accepted, %d rejected", accepted, rejected);
	ASSERT_GT(rejected, 0);
	sdm_set_free(s);
	free(r.bit);
}

TEST_HARNESS_MAIN
