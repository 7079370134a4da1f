/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The MPIR checkpoint protocol: the contract between libcrdbg (loaded in
 * the program), the crdbg command that checkpoints and restarts it, and
 * the debugger that attaches to it afterwards.
 *
 * Request: crdbg sends CRDBG_RT_SIGNAL with sigqueue() to the program,
 * si_value.sival_int = CRDBG_RT_REQ_CHECKPOINT. The library's handler
 * forwards (sender pid, request) over a pipe to the designated checkpoint
 * thread, which prepares, calls MPIR_checkpoint_debugger_detach() (a
 * debugger breaks there and detaches) and answers with the same signal to
 * the sender, si_value.sival_ptr = &crdbg_rt_info. crdbg reads that
 * structure with process_vm_readv(), freezes the tree and dumps it.
 *
 * Resume: crdbg pushes the hook trampoline on every thread with
 * freeze_push_hook(arg); the trampoline calls crdbg_hook_entry(arg), which runs
 * MPIR_checkpoint_debugger_crs_hook(state) (Documentation/checkpoint.md,
 * "The protocol").
 *
 * Markers: after a restart the designated thread of every restored
 * process prints "MPIR debug info) <host>:<pid>" on its stderr, and the
 * checkpoint command prints "MPIR checkpoint handle) <handle>"; a debugger
 * finds the process to attach to, or the image to restart, from them.
 *
 * crdbg finds out whether a program uses libcrdbg from /proc/PID/maps
 * before it sends anything: the default action of a real-time signal is
 * to terminate.
 */
#ifndef CRDBG_MPIR_CHECKPOINT_H
#define CRDBG_MPIR_CHECKPOINT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CRDBG_RT_LIBNAME	"libcrdbg.so"

/* Real-time signal used for requests and replies (SIGRTMAX - 3 = 61). */
#define CRDBG_RT_SIGNAL		(SIGRTMAX - 3)

#define CRDBG_RT_REQ_CHECKPOINT	1

#define CRDBG_RT_MAGIC		0x63726462672d7274ULL	/* "crdbg-rt" */
#define CRDBG_RT_VERSION	1

/* Published by the library; read by crdbg from the target's memory. */
struct crdbg_rt_info {
	uint64_t magic;
	uint32_t version;
	int32_t designated_tid;		/* the checkpoint thread */
	uint64_t trampoline;		/* hook-trampoline.S entry (both backends), 0 if absent */
	uint64_t hook_entry;		/* &crdbg_hook_entry: recorded in the metadata only */
	uint64_t debug_with_checkpoint;	/* &MPIR_debug_with_checkpoint */
	uint64_t debug_gate;		/* &MPIR_checkpoint_debug_gate */
	uint64_t requests;		/* checkpoint requests served so far */
	int32_t parked;			/* threads in ..._breakpoint() now */
	int32_t reserved;
};

/*
 * Hook argument: bits 0-7 the CRS state passed to
 * MPIR_checkpoint_debugger_crs_hook(), bits 8-9 what to do with
 * MPIR_debug_with_checkpoint before that.
 */
#define CRDBG_CRS_STATE_CONTINUE	1
#define CRDBG_CRS_STATE_RESTART		2
/*
 * Not a CRS state: a debugger pushed the hook frame itself (return_via
 * USER) to park the thread in the waitpoint with every register saved
 * before it detaches for a checkpoint (usr/console/checkpoint.c).
 */
#define CRDBG_CRS_STATE_PARK		3
#define CRDBG_HOOK_STATE_MASK		0xffULL

#define CRDBG_HOOK_DEBUG_KEEP		(0ULL << 8)
#define CRDBG_HOOK_DEBUG_CLEAR		(1ULL << 8)
#define CRDBG_HOOK_DEBUG_SET		(2ULL << 8)
#define CRDBG_HOOK_DEBUG_MASK		(3ULL << 8)

/*
 * The marker lines. Parsers accept the historical Open MPI spellings with
 * '_' between the words ("MPIR_debug_info)", "MPIR_checkpoint_handle)")
 * and surrounding blanks; they return 0 with the fields filled, or -EINVAL
 * if line is not such a marker.
 */
#define CRS_DEBUG_INFO_PREFIX	"MPIR debug info) "
#define CRS_HANDLE_PREFIX	"MPIR checkpoint handle) "

int crs_parse_debug_info(const char *line, char *host, size_t hostlen, pid_t *ret_pid);
int crs_parse_checkpoint_handle(const char *line, char *handle, size_t handlelen);

#endif /* CRDBG_MPIR_CHECKPOINT_H */
