// SPDX-License-Identifier: GPL-2.0
/*
 * The parallel step's model (usr/console/pstep-model.c) on hand-made MPI
 * states: who is stuck, who is stuck for a trivial parallel reason (a
 * stopped rank at the end of the chain), and the cycle of a deadlock.
 */
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"
#include "pstep.h"

#define N	4

static struct ps_rank r[N];
static bool stuck[N], triv[N];

static void reset(void)
{
	memset(r, 0, sizeof(r));
	for (int i = 0; i < N; i++) {
		r[i].have_state = true;
		r[i].st.magic = CRDBG_MPI_MAGIC;
		r[i].st.version = CRDBG_MPI_VERSION;
		r[i].st.ncomms = 1;	/* MPI_Init entered on the world */
		r[i].st.comms[0].key = 0;
		r[i].st.comms[0].count = 1;
	}
}

static void p2p(int i, const char *call, int kind, int peer, int tag)
{
	struct crdbg_mpi_state *st = &r[i].st;

	r[i].running = true;
	st->kind = CRDBG_MPI_P2P;
	snprintf(st->call, sizeof(st->call), "%s", call);
	st->needs[st->nneeds].kind = kind;
	st->needs[st->nneeds].peer = peer;
	st->needs[st->nneeds].tag = tag;
	st->nneeds++;
}

/* Rank i enters the world's second collective (after MPI_Init). */
static void barrier(int i)
{
	struct crdbg_mpi_state *st = &r[i].st;

	r[i].running = true;
	st->kind = CRDBG_MPI_COLL;
	snprintf(st->call, sizeof(st->call), "MPI_Barrier");
	st->coll_key = 0;
	st->coll_index = 2;
	st->nmembers = N;
	st->comms[0].count = 2;
}

static uint32_t model(void)
{
	ps_model_stuck(r, N, stuck);
	return ps_model_trivial(r, N, stuck, triv);
}

TEST(each_in_the_others_recv_is_a_deadlock)
{
	char cycle[256];

	reset();
	p2p(0, "MPI_Recv", CRDBG_NEED_RECV, 1, 0);
	p2p(1, "MPI_Recv", CRDBG_NEED_RECV, 0, 0);
	EXPECT_EQ(2, model());
	EXPECT_TRUE(stuck[0] && stuck[1]);
	EXPECT_FALSE(triv[0] || triv[1]);
	ps_model_cycle(r, N, stuck, triv, cycle, sizeof(cycle));
	EXPECT_STREQ("[0] MPI_Recv from 1 -> [1] MPI_Recv from 0 -> [0]", cycle);
}

TEST(a_send_and_its_receive_free_each_other)
{
	reset();
	p2p(0, "MPI_Send", CRDBG_NEED_SEND, 1, 5);
	p2p(1, "MPI_Recv", CRDBG_NEED_RECV, 0, CRDBG_MPI_ANY);
	EXPECT_EQ(0, model());
	EXPECT_FALSE(stuck[0] || stuck[1]);
}

TEST(tags_that_differ_do_not_match)
{
	reset();
	p2p(0, "MPI_Send", CRDBG_NEED_SEND, 1, 5);
	p2p(1, "MPI_Recv", CRDBG_NEED_RECV, 0, 6);
	EXPECT_EQ(2, model());
}

TEST(a_stopped_partner_is_a_trivial_reason)
{
	reset();
	p2p(1, "MPI_Recv", CRDBG_NEED_RECV, 0, 0);	/* rank 0 stopped */
	EXPECT_EQ(0, model());
	EXPECT_TRUE(stuck[1]);
	EXPECT_TRUE(triv[1]);
}

TEST(a_chain_behind_a_running_rank_is_not_stuck)
{
	reset();
	r[0].running = true;				/* computing */
	p2p(1, "MPI_Recv", CRDBG_NEED_RECV, 0, 0);
	p2p(2, "MPI_Recv", CRDBG_NEED_RECV, 1, 0);
	EXPECT_EQ(0, model());
	EXPECT_FALSE(stuck[1] || stuck[2]);
}

TEST(a_chain_behind_a_stopped_rank_is_trivially_stuck)
{
	reset();
	p2p(1, "MPI_Recv", CRDBG_NEED_RECV, 0, 0);	/* rank 0 stopped */
	p2p(2, "MPI_Recv", CRDBG_NEED_RECV, 1, 0);
	EXPECT_EQ(0, model());
	EXPECT_TRUE(stuck[1] && stuck[2]);
	EXPECT_TRUE(triv[1] && triv[2]);
}

TEST(a_ring_of_sendrecvs_completes)
{
	reset();
	for (int i = 0; i < N; i++) {
		p2p(i, "MPI_Sendrecv", CRDBG_NEED_RECV, (i + N - 1) % N, 0);
		p2p(i, "MPI_Sendrecv", CRDBG_NEED_SEND, (i + 1) % N, 0);
	}
	EXPECT_EQ(0, model());
	for (int i = 0; i < N; i++)
		EXPECT_FALSE(stuck[i]);
}

TEST(a_barrier_a_stopped_member_has_not_entered)
{
	reset();
	barrier(0);
	barrier(1);
	barrier(2);					/* rank 3 stopped before it */
	EXPECT_EQ(0, model());
	EXPECT_TRUE(stuck[0] && stuck[1] && stuck[2]);
	EXPECT_TRUE(triv[0] && triv[1] && triv[2]);
	r[3].running = true;				/* on its way: may enter */
	EXPECT_EQ(0, model());
	EXPECT_FALSE(stuck[0] || stuck[1] || stuck[2]);
}

TEST(a_member_past_the_barrier_does_not_hold_it)
{
	reset();
	barrier(0);
	barrier(1);
	barrier(2);
	r[3].st.comms[0].count = 2;			/* left it, then stopped */
	EXPECT_EQ(0, model());
	EXPECT_FALSE(stuck[0] || stuck[1] || stuck[2]);
}

TEST(any_source_with_everyone_stopped_is_stuck)
{
	reset();
	p2p(2, "MPI_Recv", CRDBG_NEED_RECV, CRDBG_MPI_ANY, 0);
	EXPECT_EQ(0, model());
	EXPECT_TRUE(stuck[2] && triv[2]);
	r[3].running = true;
	EXPECT_EQ(0, model());
	EXPECT_FALSE(stuck[2]);
}

TEST(waitany_needs_one)
{
	reset();
	p2p(0, "MPI_Waitany", CRDBG_NEED_RECV, 1, 0);	/* rank 1 stopped */
	p2p(0, "MPI_Waitany", CRDBG_NEED_RECV, 2, 0);
	r[0].st.kind = CRDBG_MPI_WAIT;
	r[0].st.needs_any = 1;
	r[2].running = true;
	EXPECT_EQ(0, model());
	EXPECT_FALSE(stuck[0]);
	r[0].st.needs_any = 0;				/* MPI_Waitall: both */
	EXPECT_EQ(0, model());
	EXPECT_TRUE(stuck[0]);
}

TEST(call_texts)
{
	char t[128];

	reset();
	p2p(0, "MPI_Sendrecv", CRDBG_NEED_RECV, 3, 0);
	p2p(0, "MPI_Sendrecv", CRDBG_NEED_SEND, 1, 0);
	ps_model_call_text(&r[0].st, t, sizeof(t));
	EXPECT_STREQ("MPI_Sendrecv from 3, to 1", t);
	barrier(1);
	ps_model_call_text(&r[1].st, t, sizeof(t));
	EXPECT_STREQ("MPI_Barrier", t);
	p2p(2, "MPI_Recv", CRDBG_NEED_RECV, CRDBG_MPI_ANY, 0);
	ps_model_call_text(&r[2].st, t, sizeof(t));
	EXPECT_STREQ("MPI_Recv from any", t);
}

TEST_HARNESS_MAIN
