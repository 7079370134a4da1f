// SPDX-License-Identifier: GPL-2.0
/*
 * Point-to-point calls and waits. Every blocking call is made of its
 * non-blocking form and a test loop (state.c), so that the state names
 * what the rank waits for and shows whether it still makes progress.
 * In debug mode (the default) standard sends are synchronous: a send
 * completes only with its receive, as the debugger's model assumes.
 */
#include "pmpi.h"

#define RET	__builtin_return_address(0)

static int isend(const void *buf, int count, MPI_Datatype type, int dest,
		 int tag, MPI_Comm comm, MPI_Request *req, bool sync)
{
	if (sync || pm_sync_sends())
		return PMPI_Issend(buf, count, type, dest, tag, comm, req);
	return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

static int blocking_send(const char *name, bool sync, const void *buf,
			 int count, MPI_Datatype type, int dest, int tag,
			 MPI_Comm comm, void *ret)
{
	MPI_Request req;
	int rc;

	if (!pm_enter(name, CRDBG_MPI_P2P, ret))
		return sync ? PMPI_Ssend(buf, count, type, dest, tag, comm) :
			      PMPI_Send(buf, count, type, dest, tag, comm);
	pm_need(CRDBG_NEED_SEND, dest, tag, comm);
	pm_publish();
	rc = isend(buf, count, type, dest, tag, comm, &req, sync);
	if (rc == MPI_SUCCESS)
		rc = pm_wait(&req, MPI_STATUS_IGNORE);
	pm_leave();
	return rc;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag,
	     MPI_Comm comm)
{
	return blocking_send("MPI_Send", false, buf, count, type, dest, tag,
			     comm, RET);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
	      MPI_Comm comm)
{
	return blocking_send("MPI_Ssend", true, buf, count, type, dest, tag,
			     comm, RET);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
	     MPI_Comm comm, MPI_Status *status)
{
	MPI_Request req;
	int rc;

	if (!pm_enter("MPI_Recv", CRDBG_MPI_P2P, RET))
		return PMPI_Recv(buf, count, type, source, tag, comm, status);
	pm_need(CRDBG_NEED_RECV, source, tag, comm);
	pm_publish();
	rc = PMPI_Irecv(buf, count, type, source, tag, comm, &req);
	if (rc == MPI_SUCCESS)
		rc = pm_wait(&req, status);
	pm_leave();
	return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
		 int stag, void *rbuf, int rcount, MPI_Datatype rtype,
		 int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Request r[2];
	MPI_Status st[2];
	int rc;

	if (!pm_enter("MPI_Sendrecv", CRDBG_MPI_P2P, RET))
		return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf,
				     rcount, rtype, source, rtag, comm, status);
	pm_need(CRDBG_NEED_RECV, source, rtag, comm);
	pm_need(CRDBG_NEED_SEND, dest, stag, comm);
	pm_publish();
	rc = PMPI_Irecv(rbuf, rcount, rtype, source, rtag, comm, &r[0]);
	if (rc == MPI_SUCCESS) {
		int src = isend(sbuf, scount, stype, dest, stag, comm, &r[1], false);

		if (src != MPI_SUCCESS)
			r[1] = MPI_REQUEST_NULL;
		rc = pm_waitall(2, r, st);
		if (src != MPI_SUCCESS)
			rc = src;
	}
	if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE)
		*status = st[0];
	pm_leave();
	return rc;
}

int pm_probe_call(int source, int tag, MPI_Comm comm, MPI_Status *status, void *ret)
{
	int flag = 0, rc;

	if (!pm_enter("MPI_Probe", CRDBG_MPI_P2P, ret))
		return PMPI_Probe(source, tag, comm, status);
	pm_need(CRDBG_NEED_RECV, source, tag, comm);
	pm_publish();
	while ((rc = PMPI_Iprobe(source, tag, comm, &flag, status)) == MPI_SUCCESS &&
	       !flag)
		pm_polled();
	pm_leave();
	return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	return pm_probe_call(source, tag, comm, status, RET);
}

/* A non-blocking call never waits: remember its request for the waits. */
static void remember(MPI_Request req, int kind, int peer, int tag, MPI_Comm comm)
{
	pm_req_add(req, kind, pm_world_rank(comm, peer), tag);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
	      MPI_Comm comm, MPI_Request *req)
{
	int rc = isend(buf, count, type, dest, tag, comm, req, false);

	if (rc == MPI_SUCCESS)
		remember(*req, CRDBG_NEED_SEND, dest, tag, comm);
	return rc;
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
	       MPI_Comm comm, MPI_Request *req)
{
	int rc = PMPI_Issend(buf, count, type, dest, tag, comm, req);

	if (rc == MPI_SUCCESS)
		remember(*req, CRDBG_NEED_SEND, dest, tag, comm);
	return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag,
	      MPI_Comm comm, MPI_Request *req)
{
	int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);

	if (rc == MPI_SUCCESS)
		remember(*req, CRDBG_NEED_RECV, source, tag, comm);
	return rc;
}

int pm_wait_call(MPI_Request *req, MPI_Status *status, void *ret)
{
	MPI_Request was = *req;
	int rc;

	if (!pm_enter("MPI_Wait", CRDBG_MPI_WAIT, ret))
		return PMPI_Wait(req, status);
	pm_need_req(was);
	pm_publish();
	rc = pm_wait(req, status);
	if (rc == MPI_SUCCESS)
		pm_req_done(was);
	pm_leave();
	return rc;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	return pm_wait_call(req, status, RET);
}

int pm_waitall_call(int n, MPI_Request reqs[], MPI_Status statuses[], void *ret)
{
	MPI_Request was[CRDBG_MPI_NEEDS_MAX];
	int rc;

	if (n > CRDBG_MPI_NEEDS_MAX || !pm_enter("MPI_Waitall", CRDBG_MPI_WAIT, ret))
		return PMPI_Waitall(n, reqs, statuses);
	for (int i = 0; i < n; i++) {
		was[i] = reqs[i];
		pm_need_req(reqs[i]);
	}
	pm_publish();
	rc = pm_waitall(n, reqs, statuses);
	for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
		pm_req_done(was[i]);
	pm_leave();
	return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
	return pm_waitall_call(n, reqs, statuses, RET);
}

int pm_waitany_call(int n, MPI_Request reqs[], int *index, MPI_Status *status, void *ret)
{
	int flag = 0, rc;

	if (!pm_enter("MPI_Waitany", CRDBG_MPI_WAIT, ret))
		return PMPI_Waitany(n, reqs, index, status);
	for (int i = 0; i < n; i++)
		pm_need_req(reqs[i]);
	pm_needs_any();
	pm_publish();
	for (;;) {
		MPI_Request was[CRDBG_MPI_NEEDS_MAX];
		int k = n < CRDBG_MPI_NEEDS_MAX ? n : CRDBG_MPI_NEEDS_MAX;

		for (int i = 0; i < k; i++)
			was[i] = reqs[i];
		rc = PMPI_Testany(n, reqs, index, &flag, status);
		if (rc != MPI_SUCCESS || flag) {
			if (flag && *index != MPI_UNDEFINED && *index < k)
				pm_req_done(was[*index]);
			break;
		}
		pm_polled();
	}
	pm_leave();
	return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
	return pm_waitany_call(n, reqs, index, status, RET);
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	MPI_Request was = *req;
	int rc = PMPI_Test(req, flag, status);

	if (rc == MPI_SUCCESS && *flag)
		pm_req_done(was);
	return rc;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	MPI_Request was[CRDBG_MPI_NEEDS_MAX];
	int rc;

	if (n > CRDBG_MPI_NEEDS_MAX)
		return PMPI_Testall(n, reqs, flag, statuses);
	for (int i = 0; i < n; i++)
		was[i] = reqs[i];
	rc = PMPI_Testall(n, reqs, flag, statuses);
	for (int i = 0; rc == MPI_SUCCESS && *flag && i < n; i++)
		pm_req_done(was[i]);
	return rc;
}
