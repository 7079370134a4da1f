// SPDX-License-Identifier: GPL-2.0
/*
 * See criu-pagemap.h. A protobuf decoder for the two messages only:
 * varints and skipping of the wire types CRIU may add fields with.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "criu-pagemap.h"
#include "error.h"
#include "fdio.h"

#define IMG_COMMON_MAGIC	0x54564319u
#define PAGEMAP_MAGIC		0x56084025u
#define PAGEMAP_MAX_BYTES	(256u << 20)

struct pb {
	const uint8_t *p, *end;
};

static int varint(struct pb *b, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (b->p < b->end && shift < 64) {
		uint8_t c = *b->p++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/* Skip one field of wire type wt. */
static int skip(struct pb *b, unsigned int wt)
{
	uint64_t v;

	switch (wt) {
	case 0:
		return varint(b, &v);
	case 1:
	case 5:
		v = wt == 1 ? 8 : 4;
		break;
	case 2:
		if (varint(b, &v))
			return -1;
		break;
	default:
		return -1;
	}
	if (v > (uint64_t)(b->end - b->p))
		return -1;
	b->p += v;
	return 0;
}

/* Fields 1-4 as varints (seen[i] says which came); others skipped. */
static int message(const uint8_t *p, size_t len, uint64_t val[5], bool seen[5])
{
	struct pb b = { p, p + len };
	uint64_t key;

	memset(seen, 0, 5 * sizeof(seen[0]));
	while (b.p < b.end) {
		if (varint(&b, &key))
			return -1;
		if (key >> 3 >= 1 && key >> 3 <= 4) {
			if ((key & 7) != 0 || varint(&b, &val[key >> 3]))
				return -1;
			seen[key >> 3] = true;
		} else if (skip(&b, key & 7)) {
			return -1;
		}
	}
	return 0;
}

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int add_entry(struct crs_pagemap *pm, const uint64_t val[5], const bool seen[5],
		     size_t *cap)
{
	struct crs_pagemap_entry e, *n;

	if (!seen[1] || !seen[2] || val[2] == 0 || val[2] > UINT32_MAX ||
	    val[1] % CRS_PAGE_SIZE || val[1] + val[2] * CRS_PAGE_SIZE < val[1])
		return -1;
	e.vaddr = val[1];
	e.nr_pages = (uint32_t)val[2];
	/* before flags existed: in_parent, else present (as CRIU reads it) */
	e.flags = seen[4] ? (uint32_t)val[4] :
		  (seen[3] && val[3] ? CRS_PE_PARENT : CRS_PE_PRESENT);
	if (pm->nr) {
		const struct crs_pagemap_entry *l = &pm->e[pm->nr - 1];

		if (e.vaddr < l->vaddr + (uint64_t)l->nr_pages * CRS_PAGE_SIZE)
			return -1;
	}
	e.off = pm->bytes;
	if (e.flags & CRS_PE_PRESENT)
		pm->bytes += (uint64_t)e.nr_pages * CRS_PAGE_SIZE;
	if (pm->nr == *cap) {
		if (*cap >= CRS_PAGEMAP_MAX_ENTRIES)
			return -1;
		*cap = *cap ? 2 * *cap : 64;
		n = realloc(pm->e, *cap * sizeof(*n));
		if (!n)
			return -1;
		pm->e = n;
	}
	pm->e[pm->nr++] = e;
	return 0;
}

int crs_pagemap_parse(const void *buf, size_t len, struct crs_pagemap *pm, char *err,
		      size_t errlen)
{
	const uint8_t *p = buf, *end = p + len;
	bool head = false, seen[5];
	uint64_t val[5];
	size_t cap = 0;
	uint32_t n = 0;

	memset(pm, 0, sizeof(*pm));
	if (len < 8 || u32_at(p) != IMG_COMMON_MAGIC || u32_at(p + 4) != PAGEMAP_MAGIC)
		return crs_fail(err, errlen, -EBADMSG, "not a CRIU pagemap image");
	for (p += 8; p < end; p += n) {
		if (end - p < 4)
			goto bad;
		n = u32_at(p);
		p += 4;
		if (n > (size_t)(end - p) || message(p, n, val, seen))
			goto bad;
		if (!head) {
			if (!seen[1] || val[1] > UINT32_MAX)
				goto bad;
			pm->pages_id = (uint32_t)val[1];
			head = true;
		} else if (add_entry(pm, val, seen, &cap)) {
			goto bad;
		}
	}
	if (!head)
		goto bad;
	return 0;
bad:
	crs_pagemap_free(pm);
	return crs_fail(err, errlen, -EBADMSG, "malformed CRIU pagemap image");
}

int crs_pagemap_load(int dirfd, const char *name, struct crs_pagemap *pm, char *err,
		     size_t errlen)
{
	struct stat st;
	size_t got = 0;
	uint8_t *buf;
	ssize_t n;
	int fd, r;

	memset(pm, 0, sizeof(*pm));
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return crs_fail(err, errlen, -errno, "cannot open %s: %s", name, strerror(errno));
	if (fstat(fd, &st) || st.st_size > PAGEMAP_MAX_BYTES) {
		close(fd);
		return crs_fail(err, errlen, -EFBIG, "%s: not a pagemap this size", name);
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		close(fd);
		return crs_fail(err, errlen, -ENOMEM, "out of memory");
	}
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, st.st_size - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	r = got == (size_t)st.st_size ? crs_pagemap_parse(buf, got, pm, err, errlen) :
		crs_fail(err, errlen, -EIO, "cannot read %s", name);
	free(buf);
	return r;
}

void crs_pagemap_free(struct crs_pagemap *pm)
{
	free(pm->e);
	pm->e = NULL;
	pm->nr = 0;
}

const struct crs_pagemap_entry *crs_pagemap_find(const struct crs_pagemap *pm, uint64_t vaddr)
{
	size_t lo = 0, hi = pm->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct crs_pagemap_entry *e = &pm->e[mid];

		if (vaddr < e->vaddr)
			hi = mid;
		else if (vaddr - e->vaddr >= (uint64_t)e->nr_pages * CRS_PAGE_SIZE)
			lo = mid + 1;
		else
			return e;
	}
	return NULL;
}

/* The varint of v at p; returns its length (at most 10). */
static size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	return n;
}

/* One entry: its 32-bit length, then fields 1, 2 and 4 as varints. */
static size_t put_entry(uint8_t *p, const struct crs_pagemap_entry *e)
{
	uint8_t *m = p + 4;
	size_t n = 0;
	uint32_t len;

	m[n++] = 1 << 3;
	n += put_varint(m + n, e->vaddr);
	m[n++] = 2 << 3;
	n += put_varint(m + n, e->nr_pages);
	m[n++] = 4 << 3;
	n += put_varint(m + n, e->flags);
	len = (uint32_t)n;
	memcpy(p, &len, sizeof(len));
	return 4 + n;
}

int crs_pagemap_write(int fd, const struct crs_pagemap *pm)
{
	/* per entry: 4 bytes of length, 3 keys, 10 + 5 + 5 bytes of varints */
	size_t cap = 8 + 4 + 6 + pm->nr * 27, n = 0, k;
	uint32_t magic[2] = { IMG_COMMON_MAGIC, PAGEMAP_MAGIC }, len;
	uint8_t *buf = malloc(cap);
	int r;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, magic, sizeof(magic));
	n = sizeof(magic);
	buf[n + 4] = 1 << 3;
	len = 1 + (uint32_t)put_varint(buf + n + 5, pm->pages_id);
	memcpy(buf + n, &len, sizeof(len));
	n += 4 + len;
	for (k = 0; k < pm->nr; k++)
		n += put_entry(buf + n, &pm->e[k]);
	r = crs_write_all(fd, buf, n);
	free(buf);
	return r;
}
