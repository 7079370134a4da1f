/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The checkpoint/restart service (CRS): the MPIR checkpoint protocol
 * (<crdbg/mpir-checkpoint.h>) over CRIU and a freeze backend, and the
 * store its checkpoints live in. Library code: every call returns 0 or
 * -errno with a one-line reason in err; informational notes go to
 * opts->log when it is non-NULL. Documentation/checkpoint.md describes
 * the sequence, the store layout and the metadata format.
 */
#ifndef CRDBG_CRS_H
#define CRDBG_CRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <crdbg/freeze.h>

/* What a checkpoint holds, as recorded in its metadata file. */
#define CRS_META_FORMAT		1
#define CRS_META_NAME		"metadata"
#define CRS_META_MAX_BYTES	(16u << 20)
#define CRS_MAX_PROCS		4096
#define CRS_MAX_THREADS		65536
#define CRS_MAX_FILES		65536
#define CRS_MAX_CHUNKS		(1u << 20)
#define CRS_PAGE_CHUNK_BYTES	(4u << 20)	/* a pages image's chunk digests (lazy restart) */
#define CRS_HANDLE_MAX		64
#define CRS_NAME_MAX		128
#define CRS_MAX_CRIU_OPTS	16
#define CRS_CRIU_OPT_MAX	128
#define CRS_FILE_DIGEST_LEN	32
#define CRS_CID_MAX		64
#define CRS_STDIO_LINK_MAX	4096	/* readlink of /proc/PID/fd/N, with its NUL */

struct crs_proc {
	pid_t pid, ppid, pgid, sid;
	bool mpir;
	uint64_t trampoline;	/* hook-trampoline.S, for the kmod backend */
	uint64_t hook_entry;	/* crdbg_hook_entry, for the ptrace backend */
	bool stopped;		/* in a group stop (SIGSTOP, SIGTSTP...) at checkpoint */
	bool zombie;		/* exited, not yet reaped: CRIU dumps it, crdbg leaves it be */
	uint64_t rt_info;	/* its struct crdbg_rt_info (libcrdbg), 0 if unknown */
	bool sigcont;		/* SIGCONT pending process-wide at the freeze (a group stop drops it) */
	bool held;		/* parked by its debugger at checkpoint (a rank of a session) */
};

/*
 * What one of a process's fds 0, 1, 2 was at checkpoint (its "stdio"
 * record): the readlink of /proc/PID/fd/N ("/dev/pts/3", "pipe:[1234]",
 * "socket:[99]", a path), whether what it leads to has its other end in
 * the tree (a pipe read and written there, a pty whose master is open
 * there), and for a character device or FIFO its st_rdev and st_dev
 * (CRIU names a tty by them).
 */
struct crs_stdio {
	pid_t pid;
	int fd;
	bool inside;
	uint64_t rdev, dev;
	char link[CRS_STDIO_LINK_MAX];
};

struct crs_thread {
	pid_t pid, tid;
	uint64_t pc, sp;
	bool sigcont;		/* SIGCONT pending on this thread alone at the freeze */
};

/* How a file's content is checked: "file" records SHA-256, "file-xxh128" XXH3-128. */
enum crs_digest {
	CRS_DIGEST_SHA256,
	CRS_DIGEST_XXH128,	/* the default since issue 16: fast enough for a restart */
};

struct crs_file {
	char name[CRS_NAME_MAX];
	uint64_t size;
	uint8_t sha[CRS_FILE_DIGEST_LEN];	/* the digest (XXH3-128: its first 16 bytes) */
	enum crs_digest digest;
};

/*
 * The XXH3-128 of bytes [off, off + len) of file name (a "chunk-xxh128"
 * record): a pages image's digest chunk by chunk, so that a lazy restart
 * checks each chunk when its pages are first served (page-server.c).
 */
struct crs_chunk {
	char name[CRS_NAME_MAX];
	uint64_t off, len;
	uint8_t digest[16];
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
	char criu_opts[CRS_MAX_CRIU_OPTS][CRS_CRIU_OPT_MAX];	/* given to dump and restore */
	size_t nr_criu_opts;
	size_t nr_procs, nr_threads, nr_files;
	struct crs_proc *procs;
	struct crs_thread *threads;
	struct crs_file *files;
	struct crs_stdio *stdio;	/* none in metadata written before issue 13 */
	size_t nr_stdio;
	struct crs_chunk *chunks;	/* none in metadata written before them */
	size_t nr_chunks;
	/*
	 * Incremental checkpoints: the parent whose images hold the pages
	 * this one does not ("" for a full checkpoint), and whether the
	 * dump reset the tree's memory tracking (criu --track-mem).
	 */
	char parent[CRS_HANDLE_MAX];
	bool track_mem;
	/*
	 * A part of a job checkpoint (<crdbg/job.h>): the computation id, the
	 * number of parts and this part's index ("" and 0 for a lone checkpoint).
	 */
	char cid[CRS_CID_MAX];
	uint32_t cid_parts, cid_index;
	/*
	 * Whose checkpoint it is (the "owner" record): the uid and gid of
	 * whoever took it. Only they and root may list, verify, restart or
	 * remove it through the service, and a restart restores only a tree
	 * whose images' credentials are the owner's. Metadata without the
	 * record is root's.
	 */
	bool has_owner;
	uid_t owner_uid;
	gid_t owner_gid;
};

void crs_meta_init(struct crs_meta *m);
void crs_meta_free(struct crs_meta *m);	/* accepts a zeroed or NULL meta */

/* len bytes from exactly 2 * len lowercase hex digits; false if s is not that. */
bool crs_digest_from_hex(const char *s, uint8_t *out, size_t len);

/* A handle is 1..63 of [A-Za-z0-9._-], not starting with '.'. */
bool crs_handle_valid(const char *h);

/* Checkpoint and restart. */
enum crs_after {
	CRS_AFTER_CONTINUE,	/* every thread runs the CRS hook and goes on */
	CRS_AFTER_STOP,		/* left in a SIGSTOP group stop, no hook pushed */
	CRS_AFTER_KILL,		/* killed once the checkpoint is safely stored */
};

enum crs_debug {
	CRS_DEBUG_KEEP,		/* MPIR_debug_with_checkpoint as the debugger left it */
	CRS_DEBUG_CLEAR,	/* no debugger will attach: open the gate */
	CRS_DEBUG_SET,		/* a debugger will attach: park every thread */
};

struct crs_checkpoint_opts {
	pid_t pid;
	bool descendants;
	enum crs_after after;
	enum crs_debug debug;
	enum freeze_backend_kind backend;
	const char *store;
	FILE *log;
	bool verbose;		/* per-thread PCs at checkpoint and at resume */
	const char *const *criu_opts;	/* extra "--name[=value]" for criu, checked */
	size_t nr_criu_opts;
	bool full;		/* never incremental: dump every page */
	bool no_pre_dump;	/* every page copied while frozen, even from a running tree */
	/* A part of a job checkpoint: its CID, number of parts and index. */
	const char *cid;
	uint32_t cid_parts, cid_index;
	/* The checkpoint's owner with owner_given (the service's caller), else our uid and gid. */
	bool owner_given;
	uid_t owner_uid;
	gid_t owner_gid;
	/*
	 * The coordinated cut: called once every process of the tree is
	 * frozen, before CRIU dumps; non-zero (the job's checkpoint was
	 * called off) thaws the tree and fails with -ECANCELED.
	 */
	int (*frozen)(void *arg);
	/*
	 * Then called once CRIU has written the images, the tree still
	 * frozen: the release waits for its return, so no process of the
	 * job runs before every part is dumped. Non-zero (called off):
	 * the tree is released all the same and the checkpoint fails with
	 * -ECANCELED, nothing kept.
	 */
	int (*dumped)(void *arg);
	void *frozen_arg;
};

/*
 * 0 if opt is an option crdbg lets a user pass to CRIU ("--name" or
 * "--name=value", see Documentation/checkpoint.md), else -EINVAL with a
 * one-line reason in err.
 */
int crs_criu_opt_check(const char *opt, char *err, size_t errlen);

int crs_checkpoint(const struct crs_checkpoint_opts *o, char *ret_handle, size_t handle_len,
		   char *err, size_t errlen);

/*
 * End a checkpointed tree for good (CRS_AFTER_KILL, a job part's kill):
 * its TCP connections aborted first, each peer reset, so that none of
 * them holds a port the restart binds again in TIME_WAIT, then SIGKILL
 * to every process of it.
 */
void crs_kill_tree(const struct crs_meta *m);

enum crs_hold_phase {
	CRS_HOLD_VERIFIED,
	CRS_HOLD_RESTORED,
};

struct crs_restart_opts {
	const char *handle;
	const char *store;
	bool debug;
	enum freeze_backend_kind backend;
	FILE *log;
	bool verbose;
	bool lazy;		/* pages on demand (criu lazy-pages, userfaultfd) */
	/*
	 * The restart barrier: called once the checkpoint is verified and its
	 * pids are free (CRS_HOLD_VERIFIED), then with the restored tree held
	 * (CRS_HOLD_RESTORED: frozen or stopped, no user instruction run
	 * yet); non-zero calls the restart off (-ECANCELED; a restored tree
	 * is killed), 0 goes on (restores; releases).
	 */
	int (*hold)(void *arg, const struct crs_meta *m, enum crs_hold_phase phase);
	void *hold_arg;
	/* The SHA-256 the metadata file must have (a job's part), or NULL. */
	const uint8_t *expect_meta_sha;
	/*
	 * A job's part: the roots of the other parts on its node ("PID,PID",
	 * "-"), one of which may lead the group its tree was in (srun's
	 * tasks); NULL for a lone restart.
	 */
	const char *node_roots;
	/*
	 * A job's part: processes of the tree that are a launcher's agents
	 * ("PID,PID", usr/crs/agent.h), NULL for none. The release leaves
	 * them in a group stop, no instruction of theirs run; whoever asked
	 * ends them (the part worker, once the job's daemons have ended).
	 * A pid that is no process of the checkpoint, or its root, refuses
	 * the restart before anything is restored.
	 */
	const char *agents;
	/*
	 * A tree that held its own session on a terminal (a pty whose master
	 * was outside it) comes back on a terminal of its own: with
	 * has_terminal, the pty slave terminal_fd (a job's part, given by
	 * whoever relays that pty); else crdbg restart makes a pty, copies
	 * its output to our stdout and, with relay_stdin, our stdin to it.
	 */
	bool has_terminal;
	int terminal_fd;
	bool relay_stdin;
	/*
	 * The service's restart for a user: the metadata read must say this
	 * uid owns it (it is read again here, after the service checked it).
	 */
	bool for_owner;
	uid_t owner_uid;
};

/*
 * The terminal a restart of m must give its tree back (Documentation/
 * checkpoint.md, "Stdio and terminals at restart"): the first stdio
 * record of a pty slave whose master was outside the tree, when the tree
 * held its own session (not a shell job); NULL otherwise.
 */
const struct crs_stdio *crs_restart_terminal(const struct crs_meta *m);

/*
 * pid and, with descendants, every process below it (pid first), in a
 * malloc'd array: the tree a checkpoint of pid takes, and a restart over
 * it must find gone. 0, or a negative errno.
 */
int crs_proc_tree(pid_t pid, bool descendants, pid_t **ret_pids, size_t *ret_nr);

/* Restore, release, then wait: *ret_status is the root's exit status. */
int crs_restart(const struct crs_restart_opts *o, int *ret_status, char *err, size_t errlen);

/*
 * How long a restart waits for a pid of its tree held by a process on its
 * way out (a zombie, a process SIGKILL is pending on) to be free.
 */
#define CRS_RESTART_PID_WAIT_S	30
/* ... and for a port of its tree still held, TIME_WAIT's 60 s included. */
#define CRS_RESTART_PORT_WAIT_S	75

/*
 * The store: one directory per checkpoint under the store root (default
 * /var/lib/crdbg, CRDBG_STORE or --store to change). A checkpoint is built
 * in ".tmp-<handle>" and renamed to "<handle>" only once its images are
 * complete and its metadata (with the image checksums) is written and
 * synced; anything starting with '.' is never listed.
 */
#define CRS_STORE_DEFAULT "/var/lib/crdbg"

/* The store root: explicit (non-NULL) > $CRDBG_STORE > default. */
const char *crs_store_root(const char *explicit_root);

/* Path of a checkpoint directory; -EINVAL for a malformed handle. */
int crs_store_path(const char *root, const char *handle, char *out, size_t outlen);

/*
 * SHA-256 of a checkpoint's metadata file, which seals its image digests:
 * what a job manifest records for each part.
 */
int crs_store_meta_digest(const char *root, const char *handle, uint8_t sha[32], char *err,
			  size_t errlen);

/* Load and parse the metadata of a checkpoint. */
int crs_store_load(const char *root, const char *handle, struct crs_meta *m, char *err,
		   size_t errlen);

/*
 * Full check before a restore: metadata intact, every listed file present
 * with its size and checksum, no unlisted file. With quick, sizes only.
 */
int crs_store_verify(const char *root, const char *handle, const struct crs_meta *m,
		     bool quick, char *err, size_t errlen);

/*
 * Which digests crs_store_verify_part() reads; presence, sizes and the
 * list of files are checked by every part. The memory pages
 * (CRIU's pages-*.img) only ever land in the restored tree's memory, so
 * a restart may check them while CRIU restores (restart.c); everything
 * else says what CRIU does on the system and is checked before.
 */
enum crs_verify_part {
	CRS_VERIFY_SIZES,	/* no digest */
	CRS_VERIFY_STRUCTURE,	/* every digest but the memory pages' */
	CRS_VERIFY_PAGES,	/* the memory pages' digests only */
	CRS_VERIFY_ALL,
};
int crs_store_verify_part(const char *root, const char *handle, const struct crs_meta *m,
			  enum crs_verify_part part, char *err, size_t errlen);
/* A file of the checkpoint holds memory pages (a CRIU pages-*.img). */
bool crs_store_is_pages(const char *name);

/* Call fn for every checkpoint (sorted by name); fn gets NULL meta if bad. */
typedef void (*crs_store_list_fn)(const char *handle, const struct crs_meta *m,
				  uint64_t bytes, const char *problem, void *arg);
int crs_store_list(const char *root, crs_store_list_fn fn, void *arg);

/*
 * Remove a checkpoint; -EBUSY when incremental checkpoints depend on it
 * (crs_store_dependents names them).
 */
int crs_store_remove(const char *root, const char *handle);
/* The one line that says why crs_store_remove() returned r (< 0), into err. */
void crs_store_remove_why(const char *root, const char *handle, int r, char *err,
			  size_t errlen);

/*
 * Incremental chains (usr/crs/chain.c). crs_store_verify_chain checks a
 * checkpoint and every ancestor it needs (quick: sizes only), with one
 * line naming the first broken link. crs_store_dependents writes the
 * handles whose parent is handle, comma-separated, into out and returns
 * how many there are (or -errno).
 */
#define CRS_CHAIN_MAX		1024
int crs_store_verify_chain(const char *root, const char *handle, const struct crs_meta *m,
			   bool quick, char *err, size_t errlen);
int crs_store_verify_chain_part(const char *root, const char *handle, const struct crs_meta *m,
				enum crs_verify_part part, char *err, size_t errlen);
int crs_store_dependents(const char *root, const char *handle, char *out, size_t outlen);

#endif /* CRDBG_CRS_H */
