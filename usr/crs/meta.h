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
 *   parent <handle>              incremental: the checkpoint holding the other pages
 *   track-mem 1                  the dump reset the tree's memory tracking
 *   process <pid> <ppid> <pgid> <sid> <mpir 0|1> <trampoline 0x..> <hook-entry 0x..>
 *   stopped <pid>                the process was in a group stop: it stays stopped
 *   zombie <pid>                 the process was a zombie: never frozen nor resumed
 *   stdio <pid> <fd 0-2> <inside 0|1> <rdev 0x..> <dev 0x..> <readlink of the fd, rest of line>
 *   sigcont <pid>                SIGCONT was pending for the whole process (ShdPnd)
 *                                at the freeze: queued again at release and restart
 *   criu-opt <--option[=value]>  an option of criu dump, given to criu restore too
 *   thread <pid> <tid> <pc 0x..> <sp 0x..>
 *   sigcont-thread <pid> <tid>   SIGCONT was pending on that thread alone (SigPnd): likewise
 *   file <sha256 hex> <size> <name>
 *   file-xxh128 <xxh3-128 hex> <size> <name>
 *   chunk-xxh128 <xxh3-128 hex> <offset> <length> <name>   a pages image chunk by chunk
 *   end <sha256 hex of every byte before this line>
 *
 * A file without its "end" line, or whose end checksum differs, is
 * truncated or corrupt and is refused.
 */
#ifndef CRDBG_CRS_META_H
#define CRDBG_CRS_META_H

#include <stddef.h>

#include <crdbg/crs.h>

#define CRS_META_FORMAT		1
#define CRS_META_NAME		"metadata"
#define CRS_META_MAX_BYTES	(16u << 20)

int crs_meta_add_proc(struct crs_meta *m, const struct crs_proc *p);
int crs_meta_add_thread(struct crs_meta *m, const struct crs_thread *t);
int crs_meta_add_file(struct crs_meta *m, const struct crs_file *f);
/* -E2BIG when full, -EINVAL for a bad name or an empty or overflowing range. */
int crs_meta_add_chunk(struct crs_meta *m, const struct crs_chunk *c);
/* -EINVAL unless fd is 0-2 and the link one non-empty line. */
int crs_meta_add_stdio(struct crs_meta *m, const struct crs_stdio *s);
/* -E2BIG when full, -EINVAL unless opt is one printable "--name[=value]". */
int crs_meta_add_criu_opt(struct crs_meta *m, const char *opt);

/* Serialize into a malloc'd buffer (*ret_buf, *ret_len). */
int crs_meta_format(const struct crs_meta *m, char **ret_buf, size_t *ret_len);

/*
 * Parse; on failure returns -EBADMSG (malformed or checksum mismatch) or
 * -ENODATA (truncated: no end line) and writes the reason into err.
 */
int crs_meta_parse(const char *buf, size_t len, struct crs_meta *m, char *err, size_t errlen);

#endif /* CRDBG_CRS_META_H */
