/* SPDX-License-Identifier: GPL-2.0 */
/*
 * crdbgd, the node's root service (Documentation/security.md): the wire
 * contract between it and its clients (crdbg run by a user).
 *
 * A client connects to a SOCK_SEQPACKET unix socket (CRDBGD_SOCKET, or
 * what the client was told) and sends one request; the service answers
 * with zero or more CRDBGD_R_ENTRY replies (list) and one CRDBGD_R_DONE,
 * then closes. Every message is
 *
 *   u32 magic CRDBGD_MAGIC, u16 version CRDBGD_VERSION, u16 kind,
 *   then attributes: u16 type, u16 length, length bytes
 *
 * in host byte order (the socket never leaves the node). Unknown
 * attributes, kinds, flags and repeated single attributes are refused.
 *
 * Request kinds (enum crdbgd_op) and their attributes:
 *   CHECKPOINT  PID (u32), AFTER (u32 enum crs_after), DEBUG (u32 enum
 *               crs_debug), BACKEND (u32), FLAGS (u32), CRIU_OPT (string,
 *               up to CRS_MAX_CRIU_OPTS times)
 *   RESTART     HANDLE (string), BACKEND, FLAGS (LAZY, DEBUG, VERBOSE)
 *   LIST        FLAGS
 *   VERIFY      HANDLE, EXPECT_META (string: 64 hex digits, optional)
 *   RM          HANDLE
 *   PART_CHECKPOINT  one part of a job checkpoint (<crdbg/job-part.h>):
 *               PID, CID (string), PART (u32 K), PARTS (u32 N), BACKEND,
 *               FLAGS (FULL, NO_PRE_DUMP, DEBUG, VERBOSE)
 *   PART_RESTART     one part of a job restart: HANDLE, EXPECT_META,
 *               NODE_ROOTS (string: PID,PID... or -), AGENTS (string:
 *               PID,PID..., optional: a launcher's agents in the tree,
 *               <crdbg/job-part.h>), BACKEND, FLAGS (DEBUG, VERBOSE,
 *               TERMINAL)
 * A part request's stdin and stdout are its coordinator's channel: the
 * service speaks the part protocol on them for the caller, as crdbg-part
 * would, until the part's end, then answers DONE (STATUS: the exit
 * status crdbg-part ends with). The caller closing its socket calls the
 * part off, as a SIGTERM to crdbg-part does.
 *
 * File descriptors come in the request's SCM_RIGHTS, in this order:
 * the client's stdin, stdout, stderr (log and relayed terminal); the
 * store directory when FLAGS has CRDBGD_F_STORE; for CHECKPOINT and
 * PART_CHECKPOINT a pidfd of PID and an fd of /proc/PID/mem the client
 * opened itself, its proof of ptrace access under its own credentials;
 * for PART_RESTART with CRDBGD_F_TERMINAL the restored tree's terminal.
 *
 * Replies:
 *   ENTRY  HANDLE, VALID (u32 0/1), PROBLEM (string), TIME (u64), PROGRAM
 *          (string), PIDS (u32 array, the first CRDBGD_MAX_PIDS), THREADS
 *          (u32), BYTES (u64), DEBUGGER (u32), MPIR (u32), CRIU (string:
 *          its version), PARENT (string)
 *   DONE   RC (u32: 0 or an errno), STATUS (u32: a restart's wait status),
 *          HANDLE (a checkpoint's), ERROR (string: the one line, on failure)
 */
#ifndef CRDBG_CRDBGD_H
#define CRDBG_CRDBGD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <crdbg/crs.h>

#define CRDBGD_SOCKET		"/run/crdbg/crdbgd.sock"
/* Where a client looks instead (read by clients only, never by crdbgd). */
#define CRDBGD_SOCKET_ENV	"CRDBG_SERVICE_SOCKET"
#define CRDBGD_MAGIC		0x43524444u	/* "DDRC" */
#define CRDBGD_VERSION		1
#define CRDBGD_MSG_MAX		8192
#define CRDBGD_ERR_MAX		1024
#define CRDBGD_STR_MAX		4096
#define CRDBGD_MAX_FDS		6
#define CRDBGD_MAX_PIDS		64

enum crdbgd_op {
	CRDBGD_OP_UNSPEC,
	CRDBGD_OP_CHECKPOINT,
	CRDBGD_OP_RESTART,
	CRDBGD_OP_LIST,
	CRDBGD_OP_VERIFY,
	CRDBGD_OP_RM,
	CRDBGD_R_ENTRY,
	CRDBGD_R_DONE,
	CRDBGD_OP_PART_CHECKPOINT,
	CRDBGD_OP_PART_RESTART,
	__CRDBGD_OP_LAST
};
#define CRDBGD_OP_MAX (__CRDBGD_OP_LAST - 1)

enum crdbgd_attr {
	CRDBGD_A_UNSPEC,
	CRDBGD_A_PID,
	CRDBGD_A_AFTER,
	CRDBGD_A_DEBUG,
	CRDBGD_A_BACKEND,
	CRDBGD_A_FLAGS,
	CRDBGD_A_CRIU_OPT,
	CRDBGD_A_HANDLE,
	CRDBGD_A_VALID,
	CRDBGD_A_PROBLEM,
	CRDBGD_A_TIME,
	CRDBGD_A_PROGRAM,
	CRDBGD_A_PIDS,
	CRDBGD_A_THREADS,
	CRDBGD_A_BYTES,
	CRDBGD_A_DEBUGGER,
	CRDBGD_A_PARENT,
	CRDBGD_A_RC,
	CRDBGD_A_STATUS,
	CRDBGD_A_ERROR,
	CRDBGD_A_MPIR,
	CRDBGD_A_CRIU,
	CRDBGD_A_CID,
	CRDBGD_A_PART,
	CRDBGD_A_PARTS,
	CRDBGD_A_EXPECT_META,
	CRDBGD_A_NODE_ROOTS,
	CRDBGD_A_AGENTS,
	__CRDBGD_A_LAST
};
#define CRDBGD_A_MAX (__CRDBGD_A_LAST - 1)

enum crdbgd_flags {
	CRDBGD_F_STORE		= 1 << 0,	/* a store directory fd follows stdio */
	CRDBGD_F_NO_TREE	= 1 << 1,
	CRDBGD_F_FULL		= 1 << 2,
	CRDBGD_F_NO_PRE_DUMP	= 1 << 3,
	CRDBGD_F_LAZY		= 1 << 4,
	CRDBGD_F_DEBUG		= 1 << 5,
	CRDBGD_F_VERBOSE	= 1 << 6,
	CRDBGD_F_TERMINAL	= 1 << 7,	/* a terminal fd follows (PART_RESTART) */
	__CRDBGD_F_ALL		= (1 << 8) - 1,
};

/* One message, decoded; strings NUL-terminated, "" when absent. */
struct crdbgd_msg {
	enum crdbgd_op kind;
	uint32_t have;			/* bit n: attribute n was present */
	uint32_t pid, after, debug, backend, flags;
	char criu_opts[CRS_MAX_CRIU_OPTS][CRS_CRIU_OPT_MAX];
	uint32_t nr_criu_opts;
	char handle[CRS_HANDLE_MAX];
	uint32_t valid, threads, debugger, mpir, rc, status;
	uint64_t time, bytes;
	char problem[CRDBGD_ERR_MAX];
	char program[CRDBGD_STR_MAX];
	uint32_t pids[CRDBGD_MAX_PIDS];
	uint32_t nr_pids;
	char criu[32];
	char parent[CRS_HANDLE_MAX];
	char error[CRDBGD_ERR_MAX];
	char cid[CRS_CID_MAX];
	uint32_t part, parts;
	char expect_meta[65];		/* 64 hex digits */
	char node_roots[CRDBGD_STR_MAX];
	char agents[CRDBGD_STR_MAX];
};

static inline bool crdbgd_has(const struct crdbgd_msg *m, enum crdbgd_attr a)
{
	return m->have & (1u << a);
}

/* Encode m (the attributes its have bits name): its length, or -EINVAL/-EMSGSIZE. */
int crdbgd_format(const struct crdbgd_msg *m, uint8_t *buf, size_t len);

/*
 * Decode one message: 0, or -EBADMSG (bad magic, version, kind, length,
 * an unknown or repeated attribute, a string without its NUL or too
 * long, a flag outside __CRDBGD_F_ALL).
 */
int crdbgd_parse(const uint8_t *buf, size_t len, struct crdbgd_msg *ret);

/* Set a u32, u64 or string attribute of m and its have bit (PIDS: append one). */
void crdbgd_add_pid(struct crdbgd_msg *m, uint32_t pid);
void crdbgd_set_u32(struct crdbgd_msg *m, enum crdbgd_attr a, uint32_t v);
void crdbgd_set_u64(struct crdbgd_msg *m, enum crdbgd_attr a, uint64_t v);
int crdbgd_set_str(struct crdbgd_msg *m, enum crdbgd_attr a, const char *s);

/* Whether kind is a request's (a client's), not a reply's. */
bool crdbgd_is_request(enum crdbgd_op kind);

/* How many fds a request of kind op with flags carries. */
size_t crdbgd_request_fds(enum crdbgd_op op, uint32_t flags);

/* Where the proof fds (pidfd, mem) of a CHECKPOINT or PART_CHECKPOINT start. */
size_t crdbgd_proof_fds(uint32_t flags);

#endif /* CRDBG_CRDBGD_H */
