// SPDX-License-Identifier: GPL-2.0
/*
 * A lazy restart's page server (page-server.c) and what it stands on:
 * the chunk-xxh128 records of a checkpoint's metadata, the pages images'
 * chunk digests written in the same pass as the file's, the decoder and
 * lookup of CRIU's pagemap images, and the server itself answering
 * lazy-pages' requests on its socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "criu-pagemap.h"
#include "meta.h"
#include "sealed-text.h"
#include "page-server.h"
#include "store.h"
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
		char text[640];
		size_t len;

		snprintf(line, sizeof(line), "crdbg-checkpoint 1\n%s", bad[i]);
		len = seal_text(line, text, sizeof(text));
		ASSERT_NE(0, len);
		EXPECT_NE(0, crs_meta_parse(text, len, &back, err, sizeof(err)))
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

/* CRIU's page-server request and answer (page-server.c). */
struct iov {
	uint32_t cmd, nr_pages;
	uint64_t vaddr, dst_id;
};

#define SERVED_AT	0x10000000ull
#define SERVED_CHUNKS	(CRS_PS_SLOTS + 1)
#define SERVED_BYTES	(SERVED_CHUNKS * (uint64_t)CRS_PAGE_CHUNK_BYTES + 2 * 4096)

static uint8_t page_byte(uint64_t off)
{
	return (uint8_t)(off * 7 + (off >> 12));
}

/* A checkpoint of pid 100 in dir: one lazy entry over all of pages-1.img. */
/* The served image and its records into dir and m: 0, or -1 if a write failed. */
static int write_served(const char *dir, struct crs_meta *m)
{
	struct crs_file f = { .name = "pages-1.img", .size = SERVED_BYTES };
	struct crs_file pmf = { .name = "pagemap-100.img" };
	char path[256];
	uint8_t *buf = malloc(CRS_PAGE_CHUNK_BYTES);
	struct img im;
	uint64_t off, i;
	int fd, rc = 0;

	crs_meta_init(m);
	strcpy(m->handle, "20261125T120000-100");
	start(&im, 1);
	entry(&im, SERVED_AT, SERVED_BYTES / 4096, CRS_PE_PRESENT | CRS_PE_LAZY, -1);
	snprintf(path, sizeof(path), "%s/pagemap-100.img", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, im.b, im.len) != (ssize_t)im.len)
		rc = -1;
	if (fd >= 0)
		close(fd);
	pmf.size = im.len;
	crs_meta_add_file(m, &pmf);
	crs_meta_add_file(m, &f);
	snprintf(path, sizeof(path), "%s/pages-1.img", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (off = 0; off < SERVED_BYTES; off += CRS_PAGE_CHUNK_BYTES) {
		struct crs_chunk c = { .name = "pages-1.img", .off = off };

		c.len = SERVED_BYTES - off < CRS_PAGE_CHUNK_BYTES ? SERVED_BYTES - off
								 : CRS_PAGE_CHUNK_BYTES;
		for (i = 0; i < c.len; i++)
			buf[i] = page_byte(off + i);
		if (write(fd, buf, c.len) != (ssize_t)c.len)
			rc = -1;
		crs_xxh128_buf(buf, c.len, c.digest);
		crs_meta_add_chunk(m, &c);
	}
	close(fd);
	free(buf);
	return rc;
}

/* Ask for nr pages at vaddr; the pages answered, -1 if the server hung up. */
static int ask(int sk, uint64_t vaddr, uint32_t nr, uint8_t *pages)
{
	struct iov q = { .cmd = 7, .nr_pages = nr, .vaddr = vaddr, .dst_id = 100 };

	if (send(sk, &q, sizeof(q), MSG_NOSIGNAL) != sizeof(q) ||
	    recv(sk, &q, sizeof(q), MSG_WAITALL) != sizeof(q) || q.cmd != (6 | 4 << 16) ||
	    q.vaddr != vaddr || q.nr_pages > nr)
		return -1;
	if (recv(sk, pages, q.nr_pages * 4096, MSG_WAITALL) != (ssize_t)q.nr_pages * 4096)
		return -1;
	return (int)q.nr_pages;
}

static int as_saved(const uint8_t *pages, uint64_t vaddr, int nr)
{
	uint64_t i, off = vaddr - SERVED_AT;

	for (i = 0; i < (uint64_t)nr * 4096; i++)
		if (pages[i] != page_byte(off + i))
			return 0;
	return 1;
}

/*
 * Pages come from a checked read of their chunk, an answer ends at its
 * chunk's end, and a chunk that has left the slots is checked again: a
 * byte changed on disk after the first check is caught, not served.
 */
TEST(page_server_serves_only_checked_reads)
{
	char dir[] = "/tmp/crdbg-serve-XXXXXX", path[256], err[512];
	const uint64_t chunk = CRS_PAGE_CHUNK_BYTES;
	uint8_t *pages = malloc(64 * 4096), flip;
	struct crs_page_server ps;
	struct crs_meta m;
	uint64_t c;
	int sk, fd;

	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, write_served(dir, &m));
	ASSERT_EQ(0, crs_page_server_start(&ps, dir, &m, err, sizeof(err))) TH_LOG("%s", err);
	sk = crs_page_server_peer(&ps);
	ASSERT_EQ(0, crs_page_server_wait_eager(&ps, err, sizeof(err))) TH_LOG("%s", err);

	ASSERT_EQ(4, ask(sk, SERVED_AT, 4, pages));
	EXPECT_TRUE(as_saved(pages, SERVED_AT, 4));
	/* across the end of chunk 0: only its last two pages */
	ASSERT_EQ(2, ask(sk, SERVED_AT + chunk - 8192, 8, pages));
	EXPECT_TRUE(as_saved(pages, SERVED_AT + chunk - 8192, 2));
	ASSERT_EQ(6, ask(sk, SERVED_AT + chunk, 6, pages));
	EXPECT_TRUE(as_saved(pages, SERVED_AT + chunk, 6));

	/* chunk 0 changes on disk: its checked read in a slot still serves */
	snprintf(path, sizeof(path), "%s/pages-1.img", dir);
	fd = open(path, O_RDWR);
	ASSERT_EQ(1, pread(fd, &flip, 1, 4 * 4096 + 5));
	flip ^= 0x40;
	ASSERT_EQ(1, pwrite(fd, &flip, 1, 4 * 4096 + 5));
	close(fd);
	ASSERT_EQ(1, ask(sk, SERVED_AT + 4 * 4096, 1, pages));
	EXPECT_TRUE(as_saved(pages, SERVED_AT + 4 * 4096, 1));
	/* every other chunk once: chunk 0 leaves the slots */
	for (c = 1; c < SERVED_CHUNKS; c++) {
		ASSERT_EQ(1, ask(sk, SERVED_AT + c * chunk, 1, pages)) TH_LOG("chunk %lu", (unsigned long)c);
		EXPECT_TRUE(as_saved(pages, SERVED_AT + c * chunk, 1));
	}
	EXPECT_EQ(2, ask(sk, SERVED_AT + SERVED_CHUNKS * chunk, 64, pages));	/* the short last chunk */
	EXPECT_EQ(0, crs_page_server_failed(&ps, err, sizeof(err)));
	/* read again, checked again: refused, nothing sent */
	EXPECT_EQ(-1, ask(sk, SERVED_AT + 4 * 4096, 1, pages));
	ASSERT_EQ(-EBADMSG, crs_page_server_failed(&ps, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "checksum of pages-1.img does not match in bytes 0-4194304")) TH_LOG("%s", err);

	crs_page_server_stop(&ps);
	crs_meta_free(&m);
	free(pages);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	EXPECT_EQ(0, system(path));
}

TEST_HARNESS_MAIN
