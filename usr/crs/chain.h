/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Incremental checkpoints: which earlier checkpoint a new dump may take
 * as its parent (criu --track-mem --prev-images-dir), and the record of
 * the last dump that reset each process's memory tracking.
 *
 * CRIU's soft-dirty tracking says which pages changed since the last
 * reset of a process's tracking, whoever reset it. So a parent is only
 * taken when the store's tracking record (<store>/.tracking/<pid>: boot
 * id, start time, handle) says that its dump was the last reset of every
 * process of the tree; the record is removed before each dump and
 * written only once the checkpoint is stored, so a failed, interrupted
 * or removed checkpoint makes the next one full.
 */
#ifndef CRDBG_CRS_CHAIN_H
#define CRDBG_CRS_CHAIN_H

#include <stdbool.h>
#include <stdio.h>

#include "meta.h"

#define CRS_TRACKING_DIR ".tracking"

/* The kernel tracks written pages (soft-dirty bits in /proc/PID/pagemap). */
bool crs_mem_tracking_supported(void);

/*
 * Before the dump of m's processes into store root: sets m->track_mem
 * (when the kernel can) and m->parent (unless full, when every process's
 * last tracked dump is one intact checkpoint of the store), and forgets
 * the processes' tracking records. Never fails: at worst the dump is full.
 */
void crs_chain_begin(const char *root, struct crs_meta *m, bool full, FILE *log);

/* Once m is stored under m->handle: record it as its processes' last tracked dump. */
void crs_chain_commit(const char *root, const struct crs_meta *m);

#endif /* CRDBG_CRS_CHAIN_H */
