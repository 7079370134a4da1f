// SPDX-License-Identifier: GPL-2.0
/*
 * The state libcrdbg-mpi publishes (crdbg/mpi-state.h): written under a
 * seqlock by the rank's MPI-calling thread, read by gdb or through
 * /proc/PID/mem by crdbg while the rank runs. Also the table of the
 * rank's outstanding non-blocking requests, so that a wait can say what
 * it waits for, and the test loops every blocking call is made of.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmpi.h"

#define PM_REQS_MAX	256
#define PM_SPIN_POLLS	200	/* tests before the loop starts sleeping */
#define PM_NAP_NS	100000

__attribute__((visibility("default")))
struct crdbg_mpi_state crdbg_mpi_state = {
	.magic = CRDBG_MPI_MAGIC,
	.version = CRDBG_MPI_VERSION,
	.world_rank = -1,
};

/* Set by the debugger to let a rank held in MPI_Init go (pm_hold). */
__attribute__((visibility("default")))
volatile int crdbg_mpi_gate;

static struct crdbg_mpi_state *const st = &crdbg_mpi_state;
static bool in_call;		/* a described call is in progress */
static int sync_mode = -1;

struct pm_req {
	MPI_Request req;
	struct crdbg_mpi_need need;
};
static struct pm_req reqs[PM_REQS_MAX];
static int nreqs;

static void write_begin(void)
{
	__atomic_store_n(&st->seq, st->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void write_end(void)
{
	__atomic_store_n(&st->seq, st->seq + 1, __ATOMIC_RELEASE);
}

bool pm_sync_sends(void)
{
	if (sync_mode < 0) {
		const char *e = getenv("CRDBG_MPI_SYNC");

		sync_mode = !(e && !strcmp(e, "0"));
	}
	return sync_mode;
}

bool pm_enter(const char *call, enum crdbg_mpi_kind kind, void *ret)
{
	/*
	 * A call made inside a described one (MPICH's Fortran routines call
	 * MPI_) is done as it is, the outer one's description kept; it
	 * counts for nothing, so that the outer one's pm_leave() ends it.
	 */
	if (in_call)
		return false;
	in_call = true;
	write_begin();
	st->sync_sends = pm_sync_sends();
	st->kind = kind;
	strncpy(st->call, call, sizeof(st->call) - 1);
	st->ret = (uint64_t)(uintptr_t)ret;
	st->ncalls++;
	st->polls = 0;
	st->nneeds = 0;
	st->needs_any = 0;
	st->pollable = 0;
	st->peer = CRDBG_MPI_NONE;
	st->tag = CRDBG_MPI_NONE;
	st->coll_key = 0;
	st->coll_index = 0;
	st->nmembers = 0;
	return true;
}

void pm_needs_any(void)
{
	st->needs_any = 1;
}

void pm_publish(void)
{
	write_end();
}

void pm_leave(void)
{
	in_call = false;
	write_begin();
	st->kind = CRDBG_MPI_OUT;
	st->call[0] = 0;
	st->nneeds = 0;
	write_end();
}

void pm_polled(void)
{
	uint64_t n = st->polls + 1;

	st->pollable = 1;
	__atomic_store_n(&st->polls, n, __ATOMIC_RELEASE);
	if (n > PM_SPIN_POLLS) {
		struct timespec ts = { 0, PM_NAP_NS };

		nanosleep(&ts, NULL);
	}
}

int pm_world_rank(MPI_Comm comm, int r)
{
	MPI_Group g, world;
	int w = CRDBG_MPI_NONE;

	if (r == MPI_ANY_SOURCE)
		return CRDBG_MPI_ANY;
	if (r == MPI_PROC_NULL || r < 0)
		return CRDBG_MPI_NONE;
	if (comm == MPI_COMM_WORLD)
		return r;
	if (PMPI_Comm_group(comm, &g) != MPI_SUCCESS)
		return CRDBG_MPI_NONE;
	PMPI_Comm_group(MPI_COMM_WORLD, &world);
	if (PMPI_Group_translate_ranks(g, 1, &r, world, &w) != MPI_SUCCESS ||
	    w == MPI_UNDEFINED)
		w = CRDBG_MPI_NONE;
	PMPI_Group_free(&g);
	PMPI_Group_free(&world);
	return w;
}

void pm_need(int kind, int peer, int tag, MPI_Comm comm)
{
	struct crdbg_mpi_need *n;
	int w = pm_world_rank(comm, peer);

	if (w == CRDBG_MPI_NONE || st->nneeds == CRDBG_MPI_NEEDS_MAX)
		return;
	n = &st->needs[st->nneeds++];
	n->kind = kind;
	n->peer = w;
	n->tag = tag == MPI_ANY_TAG ? CRDBG_MPI_ANY : tag;
	if (st->nneeds == 1) {
		st->peer = n->peer;
		st->tag = n->tag;
	}
}

/* FNV-1a over the members' world ranks: the same on every member. */
static uint64_t members_key(const int *w, int n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int i = 0; i < n; i++) {
		h ^= (uint32_t)w[i];
		h *= 0x100000001b3ull;
	}
	return h | 1;	/* 0 is MPI_COMM_WORLD's */
}

static uint64_t comm_members(MPI_Comm comm)
{
	int size = 0, *r, *w;
	MPI_Group g, world;
	uint64_t key;

	if (comm == MPI_COMM_WORLD || st->world_rank < 0) {
		st->nmembers = st->world_size;
		for (int i = 0; i < st->world_size && i < CRDBG_MPI_MEMBERS_MAX; i++)
			st->members[i] = i;
		return 0;
	}
	PMPI_Comm_size(comm, &size);
	r = malloc(size * sizeof(*r));
	w = malloc(size * sizeof(*w));
	if (!r || !w || PMPI_Comm_group(comm, &g) != MPI_SUCCESS) {
		free(r);
		free(w);
		return 0;
	}
	PMPI_Comm_group(MPI_COMM_WORLD, &world);
	for (int i = 0; i < size; i++)
		r[i] = i;
	PMPI_Group_translate_ranks(g, size, r, world, w);
	PMPI_Group_free(&g);
	PMPI_Group_free(&world);
	st->nmembers = size;
	for (int i = 0; i < size && i < CRDBG_MPI_MEMBERS_MAX; i++)
		st->members[i] = w[i];
	key = members_key(w, size);
	free(r);
	free(w);
	return key;
}

void pm_coll(MPI_Comm comm)
{
	uint64_t key = comm_members(comm);
	int i;

	for (i = 0; i < st->ncomms; i++)
		if (st->comms[i].key == key)
			break;
	if (i == st->ncomms && i < CRDBG_MPI_COMMS_MAX) {
		st->comms[i].key = key;
		st->comms[i].count = 0;
		st->ncomms++;
	}
	st->coll_key = key;
	if (i < st->ncomms)
		st->coll_index = ++st->comms[i].count;
}

bool pm_coll_enter(const char *call, MPI_Comm comm, void *ret)
{
	if (!pm_enter(call, CRDBG_MPI_COLL, ret))
		return false;
	pm_coll(comm);
	pm_publish();
	return true;
}

void pm_initialized(void)
{
	int r = -1, n = 0;

	PMPI_Comm_rank(MPI_COMM_WORLD, &r);
	PMPI_Comm_size(MPI_COMM_WORLD, &n);
	write_begin();
	st->world_rank = r;
	st->world_size = n;
	write_end();
}

/* The launcher's name of this rank and of the job's size. */
static const char *env_of(const char *const *names)
{
	for (; *names; names++)
		if (getenv(*names))
			return getenv(*names);
	return "?";
}

void pm_hold(void)
{
	static const char *const rank[] = { "PMI_RANK", "OMPI_COMM_WORLD_RANK",
					    "PMIX_RANK", NULL };
	static const char *const size[] = { "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", NULL };
	struct timespec ts = { 0, 10000000 };
	char exe[PATH_MAX];
	ssize_t n;

	if (!getenv("CRDBG_MPI_HOLD"))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	fprintf(stderr, "crdbg-mpi: hold rank %s of %s pid %d exe %s\n",
		env_of(rank), env_of(size), (int)getpid(), exe);
	fflush(stderr);
	while (!crdbg_mpi_gate)
		nanosleep(&ts, NULL);
}

void pm_req_add(MPI_Request req, int kind, int peer, int tag)
{
	struct pm_req *p;

	if (nreqs == PM_REQS_MAX || req == MPI_REQUEST_NULL)
		return;
	p = &reqs[nreqs++];
	p->req = req;
	p->need.kind = kind;
	p->need.peer = peer;
	p->need.tag = tag == MPI_ANY_TAG ? CRDBG_MPI_ANY : tag;
}

void pm_req_done(MPI_Request req)
{
	for (int i = 0; i < nreqs; i++) {
		if (!memcmp(&reqs[i].req, &req, sizeof(req))) {
			reqs[i] = reqs[--nreqs];
			return;
		}
	}
}

void pm_need_req(MPI_Request req)
{
	for (int i = 0; i < nreqs; i++) {
		if (memcmp(&reqs[i].req, &req, sizeof(req)))
			continue;
		if (st->nneeds < CRDBG_MPI_NEEDS_MAX)
			st->needs[st->nneeds++] = reqs[i].need;
		if (st->nneeds == 1) {
			st->peer = reqs[i].need.peer;
			st->tag = reqs[i].need.tag;
		}
		return;
	}
}

int pm_wait(MPI_Request *req, MPI_Status *status)
{
	int flag = 0, rc;

	for (;;) {
		rc = PMPI_Test(req, &flag, status);
		if (rc != MPI_SUCCESS || flag)
			return rc;
		pm_polled();
	}
}

int pm_waitall(int n, MPI_Request *r, MPI_Status *statuses)
{
	int flag = 0, rc;

	for (;;) {
		rc = PMPI_Testall(n, r, &flag, statuses);
		if (rc != MPI_SUCCESS || flag)
			return rc;
		pm_polled();
	}
}
