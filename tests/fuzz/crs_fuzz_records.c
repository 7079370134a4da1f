// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the record decoders of the store, a checkpoint's
 * metadata (its chunk-xxh128 records included) and a job's manifest, the
 * manifest's terminal field on its own, and CRIU's pagemap images as
 * crdbg's lazy page server reads them (the first byte picks one).
 * Whatever the bytes, a decoder stays inside them, and whatever it
 * accepts formats back into exactly what it read (the seal covers every byte; a terminal has one
 * written form); a pagemap it accepts is in order, every lookup finds
 * the entry that holds the address, and written back (as a pre-dump's
 * merge writes one) it decodes into the same entries. The record
 * parsers read only sealed text, so a bit of the first byte seals the
 * input as crdbg would before it is parsed: the fuzzer's mutations reach
 * the records, not just the seal.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <crdbg/job.h>
#include "criu-pagemap.h"
#include "meta.h"
#include "seal-key.h"
#include "sha256.h"

/* pm written as an image decodes into the same pages id and entries. */
static void rewritten_or_abort(const struct crs_pagemap *pm)
{
	int fd = memfd_create("pagemap", MFD_CLOEXEC);
	struct crs_pagemap again;
	char err[256], *img;
	off_t len;
	size_t i;

	if (fd < 0)
		return;
	if (crs_pagemap_write(fd, pm))
		abort();
	len = lseek(fd, 0, SEEK_CUR);
	img = malloc(len);
	if (!img || pread(fd, img, len, 0) != len ||
	    crs_pagemap_parse(img, len, &again, err, sizeof(err)))
		abort();
	free(img);
	close(fd);
	if (again.pages_id != pm->pages_id || again.nr != pm->nr || again.bytes != pm->bytes)
		abort();
	for (i = 0; i < pm->nr; i++)
		if (memcmp(&again.e[i], &pm->e[i], sizeof(pm->e[i])))
			abort();
	crs_pagemap_free(&again);
}

static void pagemap_or_abort(const char *buf, size_t len)
{
	struct crs_pagemap pm;
	char err[256];
	size_t i;

	if (crs_pagemap_parse(buf, len, &pm, err, sizeof(err)))
		return;
	for (i = 0; i < pm.nr; i++) {
		const struct crs_pagemap_entry *e = &pm.e[i];
		uint64_t last = e->vaddr + ((uint64_t)e->nr_pages - 1) * CRS_PAGE_SIZE;

		if (crs_pagemap_find(&pm, e->vaddr) != e || crs_pagemap_find(&pm, last) != e)
			abort();
		if (i && e->vaddr < pm.e[i - 1].vaddr)
			abort();
	}
	rewritten_or_abort(&pm);
	crs_pagemap_free(&pm);
}

static void same_or_abort(const uint8_t *in, size_t len, const char *out, size_t out_len)
{
	if (out_len != len || memcmp(in, out, len))
		abort();
}

/* buf[0..*len) and its end line, as crdbg seals a text; NULL without memory. */
static char *sealed_copy(const char *buf, size_t *len)
{
	uint8_t d[CRS_SHA256_LEN];
	char hex[CRS_SHA256_HEX], *out;

	if (crs_seal(buf, *len, d))
		return NULL;
	crs_sha256_hex(d, hex);
	out = malloc(*len + 4 + CRS_SHA256_HEX + 1);
	if (!out)
		return NULL;
	memcpy(out, buf, *len);
	*len += (size_t)sprintf(out + *len, "end %s\n", hex);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly the bytes, so ASan sees any read past them. */
	char *buf, *out, err[256];
	size_t out_len, len;

	if (!size)
		return 0;
	buf = malloc(size - 1 ? size - 1 : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	len = size - 1;
	if ((data[0] & 0x0a) == 0x08) {
		char *sealed = sealed_copy(buf, &len);

		free(buf);
		if (!sealed)
			return 0;
		buf = sealed;
	}
	if (data[0] & 2) {
		pagemap_or_abort(buf, size - 1);
	} else if ((data[0] & 5) == 4) {
		struct crs_job_part p;
		char *s = strndup(buf, size - 1), again[128];

		if (s && strlen(s) == size - 1 && !crs_job_tty_parse(s, &p)) {
			if (p.tty[0])
				snprintf(again, sizeof(again), "%llx:%llx:%s",
					 (unsigned long long)p.tty_rdev,
					 (unsigned long long)p.tty_dev, p.tty);
			else
				snprintf(again, sizeof(again), "-");
			same_or_abort((const uint8_t *)s, size - 1, again, strlen(again));
		}
		free(s);
	} else if (data[0] & 1) {
		struct crs_job j;

		if (!crs_job_parse(buf, len, &j, err, sizeof(err))) {
			if (crs_job_format(&j, &out, &out_len))
				abort();
			same_or_abort((const uint8_t *)buf, len, out, out_len);
			free(out);
			crs_job_free(&j);
		}
	} else {
		struct crs_meta m;

		if (!crs_meta_parse(buf, len, &m, err, sizeof(err))) {
			if (crs_meta_format(&m, &out, &out_len))
				abort();
			free(out);	/* records may be reordered: reparse only */
			crs_meta_free(&m);
		}
	}
	free(buf);
	return 0;
}
