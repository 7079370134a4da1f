/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CRIU's pagemap images (pagemap-<pid>.img), read by crdbg's own page
 * server for a lazy restart (page-server.c), read and written when a
 * pre-dump's pages are merged into a checkpoint (pre-dump.c): which pages a process had,
 * whether CRIU restores them itself or leaves them to the lazy-pages
 * daemon, and where each lies in pages-<id>.img. Format (CRIU 3.17,
 * images/pagemap.proto): two 32-bit magics, then entries, each a 32-bit
 * length and a protobuf message: one pagemap_head { pages_id = 1 }, then
 * pagemap_entry { vaddr = 1, nr_pages = 2, in_parent = 3, flags = 4 }
 * in increasing vaddr. The pages of every present entry follow one
 * another in pages-<id>.img, in entry order.
 */
#ifndef CRDBG_CRS_CRIU_PAGEMAP_H
#define CRDBG_CRS_CRIU_PAGEMAP_H

#include <stddef.h>
#include <stdint.h>

#define CRS_PAGE_SIZE		4096u
#define CRS_PE_PARENT		(1u << 0)	/* in the parent checkpoint's images */
#define CRS_PE_LAZY		(1u << 1)	/* left to the lazy-pages daemon */
#define CRS_PE_PRESENT		(1u << 2)	/* in this checkpoint's pages image */
#define CRS_PAGEMAP_MAX_ENTRIES	(1u << 22)

struct crs_pagemap_entry {
	uint64_t vaddr;
	uint32_t nr_pages;
	uint32_t flags;		/* CRS_PE_* */
	uint64_t off;		/* of its first page in pages-<id>.img, if present */
};

struct crs_pagemap {
	uint32_t pages_id;
	size_t nr;
	struct crs_pagemap_entry *e;
	uint64_t bytes;		/* what the present entries take of the pages image */
};

/*
 * Decode an image (its bytes): 0, or -EBADMSG with the reason in err
 * (bad magic, truncated entry, malformed protobuf, entries out of order
 * or overlapping, a missing required field).
 */
int crs_pagemap_parse(const void *buf, size_t len, struct crs_pagemap *pm, char *err,
		      size_t errlen);
/* The same from file name in dirfd. */
int crs_pagemap_load(int dirfd, const char *name, struct crs_pagemap *pm, char *err,
		     size_t errlen);
void crs_pagemap_free(struct crs_pagemap *pm);

/*
 * Write pm as a pagemap image to fd (its head, then every entry with its
 * vaddr, nr_pages and flags; off is implied by the order): 0 or -errno.
 */
int crs_pagemap_write(int fd, const struct crs_pagemap *pm);

/* The entry that holds vaddr, or NULL. */
const struct crs_pagemap_entry *crs_pagemap_find(const struct crs_pagemap *pm, uint64_t vaddr);

#endif /* CRDBG_CRS_CRIU_PAGEMAP_H */
