/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Acquiring an MPI job through libcrdbg-mpi's hold (crdbg debug
 * --mpi-hold), for launchers without a usable MPIR interface (MPICH's
 * mpiexec.hydra as Debian ships it, stripped of its MPIR symbols): the
 * launcher runs with CRDBG_MPI_HOLD=1, every rank says "crdbg-mpi: hold
 * rank R of N pid P exe PATH" on stderr from MPI_Init and waits there;
 * the console starts one server per rank, attaches each to its pid and
 * opens the gate (crdbg_mpi_gate), the ranks staying stopped at their
 * MPI_Init. Single node: the pids are this node's.
 */
#ifndef CRDBG_CONSOLE_GATE_H
#define CRDBG_CONSOLE_GATE_H

#include <stddef.h>

struct dbg_session;
struct dbg_gate;

struct dbg_gate *dbg_gate_new(struct dbg_session *s);
/*
 * Start argv (the launcher command) and acquire its ranks. 0, or -errno
 * with err set. The launcher is killed when the session stops.
 */
int dbg_gate_start(struct dbg_gate *g, char *const *argv, const char *bindir,
		   char *err, size_t errlen);
void dbg_gate_free(struct dbg_gate *g);

#endif /* CRDBG_CONSOLE_GATE_H */
