/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A restart's check of the memory pages' digests, run on a thread of its
 * own while CRIU restores the tree (see page-check.c).
 */
#ifndef CRDBG_CRS_PAGE_CHECK_H
#define CRDBG_CRS_PAGE_CHECK_H

#include <pthread.h>
#include <stdbool.h>

#include <crdbg/crs.h>

struct crs_page_check {
	pthread_t thread;
	bool started;
	const char *root;
	const char *handle;
	const struct crs_meta *m;	/* read only, by both threads */
	double done_ms;			/* crs_clock_ms() when the check ended */
	int result;
	char err[1024];
};

/*
 * Start checking the digests of every pages-*.img of handle and its
 * chain. root, handle and m must stay valid until crs_page_check_join().
 */
int crs_page_check_start(struct crs_page_check *pc, const char *root, const char *handle,
			 const struct crs_meta *m);

/* Wait for the check: 0, or its error (one line in err). */
int crs_page_check_join(struct crs_page_check *pc, char *err, size_t errlen);

#endif /* CRDBG_CRS_PAGE_CHECK_H */
