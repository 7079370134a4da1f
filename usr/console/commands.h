/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The console's commands (commands.c): one table of {name, aliases,
 * arguments, help, handler} drives dispatch, help and completion. A line
 * is "[RANKS] COMMAND ARGS"; a word the table does not know goes to every
 * gdb of the set as a gdb console command.
 */
#ifndef CRDBG_CONSOLE_COMMANDS_H
#define CRDBG_CONSOLE_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

struct dbg_session;
struct dbg_mpir;
struct dbg_ckpt;
struct dbg_pstep;
struct dbg_gate;
struct dbg_bptab;
struct dbg_timeline;

#define DBG_MAX_DISPLAYS	16

/* An expression display shows after every stop. */
struct dbg_display {
	char *expr;
	char fmt[16];		/* "/x", or "" */
};

/* What the commands act on. */
struct dbg_console {
	struct dbg_session *s;
	struct dbg_mpir *mpir;	/* a job acquired through MPIR, else NULL */
	struct dbg_ckpt *ckpt;	/* checkpoint and restart; NULL: refused */
	struct dbg_timeline *tl; /* the session's checkpoints; NULL: refused */
	struct dbg_pstep *pstep; /* the parallel step; NULL: plain step */
	struct dbg_gate *gate;	/* a job held by libcrdbg-mpi (--mpi-hold) */
	struct dbg_bptab *bp;	/* the breakpoint table; NULL: refused */
	bool stopall;		/* a faulting rank stops the others */
	struct dbg_display display[DBG_MAX_DISPLAYS];
	unsigned int ndisplay;
	/* Ask a yes/no question on the terminal; NULL (batch): yes. */
	bool (*confirm)(const char *question);
};

/* Run one console line. Returns 1 to quit, else 0. */
int dbg_execute(struct dbg_console *c, const char *line);

/*
 * Between commands: report the ranks that stopped, exited or were lost
 * while they ran, at once, as "wait" would; a fault among them stops the
 * others (stopall). Asks only ranks that run; prints to the session.
 */
void dbg_watch(struct dbg_console *c);

/*
 * Completion: the i-th word a command can be typed as (names, and aliases
 * of three letters or more; hidden commands left out), NULL after the last.
 */
const char *dbg_command_word(size_t i);

#endif /* CRDBG_CONSOLE_COMMANDS_H */
