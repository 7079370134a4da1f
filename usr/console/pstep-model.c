// SPDX-License-Identifier: GPL-2.0
/*
 * The parallel step's model of the MPI program: from every rank's MPI
 * state (crdbg/mpi-state.h) and whether it runs, which running ranks are
 * blocked in a call that cannot complete during this step.
 *
 * A running rank in a blocking call is "stuck" when one of the things it
 * waits for cannot happen: a point-to-point partner that is stopped, or
 * is stuck itself in a call that does not match (two ranks each in the
 * other's receive both stay stuck; a send and its receive do not); a
 * collective member that is stopped, or stuck elsewhere, before entering
 * it. This is the greatest fixpoint: every candidate starts stuck and is
 * freed as soon as all it needs can come from ranks that can move.
 * Sends are synchronous in debug mode, so a send also waits for its
 * receiver. The console confirms a stuck rank with its own progress
 * tests before believing it (pstep.c).
 */
#include <stdio.h>
#include <string.h>

#include "pstep.h"

static bool in_blocking_call(const struct ps_rank *r)
{
	return r->have_state && (r->st.kind == CRDBG_MPI_P2P ||
				 r->st.kind == CRDBG_MPI_WAIT ||
				 r->st.kind == CRDBG_MPI_COLL);
}

static bool tags_match(int32_t a, int32_t b)
{
	return a == CRDBG_MPI_ANY || b == CRDBG_MPI_ANY || a == b;
}

/* Does rank q (id qi) currently offer what need (of rank ri) wants? */
static bool matches(const struct ps_rank *q, const struct crdbg_mpi_need *need,
		    uint32_t ri)
{
	int want = need->kind == CRDBG_NEED_SEND ? CRDBG_NEED_RECV : CRDBG_NEED_SEND;

	if (!q->have_state || q->st.kind == CRDBG_MPI_COLL)
		return false;
	for (int i = 0; i < q->st.nneeds && i < CRDBG_MPI_NEEDS_MAX; i++) {
		const struct crdbg_mpi_need *o = &q->st.needs[i];

		if (o->kind == want && tags_match(o->tag, need->tag) &&
		    (o->peer == (int32_t)ri || o->peer == CRDBG_MPI_ANY))
			return true;
	}
	return false;
}

/* Can rank qi (running, not stuck, or stuck in a matching call) help? */
static bool able(const struct ps_rank *r, const bool *stuck, uint32_t qi,
		 const struct crdbg_mpi_need *need, uint32_t ri)
{
	if (!r[qi].running || r[qi].exited || r[qi].lost)
		return false;
	return !stuck[qi] || matches(&r[qi], need, ri);
}

static bool need_met(const struct ps_rank *r, uint32_t n, const bool *stuck,
		     const struct crdbg_mpi_need *need, uint32_t ri)
{
	if (need->peer != CRDBG_MPI_ANY)
		return (uint32_t)need->peer < n && able(r, stuck, need->peer, need, ri);
	for (uint32_t q = 0; q < n; q++)
		if (q != ri && able(r, stuck, q, need, ri))
			return true;
	return false;
}

static bool p2p_can_complete(const struct ps_rank *r, uint32_t n,
			     const bool *stuck, uint32_t ri)
{
	const struct crdbg_mpi_state *st = &r[ri].st;
	struct crdbg_mpi_need any = { .kind = CRDBG_NEED_RECV,
				      .peer = CRDBG_MPI_ANY, .tag = CRDBG_MPI_ANY };
	int k = st->nneeds < CRDBG_MPI_NEEDS_MAX ? st->nneeds : CRDBG_MPI_NEEDS_MAX;

	if (k == 0)	/* a wait we know nothing of: anyone may complete it */
		return need_met(r, n, stuck, &any, ri);
	for (int i = 0; i < k; i++) {
		bool met = need_met(r, n, stuck, &st->needs[i], ri);

		if (st->needs_any && met)
			return true;
		if (!st->needs_any && !met)
			return false;
	}
	return !st->needs_any;
}

/* Collectives rank q has entered on the communicator key (0: none). */
static uint64_t entered(const struct ps_rank *q, uint64_t key)
{
	for (int i = 0; i < q->st.ncomms && i < CRDBG_MPI_COMMS_MAX; i++)
		if (q->st.comms[i].key == key)
			return q->st.comms[i].count;
	return 0;
}

static bool is_member(const struct crdbg_mpi_state *st, uint32_t q, uint32_t n)
{
	int32_t m = st->nmembers;

	if (m <= 0 || m > CRDBG_MPI_MEMBERS_MAX || (uint32_t)m >= n)
		return true;	/* the world, or too many to list: all */
	for (int32_t i = 0; i < m; i++)
		if (st->members[i] == (int32_t)q)
			return true;
	return false;
}

static bool member_ok(const struct ps_rank *r, const bool *stuck, uint32_t q,
		      const struct crdbg_mpi_state *st)
{
	const struct ps_rank *m = &r[q];
	bool alive = m->running && !m->exited && !m->lost;

	if (m->have_state && entered(m, st->coll_key) >= st->coll_index) {
		bool inside = m->st.kind == CRDBG_MPI_COLL &&
			      m->st.coll_key == st->coll_key &&
			      m->st.coll_index == st->coll_index;

		/* Inside it, it must run to finish it; past it, it is done. */
		return inside ? alive : true;
	}
	return alive && !stuck[q];
}

static bool coll_can_complete(const struct ps_rank *r, uint32_t n,
			      const bool *stuck, uint32_t ri)
{
	const struct crdbg_mpi_state *st = &r[ri].st;

	for (uint32_t q = 0; q < n; q++)
		if (q != ri && is_member(st, q, n) && !member_ok(r, stuck, q, st))
			return false;
	return true;
}

static bool can_complete(const struct ps_rank *r, uint32_t n, const bool *stuck,
			 uint32_t ri)
{
	if (r[ri].st.kind == CRDBG_MPI_COLL)
		return coll_can_complete(r, n, stuck, ri);
	return p2p_can_complete(r, n, stuck, ri);
}

void ps_model_stuck(const struct ps_rank *r, uint32_t n, bool *stuck)
{
	bool changed = true;

	for (uint32_t i = 0; i < n; i++)
		stuck[i] = r[i].running && !r[i].exited && !r[i].lost &&
			   in_blocking_call(&r[i]);
	while (changed) {
		changed = false;
		for (uint32_t i = 0; i < n; i++) {
			if (stuck[i] && can_complete(r, n, stuck, i)) {
				stuck[i] = false;
				changed = true;
			}
		}
	}
}

/* A rank that stands still: stopped, exited, lost. */
static bool still(const struct ps_rank *q)
{
	return !q->running || q->exited || q->lost;
}

/*
 * Who rank ri waits for in vain: the first peer of an unmet need (or
 * collective member) that stands still (*ret_still) or is stuck. -1 if
 * none is found.
 */
static int64_t blocker(const struct ps_rank *r, uint32_t n, const bool *stuck,
		       const bool *triv, uint32_t ri, bool *ret_still)
{
	const struct crdbg_mpi_state *st = &r[ri].st;
	int64_t found = -1;

	for (uint32_t q = 0; q < n; q++) {
		bool wanted = false;

		if (q == ri)
			continue;
		if (st->kind == CRDBG_MPI_COLL) {
			wanted = is_member(st, q, n) && !member_ok(r, stuck, q, st);
		} else {
			for (int i = 0; i < st->nneeds && i < CRDBG_MPI_NEEDS_MAX; i++)
				if (st->needs[i].peer == (int32_t)q ||
				    st->needs[i].peer == CRDBG_MPI_ANY)
					wanted = true;
			if (!st->nneeds)
				wanted = true;
		}
		if (!wanted)
			continue;
		if (still(&r[q]) || (triv && stuck[q] && triv[q])) {
			*ret_still = true;
			return q;
		}
		if (stuck[q] && found < 0)
			found = q;
	}
	*ret_still = false;
	return found;
}

uint32_t ps_model_trivial(const struct ps_rank *r, uint32_t n,
			  const bool *stuck, bool *triv)
{
	bool changed = true;
	uint32_t dead = 0;

	for (uint32_t i = 0; i < n; i++)
		triv[i] = false;
	while (changed) {
		changed = false;
		for (uint32_t i = 0; i < n; i++) {
			bool st_still;

			if (!stuck[i] || triv[i])
				continue;
			blocker(r, n, stuck, triv, i, &st_still);
			if (st_still) {
				triv[i] = true;
				changed = true;
			}
		}
	}
	for (uint32_t i = 0; i < n; i++)
		dead += stuck[i] && !triv[i];
	return dead;
}

void ps_model_cycle(const struct ps_rank *r, uint32_t n, const bool *stuck,
		    const bool *triv, char *buf, size_t size)
{
	uint32_t start = n, i, seen_at[64];
	unsigned int len = 0, k;
	size_t off = 0;

	buf[0] = 0;
	for (i = 0; i < n && start == n; i++)
		if (stuck[i] && !triv[i])
			start = i;
	if (start == n)
		return;
	/* Walk from start until a rank repeats: the cycle is from there. */
	for (i = start; len < 64; ) {
		bool st_still;
		int64_t b;

		for (k = 0; k < len; k++)
			if (seen_at[k] == i)
				break;
		if (k < len)
			break;
		seen_at[len++] = i;
		b = blocker(r, n, stuck, triv, i, &st_still);
		if (b < 0)
			break;
		i = b;
	}
	for (k = 0; k < len && seen_at[k] != i; k++)
		;
	if (k == len)
		k = 0;
	for (unsigned int j = k; j < len && off < size; j++) {
		char call[128];

		ps_model_call_text(&r[seen_at[j]].st, call, sizeof(call));
		off += snprintf(buf + off, size - off, "[%u] %s -> ", seen_at[j], call);
	}
	if (off < size)
		snprintf(buf + off, size - off, "[%u]", seen_at[k]);
}

static void peer_text(char *buf, size_t size, int32_t peer)
{
	if (peer == CRDBG_MPI_ANY)
		snprintf(buf, size, "any");
	else
		snprintf(buf, size, "%d", peer);
}

void ps_model_call_text(const struct crdbg_mpi_state *st, char *buf, size_t size)
{
	size_t off;

	off = snprintf(buf, size, "%.*s", CRDBG_MPI_CALL_MAX, st->call);
	if (st->kind == CRDBG_MPI_COLL)
		return;
	for (int i = 0; i < st->nneeds && i < CRDBG_MPI_NEEDS_MAX && off < size; i++) {
		const struct crdbg_mpi_need *nd = &st->needs[i];
		char peer[16];

		peer_text(peer, sizeof(peer), nd->peer);
		off += snprintf(buf + off, size - off, "%s%s %s",
				i ? "," : "", nd->kind == CRDBG_NEED_SEND ? " to" : " from",
				peer);
	}
}
