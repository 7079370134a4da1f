/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The GDB backend's view of a rank's MPI state (crdbg/mpi-state.h,
 * published by libcrdbg-mpi): reading it while the rank runs, the call
 * site of the MPI call it is in, and running it back to that call site.
 */
#ifndef CRDBG_SERVER_MPI_VIEW_H
#define CRDBG_SERVER_MPI_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <crdbg/gdbmi.h>
#include <crdbg/mpi-state.h>

struct mpiv {
	uint64_t addr;		/* of crdbg_mpi_state in the rank, 0: unknown */
	bool absent;		/* the rank has no libcrdbg-mpi */
	bool show_lib;		/* stops and stacks show MPI's own frames */
	int ret_bkpt;		/* mpiv_return's last breakpoint, 0: none */
};

/*
 * Read the rank's state: through /proc/PID/mem (it may run), else through
 * gdb (stopped only). The address is asked of gdb the first time, which
 * needs the rank stopped. 0, -ENOENT (no libcrdbg-mpi), -EAGAIN (running
 * and the address not known yet, or a write never ended), -errno.
 */
int mpiv_read(struct mpiv *m, struct mi_driver *d, pid_t pid, bool stopped,
	      struct crdbg_mpi_state *ret);

/*
 * The rank is stopped in an MPI call: the index in fr (innermost first)
 * of the user's frame that made it (its pc is the call's return
 * address; or, when that frame has no source and its caller has, the
 * caller: a binding of the MPI library's own between the user and
 * libcrdbg-mpi, such as Open MPI's mpi_f08 routines), or -1 when the
 * rank is not in a call or the frame is not in fr.
 */
int mpiv_user_frame(const struct crdbg_mpi_state *st, const struct mi_frames *fr);

/*
 * Resume a rank stopped inside an MPI call to just after the call, in the
 * user's frame (a temporary breakpoint at the return address). 0, or
 * -EINVAL when it is not in a call, or the driver's error.
 */
int mpiv_return(struct mpiv *m, struct mi_driver *d, pid_t pid);

/*
 * The rank stopped (at breakpoint bkptno, or 0). A call-site breakpoint of
 * mpiv_return that was not what stopped it (the rank was interrupted on
 * its way back) is deleted: left there, it would stop a later continue or
 * a later pass through the same call.
 */
void mpiv_stopped(struct mpiv *m, struct mi_driver *d, int bkptno);

/* The state as lower-case hex (2 * sizeof + 1 bytes of buf). */
void mpiv_hex(char *buf, const struct crdbg_mpi_state *st);

#endif /* CRDBG_SERVER_MPI_VIEW_H */
