// SPDX-License-Identifier: GPL-2.0
/*
 * The Fortran bindings (mpif.h and `use mpi`; with Open MPI, `use
 * mpi_f08` too). Open MPI's Fortran routines call PMPI_ directly, so the
 * C wrappers never see a Fortran program's MPI calls; MPICH's call MPI_,
 * but from inside its Fortran library, whose frame would be taken for the
 * user's. Each wrapper here describes its call as its C twin does, with
 * its caller's return address:
 *
 *  - a call with buffers is done through the Fortran profiling entry of
 *    its non-blocking form (pmpi_isend_, pmpi_iallreduce_, ...), which
 *    takes the Fortran arguments as they are (MPI_IN_PLACE, MPI_BOTTOM),
 *    and its request is waited for on the C side (pm_wait);
 *  - a wait, a test or a probe has only handles, converted exactly, and
 *    is its C twin's code (p2p.c).
 *
 * Names are gfortran's (and flang's): lower case, one trailing
 * underscore. Open MPI's mpi_f08 routines call ompi_<name>_f, which the
 * same wrappers are aliased to (the arguments are the same).
 */
#include <stdlib.h>

#include "pmpi.h"

#define RET	__builtin_return_address(0)

#ifndef MPI_F_STATUS_SIZE	/* Open MPI's mpi.h has none: its size */
#define MPI_F_STATUS_SIZE	(sizeof(MPI_Status) / sizeof(MPI_Fint))
#endif

typedef MPI_Fint F;

/*
 * The MPI library's Fortran profiling entries. Weak: libcrdbg-mpi is
 * preloaded into C programs too, which load no Fortran library and never
 * call the wrappers below.
 */
#define FORTRAN_PMPI(name, ...) extern void name(__VA_ARGS__) __attribute__((weak))
FORTRAN_PMPI(pmpi_init_, F *ierr);
FORTRAN_PMPI(pmpi_init_thread_, F *required, F *provided, F *ierr);
FORTRAN_PMPI(pmpi_finalize_, F *ierr);
FORTRAN_PMPI(pmpi_barrier_, F *comm, F *ierr);
FORTRAN_PMPI(pmpi_ibarrier_, F *comm, F *req, F *ierr);
FORTRAN_PMPI(pmpi_bcast_, void *buf, F *count, F *type, F *root, F *comm, F *ierr);
FORTRAN_PMPI(pmpi_ibcast_, void *buf, F *count, F *type, F *root, F *comm, F *req, F *ierr);
FORTRAN_PMPI(pmpi_reduce_, void *sbuf, void *rbuf, F *count, F *type, F *op, F *root,
	     F *comm, F *ierr);
FORTRAN_PMPI(pmpi_ireduce_, void *sbuf, void *rbuf, F *count, F *type, F *op, F *root,
	     F *comm, F *req, F *ierr);
FORTRAN_PMPI(pmpi_allreduce_, void *sbuf, void *rbuf, F *count, F *type, F *op, F *comm,
	     F *ierr);
FORTRAN_PMPI(pmpi_iallreduce_, void *sbuf, void *rbuf, F *count, F *type, F *op, F *comm,
	     F *req, F *ierr);
/* gather, scatter (root) and allgather, alltoall (none) share a shape */
FORTRAN_PMPI(pmpi_gather_, void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype,
	     F *root, F *comm, F *ierr);
FORTRAN_PMPI(pmpi_igather_, void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype,
	     F *root, F *comm, F *req, F *ierr);
FORTRAN_PMPI(pmpi_scatter_, void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype,
	     F *root, F *comm, F *ierr);
FORTRAN_PMPI(pmpi_iscatter_, void *sbuf, F *scount, F *stype, void *rbuf, F *rcount,
	     F *rtype, F *root, F *comm, F *req, F *ierr);
FORTRAN_PMPI(pmpi_allgather_, void *sbuf, F *scount, F *stype, void *rbuf, F *rcount,
	     F *rtype, F *comm, F *ierr);
FORTRAN_PMPI(pmpi_iallgather_, void *sbuf, F *scount, F *stype, void *rbuf, F *rcount,
	     F *rtype, F *comm, F *req, F *ierr);
FORTRAN_PMPI(pmpi_alltoall_, void *sbuf, F *scount, F *stype, void *rbuf, F *rcount,
	     F *rtype, F *comm, F *ierr);
FORTRAN_PMPI(pmpi_ialltoall_, void *sbuf, F *scount, F *stype, void *rbuf, F *rcount,
	     F *rtype, F *comm, F *req, F *ierr);
FORTRAN_PMPI(pmpi_send_, void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr);
FORTRAN_PMPI(pmpi_ssend_, void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr);
FORTRAN_PMPI(pmpi_isend_, void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req,
	     F *ierr);
FORTRAN_PMPI(pmpi_issend_, void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req,
	     F *ierr);
FORTRAN_PMPI(pmpi_recv_, void *buf, F *count, F *type, F *source, F *tag, F *comm,
	     F *status, F *ierr);
FORTRAN_PMPI(pmpi_irecv_, void *buf, F *count, F *type, F *source, F *tag, F *comm, F *req,
	     F *ierr);
FORTRAN_PMPI(pmpi_sendrecv_, void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf,
	     F *rcount, F *rtype, F *source, F *rtag, F *comm, F *status, F *ierr);
FORTRAN_PMPI(pmpi_test_, F *req, F *flag, F *status, F *ierr);
FORTRAN_PMPI(pmpi_testall_, F *count, F *reqs, F *flag, F *statuses, F *ierr);

/* A C status back into a Fortran one, unless that is MPI_STATUS_IGNORE. */
static void status_out(const MPI_Status *s, F *fstatus)
{
	if (fstatus && fstatus != MPI_F_STATUS_IGNORE)
		MPI_Status_c2f(s, fstatus);
}

/*
 * Wait for the Fortran requests freqs[0..n) (n <= 2) as the C wrappers
 * wait; the first one's status into fstatus. The C layer forgets them:
 * MPICH's Fortran routines start them through MPI_Isend and MPI_Irecv,
 * which remember them.
 */
static F wait_fortran(int n, const F *freqs, F *fstatus)
{
	MPI_Request r[2];
	MPI_Status s[2];
	int rc;

	for (int i = 0; i < n; i++)
		r[i] = MPI_Request_f2c(freqs[i]);
	for (int i = 0; i < n; i++)
		pm_req_done(r[i]);
	rc = n == 1 ? pm_wait(r, s) : pm_waitall(n, r, s);
	if (rc == MPI_SUCCESS)
		status_out(&s[0], fstatus);
	return rc;
}

/* A collective started as rc and request req: wait, leave. */
static void coll_end(F *ierr, F req)
{
	if (*ierr == MPI_SUCCESS)
		*ierr = wait_fortran(1, &req, NULL);
	pm_leave();
}

void mpi_init_(F *ierr)
{
	if (!pm_coll_enter("MPI_Init", MPI_COMM_WORLD, RET)) {
		pmpi_init_(ierr);
		return;
	}
	pm_hold();
	pmpi_init_(ierr);
	if (*ierr == MPI_SUCCESS)
		pm_initialized();
	pm_leave();
}

void mpi_init_thread_(F *required, F *provided, F *ierr)
{
	if (!pm_coll_enter("MPI_Init_thread", MPI_COMM_WORLD, RET)) {
		pmpi_init_thread_(required, provided, ierr);
		return;
	}
	pm_hold();
	pmpi_init_thread_(required, provided, ierr);
	if (*ierr == MPI_SUCCESS)
		pm_initialized();
	pm_leave();
}

/* A barrier first, as in the C MPI_Finalize (coll.c). */
void mpi_finalize_(F *ierr)
{
	MPI_Request req;

	if (!pm_coll_enter("MPI_Finalize", MPI_COMM_WORLD, RET)) {
		pmpi_finalize_(ierr);
		return;
	}
	*ierr = PMPI_Ibarrier(MPI_COMM_WORLD, &req);
	if (*ierr == MPI_SUCCESS)
		*ierr = pm_wait(&req, MPI_STATUS_IGNORE);
	if (*ierr == MPI_SUCCESS)
		pmpi_finalize_(ierr);
	pm_leave();
}

void mpi_barrier_(F *comm, F *ierr)
{
	F req;

	if (!pm_coll_enter("MPI_Barrier", MPI_Comm_f2c(*comm), RET)) {
		pmpi_barrier_(comm, ierr);
		return;
	}
	pmpi_ibarrier_(comm, &req, ierr);
	coll_end(ierr, req);
}

void mpi_bcast_(void *buf, F *count, F *type, F *root, F *comm, F *ierr)
{
	F req;

	if (!pm_coll_enter("MPI_Bcast", MPI_Comm_f2c(*comm), RET)) {
		pmpi_bcast_(buf, count, type, root, comm, ierr);
		return;
	}
	pmpi_ibcast_(buf, count, type, root, comm, &req, ierr);
	coll_end(ierr, req);
}

void mpi_reduce_(void *sbuf, void *rbuf, F *count, F *type, F *op, F *root, F *comm,
		 F *ierr)
{
	F req;

	if (!pm_coll_enter("MPI_Reduce", MPI_Comm_f2c(*comm), RET)) {
		pmpi_reduce_(sbuf, rbuf, count, type, op, root, comm, ierr);
		return;
	}
	pmpi_ireduce_(sbuf, rbuf, count, type, op, root, comm, &req, ierr);
	coll_end(ierr, req);
}

void mpi_allreduce_(void *sbuf, void *rbuf, F *count, F *type, F *op, F *comm, F *ierr)
{
	F req;

	if (!pm_coll_enter("MPI_Allreduce", MPI_Comm_f2c(*comm), RET)) {
		pmpi_allreduce_(sbuf, rbuf, count, type, op, comm, ierr);
		return;
	}
	pmpi_iallreduce_(sbuf, rbuf, count, type, op, comm, &req, ierr);
	coll_end(ierr, req);
}

void mpi_gather_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype, F *root,
		 F *comm, F *ierr)
{
	F req;

	if (!pm_coll_enter("MPI_Gather", MPI_Comm_f2c(*comm), RET)) {
		pmpi_gather_(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, ierr);
		return;
	}
	pmpi_igather_(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &req, ierr);
	coll_end(ierr, req);
}

void mpi_scatter_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype,
		  F *root, F *comm, F *ierr)
{
	F req;

	if (!pm_coll_enter("MPI_Scatter", MPI_Comm_f2c(*comm), RET)) {
		pmpi_scatter_(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, ierr);
		return;
	}
	pmpi_iscatter_(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &req, ierr);
	coll_end(ierr, req);
}

void mpi_allgather_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype,
		    F *comm, F *ierr)
{
	F req;

	if (!pm_coll_enter("MPI_Allgather", MPI_Comm_f2c(*comm), RET)) {
		pmpi_allgather_(sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr);
		return;
	}
	pmpi_iallgather_(sbuf, scount, stype, rbuf, rcount, rtype, comm, &req, ierr);
	coll_end(ierr, req);
}

void mpi_alltoall_(void *sbuf, F *scount, F *stype, void *rbuf, F *rcount, F *rtype,
		   F *comm, F *ierr)
{
	F req;

	if (!pm_coll_enter("MPI_Alltoall", MPI_Comm_f2c(*comm), RET)) {
		pmpi_alltoall_(sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr);
		return;
	}
	pmpi_ialltoall_(sbuf, scount, stype, rbuf, rcount, rtype, comm, &req, ierr);
	coll_end(ierr, req);
}

/* Start a send; synchronous when asked or in debug mode (p2p.c). */
static void isend(bool sync, void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req,
		  F *ierr)
{
	if (sync || pm_sync_sends())
		pmpi_issend_(buf, count, type, dest, tag, comm, req, ierr);
	else
		pmpi_isend_(buf, count, type, dest, tag, comm, req, ierr);
}

static void blocking_send(const char *name, bool sync, void *buf, F *count, F *type,
			  F *dest, F *tag, F *comm, F *ierr, void *ret)
{
	F req;

	if (!pm_enter(name, CRDBG_MPI_P2P, ret)) {
		if (sync)
			pmpi_ssend_(buf, count, type, dest, tag, comm, ierr);
		else
			pmpi_send_(buf, count, type, dest, tag, comm, ierr);
		return;
	}
	pm_need(CRDBG_NEED_SEND, *dest, *tag, MPI_Comm_f2c(*comm));
	pm_publish();
	isend(sync, buf, count, type, dest, tag, comm, &req, ierr);
	if (*ierr == MPI_SUCCESS)
		*ierr = wait_fortran(1, &req, NULL);
	pm_leave();
}

void mpi_send_(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr)
{
	blocking_send("MPI_Send", false, buf, count, type, dest, tag, comm, ierr, RET);
}

void mpi_ssend_(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr)
{
	blocking_send("MPI_Ssend", true, buf, count, type, dest, tag, comm, ierr, RET);
}

void mpi_recv_(void *buf, F *count, F *type, F *source, F *tag, F *comm, F *status,
	       F *ierr)
{
	F req;

	if (!pm_enter("MPI_Recv", CRDBG_MPI_P2P, RET)) {
		pmpi_recv_(buf, count, type, source, tag, comm, status, ierr);
		return;
	}
	pm_need(CRDBG_NEED_RECV, *source, *tag, MPI_Comm_f2c(*comm));
	pm_publish();
	pmpi_irecv_(buf, count, type, source, tag, comm, &req, ierr);
	if (*ierr == MPI_SUCCESS)
		*ierr = wait_fortran(1, &req, status);
	pm_leave();
}

void mpi_sendrecv_(void *sbuf, F *scount, F *stype, F *dest, F *stag, void *rbuf,
		   F *rcount, F *rtype, F *source, F *rtag, F *comm, F *status, F *ierr)
{
	MPI_Comm c = MPI_Comm_f2c(*comm);
	F req[2];

	if (!pm_enter("MPI_Sendrecv", CRDBG_MPI_P2P, RET)) {
		pmpi_sendrecv_(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source,
			       rtag, comm, status, ierr);
		return;
	}
	pm_need(CRDBG_NEED_RECV, *source, *rtag, c);
	pm_need(CRDBG_NEED_SEND, *dest, *stag, c);
	pm_publish();
	pmpi_irecv_(rbuf, rcount, rtype, source, rtag, comm, &req[0], ierr);
	if (*ierr == MPI_SUCCESS) {
		isend(false, sbuf, scount, stype, dest, stag, comm, &req[1], ierr);
		if (*ierr == MPI_SUCCESS)
			*ierr = wait_fortran(2, req, status);
		else
			wait_fortran(1, req, NULL);	/* the receive, started */
	}
	pm_leave();
}

void mpi_probe_(F *source, F *tag, F *comm, F *status, F *ierr)
{
	MPI_Status s;

	*ierr = pm_probe_call(*source, *tag, MPI_Comm_f2c(*comm), &s, RET);
	if (*ierr == MPI_SUCCESS)
		status_out(&s, status);
}

/* A started request of the C layer's table (MPICH's may be there already). */
static void remember(F req, int kind, F peer, F tag, F comm)
{
	MPI_Request r = MPI_Request_f2c(req);

	pm_req_done(r);
	pm_req_add(r, kind, pm_world_rank(MPI_Comm_f2c(comm), peer), tag);
}

void mpi_isend_(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr)
{
	isend(false, buf, count, type, dest, tag, comm, req, ierr);
	if (*ierr == MPI_SUCCESS)
		remember(*req, CRDBG_NEED_SEND, *dest, *tag, *comm);
}

void mpi_issend_(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *req, F *ierr)
{
	isend(true, buf, count, type, dest, tag, comm, req, ierr);
	if (*ierr == MPI_SUCCESS)
		remember(*req, CRDBG_NEED_SEND, *dest, *tag, *comm);
}

void mpi_irecv_(void *buf, F *count, F *type, F *source, F *tag, F *comm, F *req, F *ierr)
{
	pmpi_irecv_(buf, count, type, source, tag, comm, req, ierr);
	if (*ierr == MPI_SUCCESS)
		remember(*req, CRDBG_NEED_RECV, *source, *tag, *comm);
}

void mpi_wait_(F *req, F *status, F *ierr)
{
	MPI_Request r = MPI_Request_f2c(*req);
	MPI_Status s;

	*ierr = pm_wait_call(&r, &s, RET);
	if (*ierr == MPI_SUCCESS) {
		*req = MPI_Request_c2f(r);
		status_out(&s, status);
	}
}

/*
 * The C handles of Fortran requests reqs[0..n): in stack (of
 * CRDBG_MPI_NEEDS_MAX) or, for more, malloc'd; NULL if out of memory.
 */
static MPI_Request *c_requests(int n, const F *reqs, MPI_Request *stack)
{
	MPI_Request *r = n <= CRDBG_MPI_NEEDS_MAX ? stack : malloc(n * sizeof(*r));

	for (int i = 0; r && i < n; i++)
		r[i] = MPI_Request_f2c(reqs[i]);
	return r;
}

void mpi_waitall_(F *count, F *reqs, F *statuses, F *ierr)
{
	MPI_Request stack[CRDBG_MPI_NEEDS_MAX], *r;
	MPI_Status *s;
	int n = *count > 0 ? *count : 0;

	r = c_requests(n, reqs, stack);
	s = malloc((n ? n : 1) * sizeof(*s));
	*ierr = r && s ? pm_waitall_call(n, r, s, RET) : MPI_ERR_NO_MEM;
	for (int i = 0; *ierr == MPI_SUCCESS && i < n; i++) {
		reqs[i] = MPI_Request_c2f(r[i]);
		if (statuses != MPI_F_STATUSES_IGNORE)
			MPI_Status_c2f(&s[i], statuses + i * MPI_F_STATUS_SIZE);
	}
	if (r != stack)
		free(r);
	free(s);
}

/* Fortran's index counts from 1; MPI_UNDEFINED stays. */
void mpi_waitany_(F *count, F *reqs, F *index, F *status, F *ierr)
{
	MPI_Request stack[CRDBG_MPI_NEEDS_MAX], *r;
	MPI_Status s;
	int n = *count > 0 ? *count : 0, i = MPI_UNDEFINED;

	r = c_requests(n, reqs, stack);
	*ierr = r ? pm_waitany_call(n, r, &i, &s, RET) : MPI_ERR_NO_MEM;
	if (*ierr == MPI_SUCCESS) {
		*index = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
		if (i != MPI_UNDEFINED) {
			reqs[i] = MPI_Request_c2f(r[i]);
			status_out(&s, status);
		}
	}
	if (r != stack)
		free(r);
}

void mpi_test_(F *req, F *flag, F *status, F *ierr)
{
	MPI_Request was = MPI_Request_f2c(*req);

	pmpi_test_(req, flag, status, ierr);
	if (*ierr == MPI_SUCCESS && *flag)
		pm_req_done(was);
}

void mpi_testall_(F *count, F *reqs, F *flag, F *statuses, F *ierr)
{
	MPI_Request was[CRDBG_MPI_NEEDS_MAX];
	int n = *count;

	if (n < 0 || n > CRDBG_MPI_NEEDS_MAX) {
		pmpi_testall_(count, reqs, flag, statuses, ierr);
		return;
	}
	for (int i = 0; i < n; i++)
		was[i] = MPI_Request_f2c(reqs[i]);
	pmpi_testall_(count, reqs, flag, statuses, ierr);
	for (int i = 0; *ierr == MPI_SUCCESS && *flag && i < n; i++)
		pm_req_done(was[i]);
}

#ifdef OPEN_MPI
/* Open MPI's mpi_f08 routines call these, with mpif.h's arguments. */
#define F08(name) __typeof__(mpi_##name##_) ompi_##name##_f __attribute__((alias("mpi_" #name "_")))
F08(init);
F08(init_thread);
F08(finalize);
F08(barrier);
F08(bcast);
F08(reduce);
F08(allreduce);
F08(gather);
F08(scatter);
F08(allgather);
F08(alltoall);
F08(send);
F08(ssend);
F08(recv);
F08(sendrecv);
F08(probe);
F08(isend);
F08(issend);
F08(irecv);
F08(wait);
F08(waitall);
F08(waitany);
F08(test);
F08(testall);
#endif
