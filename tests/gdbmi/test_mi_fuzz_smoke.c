// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz smoke for the MI parser, run in `make check`: thousands of random
 * and mutated inputs (built with ASan/UBSan, so a memory error fails the
 * test). Besides not crashing, the parser must give the same records
 * whether an input comes in one piece or in random chunks, and every
 * unmutated seed must parse.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "crdbg/gdbmi.h"
#include "mi_seeds.h"

#define NSEEDS (sizeof(mi_seeds) / sizeof(mi_seeds[0]))
#define MAXIN 4096

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static const char alphabet[] = "^*+=~@&(gdb) \"\\{}[],=0123456789abcnrtx-\n\r\001\377";

static size_t make_input(char *buf)
{
	size_t n = 0, k;

	switch (rnd() % 3) {
	case 0:	/* random bytes from MI's alphabet */
		k = rnd() % 512;
		for (n = 0; n < k; n++)
			buf[n] = alphabet[rnd() % (sizeof(alphabet) - 1)];
		return n;
	default:	/* a few seed lines, then mutations */
		for (k = 1 + rnd() % 4; k; k--) {
			const char *s = mi_seeds[rnd() % NSEEDS];
			size_t l = strlen(s);

			if (n + l + 1 > MAXIN / 2)
				break;
			memcpy(buf + n, s, l);
			n += l;
			buf[n++] = '\n';
		}
		for (k = rnd() % 8; k && n; k--) {
			size_t at = rnd() % n;

			switch (rnd() % 4) {
			case 0:
				buf[at] = alphabet[rnd() % (sizeof(alphabet) - 1)];
				break;
			case 1:
				buf[at] = rnd();
				break;
			case 2:	/* delete */
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
				break;
			case 3:	/* duplicate a span */
				if (n < MAXIN / 2) {
					size_t l = rnd() % (n - at) + 1;

					memmove(buf + at + l, buf + at, n - at);
					n += l;
				}
				break;
			}
		}
		return n;
	}
}

/* Outcome of one line, to compare between feeding strategies. */
struct outcome {
	int r;
	int kind;
	uint64_t token;
	size_t count;
};

static size_t run(const char *buf, size_t n, bool chunked, struct outcome *out, size_t max)
{
	struct mi_parser *p = mi_parser_new();
	size_t off = 0, k = 0;
	struct mi_record *rec;
	int r;

	if (!p)
		return SIZE_MAX;
	while (off < n) {
		size_t c = chunked ? 1 + rnd() % 17 : n - off;

		if (c > n - off)
			c = n - off;
		if (mi_parser_feed(p, buf + off, c))
			break;
		off += c;
		while ((r = mi_parser_next(p, &rec)) != 0) {
			struct outcome o = { .r = r };

			if (r > 0) {
				o.kind = rec->kind;
				o.token = rec->has_token ? rec->token : UINT64_MAX;
				o.count = rec->results->count;
				/* Lookups over whatever came out. */
				mi_get(rec->results, "frame.line");
				mi_get(rec->results, "stack.0.func");
				mi_get_str(rec->results, "0.1.2");
				mi_record_free(rec);
			}
			if (k < max)
				out[k] = o;
			k++;
		}
	}
	mi_parser_free(p);
	return k;
}

TEST(seeds_parse)
{
	for (size_t i = 0; i < NSEEDS; i++) {
		struct mi_record *rec;

		ASSERT_EQ(0, mi_parse_line(mi_seeds[i], strlen(mi_seeds[i]), &rec))
			TH_LOG("seed %zu: %s", i, mi_seeds[i]);
		mi_record_free(rec);
	}
}

TEST(random_and_mutated)
{
	static char buf[MAXIN];
	static struct outcome a[512], b[512];
	size_t ok = 0, bad = 0;

	for (int iter = 0; iter < 20000; iter++) {
		size_t n = make_input(buf), na, nb;
		struct mi_record *rec;

		na = run(buf, n, false, a, 512);
		nb = run(buf, n, true, b, 512);
		ASSERT_EQ(na, nb) TH_LOG("iteration %d", iter);
		for (size_t i = 0; i < na && i < 512; i++) {
			ASSERT_EQ(a[i].r, b[i].r);
			ASSERT_EQ(a[i].kind, b[i].kind);
			ASSERT_EQ(a[i].token, b[i].token);
			ASSERT_EQ(a[i].count, b[i].count);
			if (a[i].r > 0)
				ok++;
			else
				bad++;
		}
		/* The whole buffer as one line (newlines and all). */
		if (!mi_parse_line(buf, n, &rec))
			mi_record_free(rec);
	}
	/* Both paths were exercised. */
	EXPECT_GT(ok, 5000);
	EXPECT_GT(bad, 5000);
}

TEST_HARNESS_MAIN
