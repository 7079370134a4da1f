// SPDX-License-Identifier: GPL-2.0
/*
 * Collectives, MPI_Init and MPI_Finalize. A blocking collective is its
 * MPI-3 non-blocking form and a test loop; the state names the
 * communicator's members and which of its collectives this is, so that
 * the debugger can tell who has entered it. MPI_Finalize starts with a
 * barrier on MPI_COMM_WORLD: it is a collective for the debugger's model
 * whether or not the implementation synchronises in it.
 */
#include "pmpi.h"

#define RET	__builtin_return_address(0)

static int coll_end(int rc, MPI_Request *req)
{
	if (rc == MPI_SUCCESS)
		rc = pm_wait(req, MPI_STATUS_IGNORE);
	pm_leave();
	return rc;
}

static int init_done(int rc)
{
	if (rc == MPI_SUCCESS)
		pm_initialized();
	pm_leave();
	return rc;
}

int MPI_Init(int *argc, char ***argv)
{
	if (!pm_coll_enter("MPI_Init", MPI_COMM_WORLD, RET))
		return PMPI_Init(argc, argv);
	pm_hold();
	return init_done(PMPI_Init(argc, argv));
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	if (!pm_coll_enter("MPI_Init_thread", MPI_COMM_WORLD, RET))
		return PMPI_Init_thread(argc, argv, required, provided);
	pm_hold();
	return init_done(PMPI_Init_thread(argc, argv, required, provided));
}

int MPI_Finalize(void)
{
	MPI_Request req;
	int rc;

	if (!pm_coll_enter("MPI_Finalize", MPI_COMM_WORLD, RET))
		return PMPI_Finalize();
	rc = PMPI_Ibarrier(MPI_COMM_WORLD, &req);
	if (rc == MPI_SUCCESS)
		rc = pm_wait(&req, MPI_STATUS_IGNORE);
	if (rc == MPI_SUCCESS)
		rc = PMPI_Finalize();
	pm_leave();
	return rc;
}

int MPI_Barrier(MPI_Comm comm)
{
	MPI_Request req;

	if (!pm_coll_enter("MPI_Barrier", comm, RET))
		return PMPI_Barrier(comm);
	return coll_end(PMPI_Ibarrier(comm, &req), &req);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	MPI_Request req;

	if (!pm_coll_enter("MPI_Bcast", comm, RET))
		return PMPI_Bcast(buf, count, type, root, comm);
	return coll_end(PMPI_Ibcast(buf, count, type, root, comm, &req), &req);
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
	       MPI_Op op, int root, MPI_Comm comm)
{
	MPI_Request req;

	if (!pm_coll_enter("MPI_Reduce", comm, RET))
		return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
	return coll_end(PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm,
				     &req), &req);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
		  MPI_Op op, MPI_Comm comm)
{
	MPI_Request req;

	if (!pm_coll_enter("MPI_Allreduce", comm, RET))
		return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
	return coll_end(PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, &req),
			&req);
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
	       int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	MPI_Request req;

	if (!pm_coll_enter("MPI_Gather", comm, RET))
		return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root,
				   comm);
	return coll_end(PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype,
				     root, comm, &req), &req);
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
		int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	MPI_Request req;

	if (!pm_coll_enter("MPI_Scatter", comm, RET))
		return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root,
				    comm);
	return coll_end(PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype,
				      root, comm, &req), &req);
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
		  int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	MPI_Request req;

	if (!pm_coll_enter("MPI_Allgather", comm, RET))
		return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
	return coll_end(PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype,
					comm, &req), &req);
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
		 int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	MPI_Request req;

	if (!pm_coll_enter("MPI_Alltoall", comm, RET))
		return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
	return coll_end(PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype,
				       comm, &req), &req);
}
