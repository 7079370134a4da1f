/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The current thread's user registers as its NT_PRSTATUS regset (the
 * layout of struct user_regs_struct, which the UAPI's register dumps and
 * the hook frame follow). x86-64 only: the hook frame, the trampoline and
 * the register layout are that architecture's.
 */
#ifndef CRDBG_REGS_H
#define CRDBG_REGS_H

#ifndef CONFIG_X86_64
#error "crdbg.ko supports x86-64 only (its hook frame and register layout are x86-64's)"
#endif

#include <linux/types.h>
#include <asm/user.h>

/* true when the whole regset was read into @ur. */
bool crdbg_user_regs(struct user_regs_struct *ur);

#endif /* CRDBG_REGS_H */
