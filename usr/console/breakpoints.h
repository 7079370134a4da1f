/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The session's one breakpoint table (breakpoints.c). Each rank's gdb
 * numbers its breakpoints itself, and ranks that got different
 * breakpoints (a subset break, the launcher's hold) number them
 * differently; the console owns the numbers the user sees. Every entry
 * keeps its rank set and, per rank, gdb's number; commands on console
 * numbers go to each group of ranks with gdb's number there, and stop
 * replies are renumbered before they are merged.
 */
#ifndef CRDBG_CONSOLE_BREAKPOINTS_H
#define CRDBG_CONSOLE_BREAKPOINTS_H

#include <stdbool.h>
#include <stdint.h>

struct dbg_session;
struct sdm_idset;
struct sdm_fe_result;
struct dbg_bptab;

enum dbg_bp_kind {
	DBG_BP_BREAK,
	DBG_BP_TBREAK,		/* deleted on the ranks that stop at it */
	DBG_BP_WATCH,		/* gdb watch, rwatch, awatch */
	DBG_BP_RWATCH,
	DBG_BP_AWATCH,
};

/* NULL on ENOMEM. */
struct dbg_bptab *dbg_bp_new(struct dbg_session *s);
void dbg_bp_free(struct dbg_bptab *t);

/* The session's start: gdb's temporary breakpoint 1 at main on set. */
void dbg_bp_note_start(struct dbg_bptab *t, const struct sdm_idset *set);

/* break/tbreak LOC [if EXPR], watch EXPR ...: a new console number. */
void dbg_bp_create(struct dbg_bptab *t, const struct sdm_idset *set,
		   enum dbg_bp_kind kind, const char *arg);
/*
 * delete, disable, enable, condition on console numbers ("2 3", or ""
 * for every breakpoint but condition). A set narrows the breakpoints to
 * those ranks; NULL: all their ranks.
 */
void dbg_bp_delete(struct dbg_bptab *t, const struct sdm_idset *set,
		   const char *args);
void dbg_bp_enable(struct dbg_bptab *t, const struct sdm_idset *set,
		   const char *args, bool enable);
void dbg_bp_condition(struct dbg_bptab *t, const struct sdm_idset *set,
		      const char *args);
/* The table: number, type, disposition, enabled, ranks, where, condition. */
void dbg_bp_info(struct dbg_bptab *t);
/* Is there any breakpoint at all. */
bool dbg_bp_any(const struct dbg_bptab *t);

/*
 * A reply of ranks src: a stop at a breakpoint gets the console's
 * number (text and bkptno field), split by number if the ranks differ;
 * added to acc as type. Other replies are added as they are.
 */
int dbg_bp_renumber(struct dbg_bptab *t, struct sdm_fe_result *acc,
		    uint8_t type, const struct sdm_idset *src, const char *text);
/* text of rank id (a stop), with the console's number (malloc'd). */
char *dbg_bp_renumber_text(struct dbg_bptab *t, uint32_t id, const char *text);
/* After a run command: delete temporary breakpoints where ranks stopped. */
void dbg_bp_settle(struct dbg_bptab *t);

#endif /* CRDBG_CONSOLE_BREAKPOINTS_H */
