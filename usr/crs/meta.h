/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metadata file of a checkpoint ("metadata" in its directory). Text,
 * one record per line, fields separated by one space, documented in
 * Documentation/checkpoint.md:
 *
 *   crdbg-checkpoint 1
 *   handle <handle>
 *   time <unix seconds>
 *   program <path to the root's executable, rest of line>
 *   root <pid>
 *   mpir 0|1                     root uses libcrdbg (MPIR protocol)
 *   debugger 0|1                 a tracer was attached at the request
 *   debug-with-checkpoint 0|1|-1 MPIR_debug_with_checkpoint at checkpoint
 *   shell-job 0|1                dumped with criu --shell-job
 *   criu-version <version>
 *   backend kmod|ptrace
 *   process <pid> <ppid> <pgid> <sid> <mpir 0|1> <trampoline 0x..> <hook-entry 0x..>
 *   stopped <pid>                the process was in a group stop: it stays stopped
 *   zombie <pid>                 the process was a zombie: never frozen nor resumed
 *   criu-opt <--option[=value]>  an option of criu dump, given to criu restore too
 *   thread <pid> <tid> <pc 0x..> <sp 0x..>
 *   file <sha256 hex> <size> <name>
 *   end <sha256 hex of every byte before this line>
 *
 * A file without its "end" line, or whose end checksum differs, is
 * truncated or corrupt and is refused.
 */
#ifndef CRDBG_CRS_META_H
#define CRDBG_CRS_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "sha256.h"

#define CRS_META_FORMAT		1
#define CRS_META_NAME		"metadata"
#define CRS_META_MAX_BYTES	(16u << 20)
#define CRS_MAX_PROCS		4096
#define CRS_MAX_THREADS		65536
#define CRS_MAX_FILES		65536
#define CRS_HANDLE_MAX		64
#define CRS_NAME_MAX		128
#define CRS_MAX_CRIU_OPTS	16
#define CRS_CRIU_OPT_MAX	128

struct crs_proc {
	pid_t pid, ppid, pgid, sid;
	bool mpir;
	uint64_t trampoline;	/* hook-trampoline.S, for the kmod backend */
	uint64_t hook_entry;	/* crdbg_hook_entry, for the ptrace backend */
	bool stopped;		/* in a group stop (SIGSTOP, SIGTSTP...) at checkpoint */
	bool zombie;		/* exited, not yet reaped: CRIU dumps it, crdbg leaves it be */
};

struct crs_thread {
	pid_t pid, tid;
	uint64_t pc, sp;
};

struct crs_file {
	char name[CRS_NAME_MAX];
	uint64_t size;
	uint8_t sha[CRS_SHA256_LEN];
};

struct crs_meta {
	char handle[CRS_HANDLE_MAX];
	int64_t time;
	char program[4096];
	pid_t root;
	bool mpir;
	bool debugger;
	int debug_with_checkpoint;
	bool shell_job;
	char criu_version[32];
	char backend[16];
	char criu_opts[CRS_MAX_CRIU_OPTS][CRS_CRIU_OPT_MAX];
	size_t nr_criu_opts;
	size_t nr_procs, nr_threads, nr_files;
	struct crs_proc *procs;
	struct crs_thread *threads;
	struct crs_file *files;
};

void crs_meta_init(struct crs_meta *m);
void crs_meta_free(struct crs_meta *m);	/* accepts a zeroed or NULL meta */

int crs_meta_add_proc(struct crs_meta *m, const struct crs_proc *p);
int crs_meta_add_thread(struct crs_meta *m, const struct crs_thread *t);
int crs_meta_add_file(struct crs_meta *m, const struct crs_file *f);
/* -E2BIG when full, -EINVAL unless opt is one printable "--name[=value]". */
int crs_meta_add_criu_opt(struct crs_meta *m, const char *opt);

/* Serialize into a malloc'd buffer (*ret_buf, *ret_len). */
int crs_meta_format(const struct crs_meta *m, char **ret_buf, size_t *ret_len);

/*
 * Parse; on failure returns -EBADMSG (malformed or checksum mismatch) or
 * -ENODATA (truncated: no end line) and writes the reason into err.
 */
int crs_meta_parse(const char *buf, size_t len, struct crs_meta *m, char *err, size_t errlen);

/* A handle is 1..63 of [A-Za-z0-9._-], not starting with '.'. */
bool crs_handle_valid(const char *h);

#endif /* CRDBG_CRS_META_H */
