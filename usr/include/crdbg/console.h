/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The parallel debugger behind `crdbg debug`: N processes, each under its
 * own gdb driven by an SDM server (sdm/backend-gdb.c), one console.
 */
#ifndef CRDBG_CONSOLE_H
#define CRDBG_CONSOLE_H

#include <stdbool.h>

#define DBG_MAX_EX	64	/* -ex commands */

struct dbg_opts {
	/*
	 * -n N: N copies of the program, never acquired through MPIR unless
	 * it is named like a launcher (an MPI program carries Open MPI's
	 * MPIR symbols in libopen-rte); 0: not given, one copy or MPIR.
	 */
	unsigned int nranks;
	char *const *argv;		/* PROGRAM ARGS..., NULL terminated */
	const char *batch;		/* --batch FILE: run it, then quit */
	const char *ex[DBG_MAX_EX];	/* -ex CMD, in order */
	unsigned int nex;
	bool json;			/* one JSON object per event */
	const char *bindir;		/* sdm-master/crdbg-server; NULL: next to crdbg */
	int attach_pid;			/* crdbg attach: a running mpirun */
	const char *preload;		/* --preload LIB: LD_PRELOAD for the program
					 * only, and a checkpointable job */
	bool mpi_hold;			/* --mpi-hold: argv is a launcher whose ranks
					 * libcrdbg-mpi holds in MPI_Init (gate.h) */
	const char *restart_job;	/* --restart JOB: the ranks are the processes
					 * of a job checkpoint, restarted (adopt) */
	unsigned int attach_timeout_s;	/* --attach-timeout: each gdb's attach and
					 * symbol reading; 0: DBGP_ATTACH_TIMEOUT_S */
};

/*
 * Run a session; returns the process exit status. argv[0] named mpirun,
 * mpiexec or orterun (or attach_pid) selects MPIR process acquisition.
 */
int dbg_main(const struct dbg_opts *o);

#endif /* CRDBG_CONSOLE_H */
