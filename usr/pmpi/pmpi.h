/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libcrdbg-mpi's insides: the state it publishes (crdbg/mpi-state.h)
 * written by state.c, and the MPI wrappers (p2p.c, coll.c; fortran.c for
 * the Fortran bindings) that describe each call there before doing it
 * through PMPI_ and its test loop.
 */
#ifndef CRDBG_PMPI_H
#define CRDBG_PMPI_H

#include <mpi.h>
#include <stdbool.h>

#include <crdbg/mpi-state.h>

/*
 * Start describing a call; false when the call is nested in another one
 * (MPI calling itself), which is then done as it is, without pm_leave().
 */
bool pm_enter(const char *call, enum crdbg_mpi_kind kind, void *ret);
/* Add what the call waits for (peer as a rank of comm). */
void pm_need(int kind, int peer, int tag, MPI_Comm comm);
/* The call is a collective on comm: its members, its index there. */
void pm_coll(MPI_Comm comm);
/* pm_enter() a collective on comm, describe it and publish. */
bool pm_coll_enter(const char *call, MPI_Comm comm, void *ret);
/* Waits for any one of its needs, not all (MPI_Waitany). */
void pm_needs_any(void);
/* Done describing: readers may look. */
void pm_publish(void);
/* One progress test done and nothing completed (a reader counts them). */
void pm_polled(void);
/* The call returned. */
void pm_leave(void);

/* Sends made synchronous (the default; CRDBG_MPI_SYNC=0 turns it off). */
bool pm_sync_sends(void);
/* World rank of rank r of comm; CRDBG_MPI_ANY / CRDBG_MPI_NONE kept. */
int pm_world_rank(MPI_Comm comm, int r);
/* MPI_Init returned: ranks are known. */
void pm_initialized(void);
/*
 * With CRDBG_MPI_HOLD set, wait in MPI_Init (described) for a debugger:
 * say "crdbg-mpi: hold rank R of N pid P exe PATH" on stderr, then wait
 * until crdbg_mpi_gate is set.
 */
void pm_hold(void);

/* Non-blocking requests, remembered until completed. */
void pm_req_add(MPI_Request req, int kind, int peer, int tag);
void pm_req_done(MPI_Request req);
/* The current call waits for req too (if it is one of ours). */
void pm_need_req(MPI_Request req);

/*
 * Wait until req completes, testing it and counting the tests (readers
 * see the call progress, or not).
 */
int pm_wait(MPI_Request *req, MPI_Status *status);
int pm_waitall(int n, MPI_Request *reqs, MPI_Status *statuses);

/*
 * MPI_Wait, MPI_Waitall, MPI_Waitany and MPI_Probe whole (p2p.c), for a
 * caller whose return address is ret: the C wrappers and the Fortran
 * ones, whose arguments these calls take converted exactly.
 */
int pm_wait_call(MPI_Request *req, MPI_Status *status, void *ret);
int pm_waitall_call(int n, MPI_Request reqs[], MPI_Status statuses[], void *ret);
int pm_waitany_call(int n, MPI_Request reqs[], int *index, MPI_Status *status, void *ret);
int pm_probe_call(int source, int tag, MPI_Comm comm, MPI_Status *status, void *ret);

#endif /* CRDBG_PMPI_H */
