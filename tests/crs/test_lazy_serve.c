// SPDX-License-Identifier: GPL-2.0
/*
 * What a lazy restart's page server stands on (page-server.c): the
 * chunk-xxh128 records of a checkpoint's metadata, the pages images'
 * chunk digests written in the same pass as the file's, and the decoder
 * and lookup of CRIU's pagemap images.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "criu-pagemap.h"
#include "meta.h"
#include "xxh128.h"

static void sample(struct crs_meta *m)
{
	struct crs_proc p = { .pid = 100, .ppid = 1, .pgid = 100, .sid = 100 };

	crs_meta_init(m);
	strcpy(m->handle, "20261125T090000-100");
	m->root = 100;
	crs_meta_add_proc(m, &p);
}

TEST(chunk_records_round_trip)
{
	struct crs_chunk a = { .name = "pages-1.img", .off = 0, .len = 4194304 };
	struct crs_chunk b = { .name = "pages-1.img", .off = 4194304, .len = 8192 };
	struct crs_meta m, back;
	char *buf, err[256];
	size_t len;

	sample(&m);
	memset(a.digest, 0x5a, sizeof(a.digest));
	b.digest[15] = 0x01;
	ASSERT_EQ(0, crs_meta_add_chunk(&m, &a));
	ASSERT_EQ(0, crs_meta_add_chunk(&m, &b));
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	EXPECT_NE(NULL, strstr(buf, "\nchunk-xxh128 5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a 0 4194304 pages-1.img\n"));
	ASSERT_EQ(0, crs_meta_parse(buf, len, &back, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(2, back.nr_chunks);
	EXPECT_STREQ("pages-1.img", back.chunks[1].name);
	EXPECT_EQ(4194304, back.chunks[1].off);
	EXPECT_EQ(8192, back.chunks[1].len);
	EXPECT_EQ(0, memcmp(b.digest, back.chunks[1].digest, sizeof(b.digest)));
	crs_meta_free(&back);
	crs_meta_free(&m);
	free(buf);
}

TEST(bad_chunk_records_refused)
{
	static const char *const bad[] = {
		"chunk-xxh128 5a5a 0 4096 pages-1.img\n",				/* short digest */
		"chunk-xxh128 5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a 0 0 pages-1.img\n",	/* empty */
		"chunk-xxh128 5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a -1 4096 pages-1.img\n",
		"chunk-xxh128 5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a 9223372036854775807 4096 pages-1.img\n",
		"chunk-xxh128 5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a 0 4096 ../pages-1.img\n",
		"chunk-xxh128 5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a 0 4096\n",
	};
	struct crs_chunk c = { .name = "pages-1.img", .off = 1, .len = 0 };
	struct crs_meta m, back;
	char line[512], err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "crdbg-checkpoint 1\n%s", bad[i]);
		EXPECT_NE(0, crs_meta_parse(line, strlen(line), &back, err, sizeof(err)))
			TH_LOG("accepted: %s", bad[i]);
		EXPECT_NE(NULL, strstr(err, "line 2")) TH_LOG("%s", err);
	}
	sample(&m);
	EXPECT_EQ(-EINVAL, crs_meta_add_chunk(&m, &c));
	c.len = 1;
	c.off = UINT64_MAX;
	EXPECT_EQ(-EINVAL, crs_meta_add_chunk(&m, &c));
	crs_meta_free(&m);
}

struct got_chunks {
	size_t n;
	uint64_t off[8], len[8];
	uint8_t d[8][CRS_XXH128_LEN];
};

static int collect(void *arg, uint64_t off, uint64_t len, const uint8_t d[CRS_XXH128_LEN])
{
	struct got_chunks *g = arg;

	if (g->n == 8)
		return -E2BIG;
	g->off[g->n] = off;
	g->len[g->n] = len;
	memcpy(g->d[g->n++], d, CRS_XXH128_LEN);
	return 0;
}

/* Chunk digests and the file's in one pass: each as if hashed alone. */
TEST(chunked_digest_matches_separate_digests)
{
	char path[] = "/tmp/crdbg-chunks-XXXXXX";
	const size_t chunk = 1 << 20, len = 3 * chunk + 5000;
	uint8_t whole[CRS_XXH128_LEN], alone[CRS_XXH128_LEN], *buf = malloc(len);
	struct got_chunks g = { 0 };
	uint64_t size = 0;
	size_t i;
	int fd;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 9));
	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	ASSERT_EQ((ssize_t)len, write(fd, buf, len));
	close(fd);
	ASSERT_EQ(0, crs_xxh128_file_chunked(AT_FDCWD, path, chunk, collect, &g, whole, &size));
	EXPECT_EQ(len, size);
	ASSERT_EQ(0, crs_xxh128_file(AT_FDCWD, path, alone, &size));
	EXPECT_EQ(0, memcmp(whole, alone, sizeof(whole)));
	ASSERT_EQ(4, g.n);
	for (i = 0; i < g.n; i++) {
		EXPECT_EQ(i * chunk, g.off[i]);
		EXPECT_EQ(i < 3 ? chunk : 5000, g.len[i]);
		crs_xxh128_buf(buf + g.off[i], g.len[i], alone);
		EXPECT_EQ(0, memcmp(g.d[i], alone, sizeof(alone))) TH_LOG("chunk %zu", i);
	}
	/* a flipped byte changes its chunk's digest and no other */
	buf[2 * chunk + 7] ^= 1;
	crs_xxh128_buf(buf + 2 * chunk, chunk, alone);
	EXPECT_NE(0, memcmp(g.d[2], alone, sizeof(alone)));
	crs_xxh128_buf(buf + chunk, chunk, alone);
	EXPECT_EQ(0, memcmp(g.d[1], alone, sizeof(alone)));
	unlink(path);
	free(buf);
}

/* A protobuf varint field (wire type 0). */
static size_t put_field(uint8_t *p, unsigned int field, uint64_t v)
{
	size_t n = 0;

	p[n++] = (uint8_t)(field << 3);
	do {
		p[n] = v & 0x7f;
		v >>= 7;
		if (v)
			p[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

struct img {
	uint8_t b[4096];
	size_t len;
};

static void put_u32(struct img *im, uint32_t v)
{
	memcpy(im->b + im->len, &v, 4);
	im->len += 4;
}

static void start(struct img *im, uint32_t pages_id)
{
	uint8_t msg[16];
	size_t n;

	im->len = 0;
	put_u32(im, 0x54564319);
	put_u32(im, 0x56084025);
	n = put_field(msg, 1, pages_id);
	put_u32(im, (uint32_t)n);
	memcpy(im->b + im->len, msg, n);
	im->len += n;
}

/* flags < 0: no flags field (an old image), in_parent instead. */
static void entry(struct img *im, uint64_t vaddr, uint32_t nr, int flags, int in_parent)
{
	uint8_t msg[64];
	size_t n = 0;

	n += put_field(msg + n, 1, vaddr);
	n += put_field(msg + n, 2, nr);
	if (in_parent >= 0)
		n += put_field(msg + n, 3, (uint64_t)in_parent);
	if (flags >= 0)
		n += put_field(msg + n, 4, (uint64_t)flags);
	msg[n++] = (9 << 3) | 2;	/* an unknown length-delimited field: skipped */
	msg[n++] = 2;
	msg[n++] = 'x';
	msg[n++] = 'y';
	put_u32(im, (uint32_t)n);
	memcpy(im->b + im->len, msg, n);
	im->len += n;
}

TEST(pagemap_decoded_and_looked_up)
{
	struct crs_pagemap pm;
	struct img im;
	char err[256];

	start(&im, 7);
	entry(&im, 0x400000, 2, CRS_PE_PRESENT, -1);			/* non-lazy, file offset 0 */
	entry(&im, 0x7f0000000000, 3, CRS_PE_PRESENT | CRS_PE_LAZY, -1);	/* offset 8192 */
	entry(&im, 0x7f0000100000, 1, -1, 0);				/* old image: present, 20480 */
	entry(&im, 0x7f0000200000, 4, -1, 1);				/* old image: in parent, no bytes */
	ASSERT_EQ(0, crs_pagemap_parse(im.b, im.len, &pm, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(7, pm.pages_id);
	ASSERT_EQ(4, pm.nr);
	EXPECT_EQ(6 * 4096, pm.bytes);
	EXPECT_EQ(8192, pm.e[1].off);
	EXPECT_EQ(CRS_PE_PRESENT, pm.e[2].flags);
	EXPECT_EQ(CRS_PE_PARENT, pm.e[3].flags);
	EXPECT_EQ(&pm.e[0], crs_pagemap_find(&pm, 0x401000));
	EXPECT_EQ(NULL, crs_pagemap_find(&pm, 0x402000));	/* just past it */
	EXPECT_EQ(NULL, crs_pagemap_find(&pm, 0x3ff000));
	EXPECT_EQ(&pm.e[1], crs_pagemap_find(&pm, 0x7f0000002000));
	EXPECT_EQ(&pm.e[2], crs_pagemap_find(&pm, 0x7f0000100000));
	EXPECT_EQ(&pm.e[3], crs_pagemap_find(&pm, 0x7f0000203000));
	EXPECT_EQ(NULL, crs_pagemap_find(&pm, UINT64_MAX));
	crs_pagemap_free(&pm);
}

TEST(bad_pagemaps_refused)
{
	struct crs_pagemap pm;
	struct img im;
	char err[256];
	size_t len;

	start(&im, 1);
	entry(&im, 0x400000, 2, CRS_PE_PRESENT, -1);
	len = im.len;
	/* every truncation is refused but after the head (magics 8, length 4, head 2) */
	for (size_t cut = 0; cut < len; cut++) {
		int r = crs_pagemap_parse(im.b, cut, &pm, err, sizeof(err));

		if (r == 0)
			crs_pagemap_free(&pm);
		EXPECT_EQ(cut == 14 ? 0 : -EBADMSG, r) TH_LOG("cut %zu", cut);
	}
	im.b[0] ^= 1;		/* magic */
	EXPECT_EQ(-EBADMSG, crs_pagemap_parse(im.b, im.len, &pm, err, sizeof(err)));
	start(&im, 1);		/* overlapping entries */
	entry(&im, 0x400000, 2, CRS_PE_PRESENT, -1);
	entry(&im, 0x401000, 1, CRS_PE_PRESENT, -1);
	EXPECT_EQ(-EBADMSG, crs_pagemap_parse(im.b, im.len, &pm, err, sizeof(err)));
	start(&im, 1);		/* out of order */
	entry(&im, 0x500000, 1, CRS_PE_PRESENT, -1);
	entry(&im, 0x400000, 1, CRS_PE_PRESENT, -1);
	EXPECT_EQ(-EBADMSG, crs_pagemap_parse(im.b, im.len, &pm, err, sizeof(err)));
	start(&im, 1);		/* unaligned, and no pages */
	entry(&im, 0x400010, 1, CRS_PE_PRESENT, -1);
	EXPECT_EQ(-EBADMSG, crs_pagemap_parse(im.b, im.len, &pm, err, sizeof(err)));
	start(&im, 1);
	entry(&im, 0x400000, 0, CRS_PE_PRESENT, -1);
	EXPECT_EQ(-EBADMSG, crs_pagemap_parse(im.b, im.len, &pm, err, sizeof(err)));
	EXPECT_STREQ("malformed CRIU pagemap image", err);
}

TEST_HARNESS_MAIN
