// SPDX-License-Identifier: GPL-2.0
/*
 * The MPIR checkpoint-aware debugging symbols (Documentation/checkpoint.md,
 * "The runtime library"), with C linkage and debug info so a debugger finds
 * them by name. The functions are never inlined and never tail-called
 * (see runtime.mk) so each one is a frame a debugger can break in and
 * finish out of.
 */
#include <errno.h>
#include <time.h>

#include <crdbg/mpir.h>

#include "runtime.h"

/* 1: this process implements the checkpoint-aware debugging protocol. */
CRDBG_EXPORT volatile int MPIR_checkpointable = 1;

/* Set by the debugger (or by crdbg's hook) when a debugger will attach. */
CRDBG_EXPORT volatile int MPIR_debug_with_checkpoint;

/* 0: threads in MPIR_checkpoint_debugger_breakpoint() wait; else they go. */
CRDBG_EXPORT volatile int MPIR_checkpoint_debug_gate;

/* Filled in by the constructor (agent.c); see Figure 5.11. */
char crdbg_rt_checkpoint_command[CRDBG_RT_CMD_LEN] = "crdbg checkpoint";
char crdbg_rt_restart_command[CRDBG_RT_CMD_LEN] = "crdbg restart --debug";
char crdbg_rt_listing_command[CRDBG_RT_CMD_LEN] = "crdbg list";
char crdbg_rt_hostname[CRDBG_RT_CMD_LEN] = "localhost";

CRDBG_EXPORT char *MPIR_checkpoint_command = crdbg_rt_checkpoint_command;
CRDBG_EXPORT char *MPIR_restart_command = crdbg_rt_restart_command;
CRDBG_EXPORT char *MPIR_checkpoint_listing_command = crdbg_rt_listing_command;
CRDBG_EXPORT char *MPIR_controller_hostname = crdbg_rt_hostname;

/* Depth of MPIR_checkpoint_debugger_breakpoint() on this thread's stack. */
static __thread int bp_depth __attribute__((tls_model("initial-exec")));

void crdbg_rt_nap(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 100 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/*
 * Empty marker called by the designated thread just before it asks for the
 * checkpoint: a debugger breaks here and detaches.
 */
CRDBG_EXPORT __attribute__((noinline)) int MPIR_checkpoint_debugger_detach(void)
{
	__asm__ volatile("" ::: "memory");
	return 0;
}

/*
 * Wait here until the debugger (or the hook) opens the gate. A thread that
 * is already waiting further up its stack (the debugger forced it into the
 * waitpoint before the checkpoint, then the hook pushed another call on
 * top) returns at once to the outer loop: threads never wait twice.
 */
CRDBG_EXPORT __attribute__((noinline)) void MPIR_checkpoint_debugger_breakpoint(void)
{
	int saved_errno = errno;

	if (bp_depth > 0)
		return;
	bp_depth++;
	__atomic_add_fetch(&crdbg_runtime_info.parked, 1, __ATOMIC_SEQ_CST);
	while (MPIR_checkpoint_debug_gate == 0)
		crdbg_rt_nap();
	__atomic_sub_fetch(&crdbg_runtime_info.parked, 1, __ATOMIC_SEQ_CST);
	bp_depth--;
	errno = saved_errno;
}

/*
 * Designated (checkpoint) threads are released early; every other thread
 * closes the gate and enters the breakpoint function.
 */
CRDBG_EXPORT __attribute__((noinline)) void MPIR_checkpoint_debugger_waitpoint(void)
{
	if (crdbg_rt_is_designated() || bp_depth > 0)
		return;
	MPIR_checkpoint_debug_gate = 0;
	MPIR_checkpoint_debugger_breakpoint();
}

/*
 * Run by every thread after a checkpoint (continue) or a restart (Figures
 * 5.8 and 5.9): wait for the debugger if it will attach, else open the gate
 * so threads held by a debugger before the checkpoint run on.
 */
CRDBG_EXPORT __attribute__((noinline)) void MPIR_checkpoint_debugger_crs_hook(int state)
{
	(void)state;
	if (!MPIR_debug_with_checkpoint) {
		MPIR_checkpoint_debug_gate = 1;
		return;
	}
	/*
	 * Already waiting further up the stack (parked by a debugger before
	 * the checkpoint): that wait holds the thread, and the gate is the
	 * debugger's to open; closing it here could undo an opening that
	 * came first.
	 */
	if (bp_depth > 0)
		return;
	MPIR_checkpoint_debug_gate = 0;
	MPIR_checkpoint_debugger_waitpoint();
}
