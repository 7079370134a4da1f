/* SPDX-License-Identifier: GPL-2.0 */
/*
 * crdbg's own page server for a lazy restart: criu lazy-pages
 * (--page-server --ps-socket) asks it for each run of pages it copies into
 * the restored tree, and it serves them only from digest chunks it has
 * checked (Documentation/checkpoint.md, *Lazy restart*).
 */
#ifndef CRDBG_CRS_PAGE_SERVER_H
#define CRDBG_CRS_PAGE_SERVER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <crdbg/crs.h>

#include "criu-pagemap.h"

struct crs_ps_image;
struct crs_ps_pagemap;

/* Checked chunks kept in memory (4 MiB each): every page served is sent from one. */
#define CRS_PS_SLOTS	8

struct crs_ps_slot {
	uint8_t *data;			/* the chunk as read and checked */
	const struct crs_ps_image *img;	/* whose; NULL while empty */
	size_t chunk;
	uint64_t used;			/* crs_page_server.uses at the last use */
};

struct crs_page_server {
	const struct crs_meta *m;	/* read only; valid until crs_page_server_stop() */
	int dfd;			/* the checkpoint's directory */
	int sk, peer;			/* ours; criu lazy-pages' end (-1 once it has it) */
	struct crs_ps_image *imgs;
	size_t nr_imgs;
	struct crs_ps_pagemap *pms;
	size_t nr_pms;
	struct crs_ps_slot slots[CRS_PS_SLOTS];
	uint64_t uses;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool eager_done, failed;
	char err[1024];
	double eager_ms;		/* crs_clock_ms() when the eager chunks passed */
	uint64_t served_pages, chunks_checked;
};

/*
 * Whether a lazy restart of m can check its pages as they are served: a
 * full checkpoint (no parent: CRIU's lazy-pages reads a parent's pages
 * itself) whose pages images all have chunk records.
 */
bool crs_page_server_applies(const struct crs_meta *m);

/*
 * Read the pagemaps of the checkpoint in dir, match every pages image to
 * its chunk records, and start the thread: it first checks the chunks
 * criu restore reads itself (pages CRIU does not leave to lazy-pages,
 * and images no process pagemap names, such as shared memory), then
 * serves requests on the socket whose other end crs_page_server_peer()
 * gives. A chunk that does not match, a short image, or a request for a
 * page the checkpoint does not hold kills every process of m and ends
 * the service; the error is kept for crs_page_server_failed().
 */
int crs_page_server_start(struct crs_page_server *ps, const char *dir, const struct crs_meta *m,
			  char *err, size_t errlen);

/* The fd to hand to criu lazy-pages --ps-socket; close it once forked. */
int crs_page_server_peer(const struct crs_page_server *ps);
void crs_page_server_peer_close(struct crs_page_server *ps);

/* Wait until the chunks criu restore reads are checked: 0, or its error. */
int crs_page_server_wait_eager(struct crs_page_server *ps, char *err, size_t errlen);

/* 0, or the error that made the server kill the tree (one line in err). */
int crs_page_server_failed(struct crs_page_server *ps, char *err, size_t errlen);

/* End the service (if criu has not), join the thread and free. Idempotent. */
void crs_page_server_stop(struct crs_page_server *ps);

#endif /* CRDBG_CRS_PAGE_SERVER_H */
