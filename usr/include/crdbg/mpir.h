/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libcrdbg: the MPIR checkpoint runtime of crdbg, loaded into the program
 * being debugged (see Documentation/checkpoint.md).
 *
 * Synopsis
 * ========
 *
 *    #include <crdbg/mpir.h>
 *
 *    cc ... -lcrdbg
 *
 * Description
 * ===========
 *
 * libcrdbg.so implements, inside the debugged program, the checkpoint-aware
 * debugging protocol of the MPIR interface: a debugger learns from these
 * symbols when to detach before a checkpoint and when to re-attach after a
 * restart, and crdbg(1) pushes a hook on every thread at restart so that
 * each thread runs MPIR_checkpoint_debugger_crs_hook() before going back
 * to its exact program counter. A program gets it in one of two ways:
 *
 *    cc -o prog prog.c -lcrdbg                  linked
 *    LD_PRELOAD=libcrdbg.so ./prog              preloaded, unchanged
 *    crdbg debug --preload libcrdbg.so ./prog   preloaded by the console
 *
 * Its constructor starts one checkpoint thread, named crdbg-ckpt, that
 * answers "crdbg checkpoint PID" (set CRDBG_NO_AGENT=1 to do without). A
 * program does not need to call anything: the symbols are for debuggers,
 * which find them by name, and this header is for programs and tools that
 * want to read or set them. Every function is a real frame (never inlined,
 * never tail-called), built with debug information.
 *
 * Variables
 * ---------
 *
 *    volatile int MPIR_checkpointable
 *        1: this process implements the checkpoint-aware protocol.
 *    volatile int MPIR_debug_with_checkpoint
 *        set by the debugger (or by crdbg's hook) when a debugger will
 *        attach after the checkpoint or the restart.
 *    volatile int MPIR_checkpoint_debug_gate
 *        0: threads in MPIR_checkpoint_debugger_breakpoint() wait; a
 *        debugger sets it to 1 to let them go.
 *    char *MPIR_checkpoint_command
 *        the command that checkpoints this process ("crdbg checkpoint PID").
 *    char *MPIR_restart_command
 *        the command that restarts a checkpoint for a debugger
 *        ("crdbg restart --debug").
 *    char *MPIR_checkpoint_listing_command
 *        the command that lists checkpoints ("crdbg list").
 *    char *MPIR_controller_hostname
 *        the host the commands run on (refreshed after a restart).
 *
 * Functions
 * ---------
 *
 *    int MPIR_checkpoint_debugger_detach(void)
 *        empty marker the checkpoint thread calls just before it asks for
 *        the checkpoint: a debugger breaks here and detaches.
 *    void MPIR_checkpoint_debugger_breakpoint(void)
 *        waits while MPIR_checkpoint_debug_gate is 0; a debugger that
 *        re-attaches finds every thread here.
 *    void MPIR_checkpoint_debugger_waitpoint(void)
 *        every thread but the checkpoint thread closes the gate and waits
 *        in MPIR_checkpoint_debugger_breakpoint().
 *    void MPIR_checkpoint_debugger_crs_hook(int state)
 *        run by every thread after a checkpoint (state
 *        CRDBG_CRS_STATE_CONTINUE, 1) or a restart (CRDBG_CRS_STATE_RESTART,
 *        2): waits for the debugger if one will attach, else opens the gate.
 *
 * Internal symbols
 * ----------------
 *
 * crdbg_runtime_info, crdbg_hook_trampoline and crdbg_hook_entry are
 * exported for crdbg itself, which reads the first from the program's
 * memory and pushes the trampoline on every thread; programs must not
 * use them.
 *
 * Environment
 * ===========
 *
 *    CRDBG_BIN        the crdbg command the MPIR commands name (default crdbg)
 *    CRDBG_STORE      the checkpoint store the MPIR commands name
 *    CRDBG_NO_AGENT   no checkpoint thread in this process
 *
 * Files
 * =====
 *
 *    PREFIX/lib/libcrdbg.so               the library
 *    PREFIX/include/crdbg/mpir.h          this header
 *
 * See also
 * ========
 *
 * crdbg(1), crdbg.ko(4), gdb(1)
 */
#ifndef CRDBG_MPIR_H
#define CRDBG_MPIR_H

#ifdef __cplusplus
extern "C" {
#endif

#define CRDBG_CRS_STATE_CONTINUE	1
#define CRDBG_CRS_STATE_RESTART		2

extern volatile int MPIR_checkpointable;
extern volatile int MPIR_debug_with_checkpoint;
extern volatile int MPIR_checkpoint_debug_gate;
extern char *MPIR_checkpoint_command;
extern char *MPIR_restart_command;
extern char *MPIR_checkpoint_listing_command;
extern char *MPIR_controller_hostname;

int MPIR_checkpoint_debugger_detach(void);
void MPIR_checkpoint_debugger_breakpoint(void);
void MPIR_checkpoint_debugger_waitpoint(void);
void MPIR_checkpoint_debugger_crs_hook(int state);

#ifdef __cplusplus
}
#endif

#endif /* CRDBG_MPIR_H */
