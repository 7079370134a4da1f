/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parallel step (Documentation/console.md, "The parallel step"):
 * step and next on a rank set issued only to ranks that finished their
 * previous motion, complete when every rank has finished or is blocked in
 * MPI for a trivial parallel reason, read from the MPI state libcrdbg-mpi
 * publishes in each rank (crdbg/mpi-state.h).
 *
 *   pstep.c        driving the ranks through a parallel step; hold/release
 *   pstep-model.c  who is blocked, who is trivially blocked, deadlock cycles
 *   pstep-view.c   the ranks' rows: merged text with colours, JSON
 */
#ifndef CRDBG_CONSOLE_PSTEP_H
#define CRDBG_CONSOLE_PSTEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crdbg/dbgproto.h"
#include "crdbg/mpi-state.h"

struct dbg_session;
struct sdm_idset;
struct dbg_bptab;

enum ps_colour {
	PS_GREEN,	/* can move */
	PS_YELLOW,	/* held by the user */
	PS_RED,		/* waits in MPI to finish an earlier motion */
	PS_EXITED,
	PS_LOST,
};

/* What the console knows of one rank. */
struct ps_rank {
	bool red;		/* a motion is pending, blocked in MPI */
	bool held;		/* yellow */
	bool exited, lost;
	bool running;		/* as of the last look */
	bool have_state;	/* st is valid (libcrdbg-mpi is in the rank) */
	struct crdbg_mpi_state st;
	char func[128], file[256];
	int line;		/* 0: unknown */
	enum dbgp_exec pending;	/* the motion a red rank finishes */
	unsigned int steps;	/* sequential motions issued to it */
};

struct dbg_pstep {
	struct dbg_session *s;
	struct dbg_bptab *bp;	/* the console's breakpoint numbers, or NULL */
	uint32_t n;
	struct ps_rank *r;
	bool mpi;		/* some rank has libcrdbg-mpi */
	bool announced;
	bool show_lib;		/* stops and stacks show MPI's frames */
};

struct dbg_pstep *dbg_pstep_new(struct dbg_session *s);
void dbg_pstep_free(struct dbg_pstep *p);
/*
 * Look at every rank's MPI state. The first time libcrdbg-mpi is found,
 * say that the parallel step is on and that sends are synchronous.
 */
void dbg_pstep_refresh(struct dbg_pstep *p);
/*
 * MPI's own frames in stops, status, bt and stacks of set: hidden (MPI
 * calls atomic, the default with libcrdbg-mpi) or shown.
 */
void dbg_pstep_frames(struct dbg_pstep *p, const struct sdm_idset *set, bool show);
/* The parallel step (kind: step or next) on set. */
void dbg_pstep_run(struct dbg_pstep *p, const struct sdm_idset *set,
		   enum dbgp_exec kind, const char *display);
/* hold (yellow) or release (green) the ranks of set; prints the rows. */
void dbg_pstep_hold(struct dbg_pstep *p, const struct sdm_idset *set, bool hold);
/* The merged rows of every rank (status, hold, release). */
void dbg_pstep_show(struct dbg_pstep *p);
/* One line per rank of set: colour, position, steps, MPI call. */
void dbg_pstep_table(struct dbg_pstep *p, const struct sdm_idset *set);

/* ---- pstep-model.c ---- */

/*
 * stuck[i] for every rank i of r[0..n): running in a blocking MPI call
 * that cannot complete unless some rank that is stopped (or itself
 * stuck) moves; ranks that are not running are never stuck.
 */
void ps_model_stuck(const struct ps_rank *r, uint32_t n, bool *stuck);
/*
 * Of the stuck ranks, those whose wait leads to a stopped rank (blocked
 * for a trivial parallel reason) get triv[i]; the others wait for each
 * other only: a deadlock. Returns how many are deadlocked.
 */
uint32_t ps_model_trivial(const struct ps_rank *r, uint32_t n,
			  const bool *stuck, bool *triv);
/*
 * A cycle of deadlocked ranks from one of them: "[0] MPI_Recv from 1 ->
 * [1] MPI_Recv from 0 -> [0]" into buf.
 */
void ps_model_cycle(const struct ps_rank *r, uint32_t n, const bool *stuck,
		    const bool *triv, char *buf, size_t size);
/* "MPI_Recv from 0", "MPI_Finalize", "MPI_Sendrecv to 2, from 0". */
void ps_model_call_text(const struct crdbg_mpi_state *st, char *buf,
			size_t size);

/* ---- pstep-view.c ---- */

enum ps_colour ps_colour(const struct ps_rank *r);
const char *ps_colour_name(enum ps_colour c);
/*
 * Merged rows of all ranks, text (colours on a terminal) or, in JSON, one
 * object {"event":EVENT,"ranks":[...]}.
 */
void ps_view_rows(struct dbg_pstep *p, const char *event);

#endif /* CRDBG_CONSOLE_PSTEP_H */
