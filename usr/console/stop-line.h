/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one line that says where a stop left the ranks (stop-line.c): the
 * timeline's record of each checkpoint (timeline.c), shown by the
 * auto-checkpoint line, `checkpoints` and `restart N`.
 */
#ifndef CRDBG_CONSOLE_STOP_LINE_H
#define CRDBG_CONSOLE_STOP_LINE_H

#include <stddef.h>

#include "sdm/frontend.h"

/*
 * "[0-5] breakpoint 2, step at t.c:9; [6] ...": a clause per distinct
 * place (the text of the ranks' stop replies, without "stopped: " and
 * their fields), its ranks merged, the clauses in order of their first
 * rank. What does not fit in len is left out a whole clause at a time,
 * "; ..." saying so; one place longer than len is cut at a space with
 * "...", never mid-word. "after a parallel step" when r says nothing.
 */
void dbg_stop_line(const struct sdm_fe_result *r, char *buf, size_t len);

#endif /* CRDBG_CONSOLE_STOP_LINE_H */
