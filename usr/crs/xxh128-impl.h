/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The body of one XXH3-128 file digest, compiled once per vector unit
 * (xxh128-scalar.c, xxh128-avx2.c: each sets XXH_VECTOR first) from
 * xxHash's inline header. Every unit gives the same digest; only the speed
 * differs (see xxh128.c for which runs). Include from those files only.
 */
#ifndef CRDBG_CRS_XXH128_IMPL_H
#define CRDBG_CRS_XXH128_IMPL_H

#include <errno.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "file-chunks.h"
#include "xxh128.h"

_Static_assert(sizeof(XXH128_canonical_t) == CRS_XXH128_LEN, "XXH128 is 16 bytes");

static int xxh128_feed(void *st, const void *buf, size_t len)
{
	return XXH3_128bits_update(st, buf, len) == XXH_OK ? 0 : -EIO;
}

static int xxh128_file(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
		       uint64_t *ret_size)
{
	XXH3_state_t *st = XXH3_createState();
	XXH128_canonical_t c;
	int err;

	if (!st || XXH3_128bits_reset(st) != XXH_OK)
		err = -ENOMEM;
	else
		err = crs_file_chunks(dirfd, name, xxh128_feed, st, ret_size);
	if (!err) {
		XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
		memcpy(out, c.digest, CRS_XXH128_LEN);
	}
	XXH3_freeState(st);
	return err;
}

static void xxh128_buf(const void *buf, size_t len, uint8_t out[CRS_XXH128_LEN])
{
	XXH128_canonical_t c;

	XXH128_canonicalFromHash(&c, XXH3_128bits(buf, len));
	memcpy(out, c.digest, CRS_XXH128_LEN);
}

/* The whole file and its current chunk, fed the same bytes. */
struct xxh128_chunked {
	XXH3_state_t *file, *chunk;
	uint64_t size, off, at;		/* chunk size, the chunk's offset, bytes in it */
	crs_xxh128_chunk_fn cb;
	void *arg;
};

static int xxh128_chunk_end(struct xxh128_chunked *c)
{
	XXH128_canonical_t d;
	int err;

	XXH128_canonicalFromHash(&d, XXH3_128bits_digest(c->chunk));
	err = c->cb(c->arg, c->off, c->at, d.digest);
	c->off += c->at;
	c->at = 0;
	return err ? err : XXH3_128bits_reset(c->chunk) == XXH_OK ? 0 : -EIO;
}

static int xxh128_feed_chunked(void *arg, const void *buf, size_t len)
{
	struct xxh128_chunked *c = arg;
	const char *p = buf;
	int err = xxh128_feed(c->file, buf, len);

	while (!err && len) {
		size_t n = c->size - c->at < len ? (size_t)(c->size - c->at) : len;

		err = xxh128_feed(c->chunk, p, n);
		c->at += n;
		p += n;
		len -= n;
		if (!err && c->at == c->size)
			err = xxh128_chunk_end(c);
	}
	return err;
}

static int xxh128_file_chunked(int dirfd, const char *name, uint64_t chunk, crs_xxh128_chunk_fn cb,
			       void *arg, uint8_t out[CRS_XXH128_LEN], uint64_t *ret_size)
{
	struct xxh128_chunked c = { .size = chunk, .cb = cb, .arg = arg };
	XXH128_canonical_t d;
	int err = -ENOMEM;

	c.file = XXH3_createState();
	c.chunk = XXH3_createState();
	if (chunk && c.file && c.chunk && XXH3_128bits_reset(c.file) == XXH_OK &&
	    XXH3_128bits_reset(c.chunk) == XXH_OK)
		err = crs_file_chunks(dirfd, name, xxh128_feed_chunked, &c, ret_size);
	if (!err && c.at)
		err = xxh128_chunk_end(&c);
	if (!err) {
		XXH128_canonicalFromHash(&d, XXH3_128bits_digest(c.file));
		memcpy(out, d.digest, CRS_XXH128_LEN);
	}
	XXH3_freeState(c.file);
	XXH3_freeState(c.chunk);
	return err;
}

#endif /* CRDBG_CRS_XXH128_IMPL_H */
