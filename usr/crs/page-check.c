// SPDX-License-Identifier: GPL-2.0
/*
 * The digests of a checkpoint's memory pages are most of what a restart
 * reads before CRIU may start (XXH3-128 of every byte; see
 * Documentation/checkpoint.md, *Integrity checks*). Those pages only
 * ever land in the restored tree's own memory, and the tree is held
 * (frozen, or stopped) until crdbg releases it: so a restart checks
 * everything else first and the pages on this thread while CRIU
 * restores, and releases the tree only once they passed (restart.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "page-check.h"

static void *page_check_main(void *arg)
{
	struct crs_page_check *pc = arg;

	/*
	 * criu's restore is the restart's critical path; this check only has
	 * to end before the release, which waits for it. At nice 19 (this
	 * thread alone) it takes the CPU criu leaves: restart medians 1.13x
	 * to 1.14x of a raw restore against 1.21x to 1.39x at nice 0
	 * (Documentation/performance.md, the page check at nice 19).
	 */
	setpriority(PRIO_PROCESS, gettid(), 19);
	pc->result = crs_store_verify_chain_part(pc->root, pc->handle, pc->m, CRS_VERIFY_PAGES,
						 pc->err, sizeof(pc->err));
	pc->done_ms = crs_clock_ms();
	return NULL;
}

int crs_page_check_start(struct crs_page_check *pc, const char *root, const char *handle,
			 const struct crs_meta *m)
{
	int r;

	pc->root = root;
	pc->handle = handle;
	pc->m = m;
	pc->result = 0;
	pc->err[0] = 0;
	r = pthread_create(&pc->thread, NULL, page_check_main, pc);
	pc->started = !r;
	return -r;
}

int crs_page_check_join(struct crs_page_check *pc, char *err, size_t errlen)
{
	if (!pc->started)
		return 0;
	pthread_join(pc->thread, NULL);
	pc->started = false;
	if (pc->result)
		crs_fail(err, errlen, pc->result, "%s", pc->err);
	return pc->result;
}
