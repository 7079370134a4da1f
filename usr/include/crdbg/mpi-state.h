/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The MPI state of a rank: what libcrdbg-mpi (usr/pmpi/, preloaded into
 * an MPI program, interposing on the standard's PMPI_ names) records in
 * the global crdbg_mpi_state for the debugger. One writer (the rank's
 * MPI-calling thread), any number of readers: gdb when the rank is
 * stopped, the crdbg-server through /proc/PID/mem while it runs. A
 * reader copies the whole struct and keeps the copy only if seq was even
 * and unchanged across the copy (a seqlock).
 *
 * Plain data of fixed size, no pointers, so that a copy of the bytes is
 * the state: the console decodes the server's hex copy with this header.
 *
 * Peers are ranks of MPI_COMM_WORLD (which crdbg's rank ids are), whatever
 * communicator the call named.
 */
#ifndef CRDBG_MPI_STATE_H
#define CRDBG_MPI_STATE_H

#include <stdint.h>

#define CRDBG_MPI_MAGIC		0x4d504943u	/* "CIPM" */
#define CRDBG_MPI_VERSION	1
#define CRDBG_MPI_SYMBOL	"crdbg_mpi_state"
#define CRDBG_MPI_CALL_MAX	24	/* "MPI_Reduce_scatter_block" fits */
#define CRDBG_MPI_MEMBERS_MAX	64	/* members listed of a collective's comm */
#define CRDBG_MPI_NEEDS_MAX	16	/* requests a wait lists */
#define CRDBG_MPI_COMMS_MAX	16	/* communicators whose collectives are counted */

#define CRDBG_MPI_ANY		(-1)	/* MPI_ANY_SOURCE, MPI_ANY_TAG */
#define CRDBG_MPI_NONE		(-2)	/* no peer (MPI_PROC_NULL, a collective) */

enum crdbg_mpi_kind {
	CRDBG_MPI_OUT,		/* not in an MPI call */
	CRDBG_MPI_LOCAL,	/* a call that never waits for another rank */
	CRDBG_MPI_P2P,		/* blocking send, receive, sendrecv, probe */
	CRDBG_MPI_WAIT,		/* waiting for non-blocking requests */
	CRDBG_MPI_COLL,		/* a collective (MPI_Init and MPI_Finalize too) */
};

enum crdbg_mpi_need_kind {
	CRDBG_NEED_SEND = 1,	/* a message to peer (synchronous in debug mode) */
	CRDBG_NEED_RECV = 2,	/* a message from peer (CRDBG_MPI_ANY: anyone) */
};

/* One thing a blocked call waits for that another rank must do. */
struct crdbg_mpi_need {
	int32_t kind;		/* enum crdbg_mpi_need_kind */
	int32_t peer;		/* world rank, CRDBG_MPI_ANY */
	int32_t tag;		/* CRDBG_MPI_ANY for MPI_ANY_TAG */
	int32_t pad;
};

/* Collectives entered on one communicator (its members' hash). */
struct crdbg_mpi_comm_count {
	uint64_t key;
	uint64_t count;
};

struct crdbg_mpi_state {
	uint32_t magic;		/* CRDBG_MPI_MAGIC once the library is loaded */
	uint32_t version;	/* CRDBG_MPI_VERSION */
	uint32_t seq;		/* odd while being written */
	int32_t world_rank;	/* -1 before MPI_Init returns */
	int32_t world_size;
	int32_t sync_sends;	/* 1: MPI_Send is MPI_Ssend, MPI_Isend MPI_Issend */
	int32_t kind;		/* enum crdbg_mpi_kind */
	int32_t nneeds;		/* entries of needs[] in use */
	char call[CRDBG_MPI_CALL_MAX];	/* "MPI_Recv"; "" when out */
	uint64_t ret;		/* return address into the caller: the call site */
	uint64_t ncalls;	/* MPI calls entered: names the current one */
	uint64_t polls;		/* progress tests done inside the current call */
	int32_t peer;		/* P2P: the first need's peer, for display */
	int32_t tag;
	int32_t needs_any;	/* 1: one need met completes it (MPI_Waitany) */
	int32_t pollable;	/* 1: polls counts the call's progress tests */
	struct crdbg_mpi_need needs[CRDBG_MPI_NEEDS_MAX];
	/* COLL: the communicator, and which of its collectives this is. */
	uint64_t coll_key;
	uint64_t coll_index;	/* 1 for the first collective on the comm */
	int32_t nmembers;	/* its size; members[] lists the first ones */
	int32_t members[CRDBG_MPI_MEMBERS_MAX];
	int32_t ncomms;
	struct crdbg_mpi_comm_count comms[CRDBG_MPI_COMMS_MAX];
};

#endif /* CRDBG_MPI_STATE_H */
