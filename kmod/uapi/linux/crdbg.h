/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * crdbg: exact freeze, thaw, query and callback push for checkpoint-aware
 * debugging (see Documentation/kmod.md).
 *
 * Documentation
 * =============
 *
 * Generic netlink family CRDBG_GENL_NAME, version CRDBG_GENL_VERSION.
 * Every request is validated strictly: an unknown attribute, a wrong
 * length or an unknown flag bit fails with -EINVAL (or -ERANGE) and an
 * extended-ack message naming what was wrong. "target" below means a
 * process (thread group) named by CRDBG_A_PID, a pid in the caller's pid
 * namespace. A caller may act on a target only if it could ptrace-attach to
 * every thread of it, and "caller" means both the process that opened the
 * netlink socket (its credentials at socket() time) and the one writing
 * the request: CAP_SYS_PTRACE over the target, or else
 * ptrace_may_access(PTRACE_MODE_ATTACH_REALCREDS) on every thread (so
 * Yama's ptrace_scope and the LSMs decide), or else CRDBG_A_PROC_MEM_FD: an
 * open /proc/<pid>/mem of the target in the writer's fd table (opening it
 * ran the kernel's attach check), counted when the writer is the opener and
 * every thread has the same credentials. A CRDBG_A_PROC_MEM_FD that is not
 * such an fd fails the request whoever sends it. A denied request fails
 * with -EPERM and changes nothing.
 *
 * CRDBG_CMD_GET_STATUS
 * --------------------
 *
 * Request: no attributes. Reply:
 *
 *    CRDBG_A_VERSION: NLA_NUL_STRING, module version ("0.1.0")
 *    CRDBG_A_NR_FROZEN: NLA_U32, number of processes currently frozen
 *
 * CRDBG_CMD_FREEZE
 * ----------------
 *
 *    CRDBG_A_PID: NLA_U32, required
 *    CRDBG_A_FLAGS: NLA_U32, optional, CRDBG_F_*
 *    CRDBG_A_PROC_MEM_FD: NLA_U32, optional
 *
 * Returns (acks) once no thread of the target can execute another
 * user-mode instruction: every thread is parked in the kernel, or is
 * asleep in the kernel and will park before it returns to user mode, or is
 * held by a ptrace tracer (then it parks when the tracer lets go). Threads
 * created later are frozen before their first instruction. The freeze
 * belongs to the requesting netlink socket and is released when that
 * socket closes, unless CRDBG_F_PERSIST is set. FREEZE waits at most two
 * seconds: a thread that has neither parked nor been seen off CPU by then
 * (one that stays runnable, say throttled by its cgroup, is off CPU and in
 * the kernel, so it counts as held) is reported CRDBG_THREAD_PENDING
 * without registers, and FREEZE returns 0 with what it has. A freeze
 * survives an exec of the target only if the exec keeps the credentials
 * and the dumpable flag the target was frozen with; any other exec ends it
 * (EXECED, then THAWED). -EALREADY if the target is already frozen, -ESRCH
 * if it does not exist (or CRDBG_A_PID names a thread, not a process) or
 * exited, exec'd or was thawed while being frozen, -EDEADLK for the
 * caller's own process, -EINTR if the caller was killed while waiting (the
 * target is then thawed again).
 *
 * CRDBG_CMD_THAW
 * --------------
 *
 *    CRDBG_A_PID: NLA_U32, required
 *    CRDBG_A_PROC_MEM_FD: NLA_U32, optional
 *
 * Releases every thread; each one first runs its pending hook, if any.
 * -ENOENT if the target is not frozen.
 *
 * CRDBG_CMD_QUERY
 * ---------------
 *
 * Request: CRDBG_A_PID (required) and optional CRDBG_A_PROC_MEM_FD. The
 * reply (one message, sized to the thread count; read it with MSG_PEEK or
 * a large buffer) carries:
 *
 *    CRDBG_A_PID: NLA_U32
 *    CRDBG_A_FLAGS: NLA_U32, CRDBG_F_* the freeze was made with
 *    CRDBG_A_OWNER_PORTID: NLA_U32, owning socket's port id, 0 if persistent
 *    CRDBG_A_THREADS: NLA_NESTED
 *        0: NLA_NESTED
 *            CRDBG_THREAD_A_TID: NLA_U32
 *            CRDBG_THREAD_A_STATE: NLA_U32, enum crdbg_thread_state
 *            CRDBG_THREAD_A_FLAGS: NLA_U32, CRDBG_THREAD_F_*
 *            CRDBG_THREAD_A_REGS: binary struct crdbg_regs, only when the
 *                                 thread has parked at least once
 *        0: NLA_NESTED
 *            ...
 *
 * More than about 4,000 threads do not fit in one reply: -E2BIG.
 *
 * With NLM_F_DUMP (attributes ignored) the kernel lists every frozen
 * process the caller may act on, one NLM_F_MULTI message each, carrying
 * CRDBG_A_PID, CRDBG_A_FLAGS and CRDBG_A_OWNER_PORTID but no threads. The
 * cursor is a position in the list: a freeze or thaw during the dump may
 * make an entry appear twice or not at all.
 *
 * CRDBG_CMD_PUSH_HOOK
 * -------------------
 *
 *    CRDBG_A_PID: NLA_U32, required; the target must be frozen
 *    CRDBG_A_TRAMPOLINE: NLA_U64, required, user address of the trampoline
 *    CRDBG_A_HOOK_ARG: NLA_U64, required, passed to the trampoline
 *    CRDBG_A_TID: NLA_U32, optional, only this thread
 *    CRDBG_A_PROC_MEM_FD: NLA_U32, optional
 *
 * Each selected thread, when it is released by THAW, first runs the
 * trampoline on its own stack (see "The hook frame" below), then resumes at
 * its exact original PC with every GPR, the flags and (through the
 * trampoline) the x87/SSE/AVX state unchanged. A restartable system call it
 * was interrupted in is restarted as if nothing had happened (also
 * -ERESTART_RESTARTBLOCK ones such as nanosleep: the saved restart_block is
 * put back, so they complete their full duration). -EBUSY if a hook is
 * already pending on a selected thread, -ESRCH if the TID is not a thread
 * of the target, -ENOENT if the target is not frozen, -EINVAL if the
 * trampoline is not a user address, -ESTALE if a selected thread exec'd,
 * changed credentials since the freeze or the target lost its dumpable
 * flag (the extack says which). Each hook records its thread's exec
 * generation, credentials and dumpable flag; at delivery a change in any of
 * them drops the hook (CRDBG_EVENT_HOOK_DROPPED says why). A hook pending
 * when the target execs, or when the module is unloaded, is dropped.
 *
 * CRDBG_CMD_EVENT (multicast group CRDBG_MCGRP_EVENTS only)
 * --------------------------------------------------------
 *
 * Sent in the initial network namespace only; joining the group needs
 * CAP_SYS_ADMIN there (GENL_MCAST_CAP_SYS_ADMIN).
 *
 *    CRDBG_A_EVENT: NLA_U32, enum crdbg_event
 *    CRDBG_A_PID: NLA_U32, in the initial pid namespace
 *    CRDBG_A_TID: NLA_U32, for CRDBG_EVENT_HOOK_RAN and a HOOK_DROPPED at
 *                 delivery
 *    CRDBG_A_REASON: NLA_U32, enum crdbg_hook_drop, for HOOK_DROPPED
 *
 * THAWED (or RELEASED) is sent before any thread of the target leaves its
 * park, so it precedes the target's HOOK_RAN events.
 *
 * The hook frame
 * ==============
 *
 * When a thread is released with a hook pending, the kernel saves its user
 * registers and restart_block, folds a pending system-call restart into
 * them (ip back onto the syscall instruction, ax = the syscall number or
 * __NR_restart_syscall), moves ip to abort_ip if it was inside an rseq
 * critical section, and then enters user mode at the trampoline with:
 *
 *    rip = CRDBG_A_TRAMPOLINE
 *    rsp = address of a struct crdbg_hook_frame, 16-byte aligned, placed
 *          below the interrupted rsp minus the 128-byte red zone
 *    rdi = the hook argument (also in frame->arg)
 *    rsi = the hook's return fd (see CRDBG_HOOK_RETURN_KMOD below)
 *    rflags: DF and TF cleared; every other register as interrupted
 *
 * The trampoline must preserve the x87/SSE/AVX state itself (xsave/xrstor),
 * call the hook, and then return through frame->return_via:
 *
 *    CRDBG_HOOK_RETURN_KMOD: write() a struct crdbg_hook_return to the
 *        return fd passed in rsi. The kernel installs that fd in the
 *        hooked thread at delivery, close-on-exec, as an anonymous file
 *        bound to this hook in this thread. The write does not return to
 *        the trampoline: the kernel restores the saved registers (rax
 *        included, as the write's return value) and restart_block, closes
 *        the fd, and the thread continues at its original ip. A write with
 *        a wrong cookie, from another thread or process, after an exec
 *        (which drops the hook and its cookie) or through the fd of
 *        another hook fails with -EINVAL and changes nothing. While the fd
 *        is open the module cannot be unloaded.
 *    CRDBG_HOOK_RETURN_USER: restore frame->regs in user space: every GPR,
 *        the flags, rip and rsp (rip and the flags pass through a 16-byte
 *        slot just below the interrupted red zone). restart_block is not
 *        touched, so a pusher without the module (crdbg's ptrace backend)
 *        folds the syscall restart into frame->regs itself and can detach
 *        before the hook runs. The KMOD path falls back to this when the
 *        write to the return fd fails (the hook closed it).
 *
 * frame->regs holds the registers the thread resumes with (after the
 * restart folding), for the hook to inspect; with KMOD changing them has
 * no effect, with USER they are what the thread resumes with.
 *
 * Loading
 * =======
 *
 * The crdbg-dkms package (or "make install" and "dkms install
 * crdbg/VERSION") builds the module for every installed kernel and
 * rebuilds it when a new kernel is installed. "modprobe crdbg" loads it;
 * it also loads itself when a program first resolves the CRDBG_GENL_NAME
 * generic netlink family (module alias net-pf-16-proto-16-family-crdbg),
 * as "crdbg kmod status" does. It takes no parameters. CRDBG_HOOK_DEVICE
 * (/dev/crdbg, mode 0600) opens read-only and does nothing: root's probe
 * for a loaded module. Hooks never return through it.
 *
 * See also
 * ========
 *
 * crdbg(1), libcrdbg(3)
 */

#ifndef _UAPI_LINUX_CRDBG_H
#define _UAPI_LINUX_CRDBG_H

#include <linux/types.h>

#define CRDBG_GENL_NAME "crdbg"
#define CRDBG_GENL_VERSION 1
#define CRDBG_MCGRP_EVENTS "events"
#define CRDBG_HOOK_DEVICE "/dev/crdbg"

enum crdbg_cmd {
	CRDBG_CMD_UNSPEC,
	CRDBG_CMD_GET_STATUS,
	CRDBG_CMD_FREEZE,
	CRDBG_CMD_THAW,
	CRDBG_CMD_QUERY,
	CRDBG_CMD_PUSH_HOOK,
	CRDBG_CMD_EVENT,
	__CRDBG_CMD_MAX
};
#define CRDBG_CMD_MAX (__CRDBG_CMD_MAX - 1)

enum crdbg_freeze_flag {
	CRDBG_F_PERSIST = 1U << 0,	/* survive the requesting socket's close */
	__CRDBG_F_ALL = CRDBG_F_PERSIST
};

enum crdbg_attr {
	CRDBG_A_UNSPEC,
	CRDBG_A_VERSION,
	CRDBG_A_NR_FROZEN,
	CRDBG_A_PID,
	CRDBG_A_FLAGS,
	CRDBG_A_PROC_MEM_FD,
	CRDBG_A_TID,
	CRDBG_A_TRAMPOLINE,
	CRDBG_A_HOOK_ARG,
	CRDBG_A_OWNER_PORTID,
	CRDBG_A_THREADS,
	CRDBG_A_EVENT,
	CRDBG_A_PAD,
	CRDBG_A_REASON,
	__CRDBG_A_LAST
};
#define CRDBG_A_MAX (__CRDBG_A_LAST - 1)

enum crdbg_thread_attr {
	CRDBG_THREAD_A_UNSPEC,
	CRDBG_THREAD_A_TID,
	CRDBG_THREAD_A_STATE,
	CRDBG_THREAD_A_FLAGS,
	CRDBG_THREAD_A_REGS,
	__CRDBG_THREAD_A_LAST
};
#define CRDBG_THREAD_A_MAX (__CRDBG_THREAD_A_LAST - 1)

enum crdbg_thread_state {
	CRDBG_THREAD_PENDING,	/* in the kernel, parks before user mode */
	CRDBG_THREAD_PARKED,	/* parked; regs are its user registers */
	CRDBG_THREAD_TRACED,	/* left to a ptrace tracer; parks on detach */
	CRDBG_THREAD_EXITED,
	__CRDBG_THREAD_STATE_MAX
};

enum crdbg_thread_flag {
	CRDBG_THREAD_F_HOOK_PENDING = 1U << 0,
	CRDBG_THREAD_F_HOOK_IN_FLIGHT = 1U << 1,	/* running its hook now */
	__CRDBG_THREAD_F_ALL = CRDBG_THREAD_F_HOOK_PENDING | CRDBG_THREAD_F_HOOK_IN_FLIGHT
};

enum crdbg_event {
	CRDBG_EVENT_FROZEN = 1,
	CRDBG_EVENT_THAWED,
	CRDBG_EVENT_HOOK_RAN,
	CRDBG_EVENT_EXITED,
	CRDBG_EVENT_EXECED,
	CRDBG_EVENT_RELEASED,	/* owner socket closed; thawed */
	CRDBG_EVENT_HOOK_DROPPED,	/* a hook was not run; CRDBG_A_REASON says why */
	__CRDBG_EVENT_MAX
};

/* CRDBG_A_REASON of CRDBG_EVENT_HOOK_DROPPED. */
enum crdbg_hook_drop {
	CRDBG_HOOK_DROP_EXEC = 1,	/* the thread exec'd after PUSH_HOOK */
	CRDBG_HOOK_DROP_CREDS,		/* its credentials changed */
	CRDBG_HOOK_DROP_DUMPABLE,	/* the target lost its dumpable flag */
	CRDBG_HOOK_DROP_FAILED,		/* no frame: a bad stack, 32-bit mode, a hook running */
	__CRDBG_HOOK_DROP_MAX
};

/* x86-64 user registers, in the order of struct user_regs_struct. */
struct crdbg_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10;
	__u64 r9, r8, ax, cx, dx, si, di, orig_ax;
	__u64 ip, cs, flags, sp, ss, fs_base, gs_base;
	__u64 ds, es, fs, gs;
};

#define CRDBG_HOOK_MAGIC 0x314b4f4847424452ULL	/* "RDBGHOK1" little-endian */

enum crdbg_hook_return_via {
	CRDBG_HOOK_RETURN_KMOD = 0,
	CRDBG_HOOK_RETURN_USER = 1,
};

/* Written by the pusher at the trampoline's entry rsp. */
struct crdbg_hook_frame {
	__u64 magic;		/* CRDBG_HOOK_MAGIC */
	__u64 arg;		/* the hook argument, also in rdi */
	__u64 return_via;	/* enum crdbg_hook_return_via */
	__u64 cookie;		/* echo in struct crdbg_hook_return */
	__u64 size;		/* sizeof(struct crdbg_hook_frame) */
	__u64 reserved;
	struct crdbg_regs regs;	/* registers the thread resumes with */
	__u64 pad;		/* keeps the size a multiple of 16 */
};

/*
 * The one layout of a pushed hook frame, used by crdbg.ko, the ptrace
 * backend and the debug servers (which push it through gdb): fill *frame
 * for a thread interrupted with *regs and return the trampoline's entry
 * rsp, below the interrupted rsp's red zone, 16-byte aligned. A system
 * call the thread was interrupted in is folded into the saved registers
 * the way the kernel restarts one for an SA_RESTART signal handler (ax
 * back to the call number, ip back over the 2-byte syscall instruction),
 * so the thread returns into the call. The pusher then sets rsp to the
 * returned address, ip to the trampoline, di to arg, orig_ax to -1 (no
 * restart on this return) and clears DF and TF.
 */
#define CRDBG_HOOK_RED_ZONE		128
#define CRDBG_NR_RESTART_SYSCALL	219	/* x86-64 __NR_restart_syscall */

static inline __u64 crdbg_hook_frame_init(struct crdbg_hook_frame *frame,
					  const struct crdbg_regs *regs,
					  __u64 arg, __u64 return_via,
					  __u64 cookie)
{
	__s64 ax = (__s64)regs->ax;

	*frame = (struct crdbg_hook_frame){
		.magic = CRDBG_HOOK_MAGIC,
		.arg = arg,
		.return_via = return_via,
		.cookie = cookie,
		.size = sizeof(*frame),
		.regs = *regs,
	};
	if ((__s64)regs->orig_ax >= 0) {
		/* -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND */
		if (ax == -512 || ax == -513 || ax == -514) {
			frame->regs.ax = regs->orig_ax;
			frame->regs.ip -= 2;
		} else if (ax == -516) {	/* -ERESTART_RESTARTBLOCK */
			frame->regs.ax = CRDBG_NR_RESTART_SYSCALL;
			frame->regs.ip -= 2;
		}
	}
	return (regs->sp - CRDBG_HOOK_RED_ZONE - sizeof(*frame)) & ~15ULL;
}

/* write() this to the hook's return fd to return (CRDBG_HOOK_RETURN_KMOD). */
struct crdbg_hook_return {
	__u64 cookie;		/* frame->cookie */
	__s32 fd;		/* the fd being written; the kernel closes it */
	__u32 reserved;		/* 0 */
};

#endif /* _UAPI_LINUX_CRDBG_H */
