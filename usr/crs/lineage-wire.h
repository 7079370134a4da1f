/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a restart and its node's lineage keeper (lineage.h) say to each
 * other: one SOCK_SEQPACKET message each, a header and a payload.
 *
 *   restart -> keeper   SPAWN  arg=pgid to join (0: the keeper's, -1: a
 *                              group of its own), nr_fds; payload:
 *                              int32 target[nr_fds], then argv's strings,
 *                              an empty string, env's strings (each NUL-
 *                              terminated); the fds ride in SCM_RIGHTS
 *                       WATCH  pid: report its exit (a restored root)
 *   keeper -> restart   HELLO  first, once it took the connection (one
 *                              it never took is reset when it ends:
 *                              the restart makes a new keeper)
 *                       SPAWNED pid, or -errno
 *                       EXIT   pid, arg=its wait status
 *
 * Both ends run as root on one node, and the keeper talks only to a
 * peer of its own uid; the decoder still takes nothing on trust
 * (tests/fuzz/crs_fuzz_lineage.c).
 */
#ifndef CRDBG_CRS_LINEAGE_WIRE_H
#define CRDBG_CRS_LINEAGE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "lineage.h"

enum lin_type {
	LIN_SPAWN = 1,
	LIN_WATCH,
	LIN_SPAWNED,
	LIN_EXIT,
	LIN_HELLO,
};

struct lin_hdr {
	uint32_t type;
	int32_t pid;
	int32_t arg;
	uint32_t nr_fds;
};

#define LIN_MSG_MAX	(64 * 1024)
#define LIN_MAX_FDS	CRS_LINEAGE_MAX_FDS
#define LIN_MAX_ARGS	512

/* A SPAWN request, decoded: pointers into the message. */
struct lin_spawn {
	int pgid;
	size_t nr_fds;
	int targets[LIN_MAX_FDS];
	char *argv[LIN_MAX_ARGS + 1];	/* NULL-terminated */
	char *env[LIN_MAX_ARGS + 1];
};

/*
 * Decode the SPAWN message msg (len bytes, its NUL-terminated strings
 * used in place). 0, or -EBADMSG: a short or long message, a pgid
 * below -1, a string
 * not terminated, no argv[0] or one not a path, too many strings or
 * fds, a target fd outside 0-1023 or named twice.
 */
int lin_decode_spawn(char *msg, size_t len, struct lin_spawn *s);

#endif /* CRDBG_CRS_LINEAGE_WIRE_H */
