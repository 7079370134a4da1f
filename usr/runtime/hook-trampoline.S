/* SPDX-License-Identifier: GPL-2.0 */
/*
 * crdbg_hook_trampoline: where a pushed hook enters user mode (x86-64).
 *
 * Entry contract (see "The hook frame" in <linux/crdbg.h>): rsp points at
 * a 16-byte aligned struct crdbg_hook_frame, rdi holds the hook argument,
 * rsi the return fd (CRDBG_HOOK_RETURN_KMOD only), DF is clear; every other register still holds the interrupted value and
 * may be clobbered here, because the return path restores them all.
 *
 * The trampoline saves the whole x87/SSE/AVX state with xsave64 (mask from
 * xgetbv(0), size from CPUID leaf 0xd), calls crdbg_hook_entry(arg) on a
 * 64-byte aligned stack, restores the extended state with xrstor64, and
 * returns as frame->return_via says:
 *
 *   CRDBG_HOOK_RETURN_KMOD: write() a struct crdbg_hook_return to the
 *     return fd crdbg.ko installed in this thread at delivery (in rsi at
 *     entry, kept in r15 across the hook); crdbg.ko restores every GPR,
 *     the flags, rip, rsp and restart_block, closes the fd, and the write
 *     "returns" at the original rip. The fd's file is bound to this hook
 *     in this thread, so a write from anywhere else is refused. If the
 *     write fails anyway (the hook closed the fd), the fd is closed and
 *     the registers are restored from frame->regs in user space instead:
 *     exact too, except that an interrupted nanosleep-like call restarts
 *     with whatever restart_block the hook left.
 *   CRDBG_HOOK_RETURN_USER: the registers are restored from frame->regs
 *     in user space (the ptrace backend, which detaches before the hook).
 */

#define FRAME_RETURN_VIA	16
#define FRAME_COOKIE		24
#define FRAME_REGS		48
#define REG(n)			(FRAME_REGS + 8 * (n))	/* struct crdbg_regs index */
#define R_R15	0
#define R_R14	1
#define R_R13	2
#define R_R12	3
#define R_BP	4
#define R_BX	5
#define R_R11	6
#define R_R10	7
#define R_R9	8
#define R_R8	9
#define R_AX	10
#define R_CX	11
#define R_DX	12
#define R_SI	13
#define R_DI	14
#define R_IP	16
#define R_FLAGS	18
#define R_SP	19

#define SYS_write	1
#define SYS_close	3

	.text
	.globl	crdbg_hook_trampoline
	.type	crdbg_hook_trampoline, @function
	.p2align 4
crdbg_hook_trampoline:
	.cfi_startproc
	.cfi_signal_frame		/* the "caller" pc is exact, not a return address */
	.cfi_undefined rip
	movq	%rsp, %r13		/* r13 = frame, callee-saved across the hook */
	/*
	 * Unwind info: a debugger's backtrace from the hook continues into
	 * the interrupted code. CFA = frame->regs.sp; rip and the callee-saved
	 * registers are in frame->regs (DW_OP_breg13 = r13 + offset).
	 */
	.cfi_escape 0x0f, 0x04, 0x7d, 0xc8, 0x01, 0x06	/* CFA = *(r13 + 200) */
	.cfi_escape 0x10, 0x10, 0x03, 0x7d, 0xb0, 0x01	/* rip at r13 + 176 */
	.cfi_escape 0x10, 0x06, 0x03, 0x7d, 0xd0, 0x00	/* rbp at r13 + 80 */
	.cfi_escape 0x10, 0x03, 0x03, 0x7d, 0xd8, 0x00	/* rbx at r13 + 88 */
	.cfi_escape 0x10, 0x0c, 0x03, 0x7d, 0xc8, 0x00	/* r12 at r13 + 72 */
	.cfi_escape 0x10, 0x0d, 0x03, 0x7d, 0xc0, 0x00	/* r13 at r13 + 64 */
	.cfi_escape 0x10, 0x0e, 0x02, 0x7d, 0x38	/* r14 at r13 + 56 */
	.cfi_escape 0x10, 0x0f, 0x02, 0x7d, 0x30	/* r15 at r13 + 48 */
	movq	%rdi, %r12		/* r12 = arg */
	movq	%rsi, %r15		/* r15 = return fd (KMOD), callee-saved */

	movl	$0xd, %eax
	xorl	%ecx, %ecx
	cpuid				/* ebx = XSAVE area size for XCR0 */
	subq	%rbx, %rsp
	andq	$-64, %rsp
	movq	%rsp, %r14		/* r14 = XSAVE area */
	xorl	%eax, %eax		/* XRSTOR wants a clean XSAVE header */
	movq	%rax, 512(%r14)
	movq	%rax, 520(%r14)
	movq	%rax, 528(%r14)
	movq	%rax, 536(%r14)
	movq	%rax, 544(%r14)
	movq	%rax, 552(%r14)
	movq	%rax, 560(%r14)
	movq	%rax, 568(%r14)
	xorl	%ecx, %ecx
	xgetbv				/* edx:eax = XCR0, the components to save */
	xsave64	(%r14)

	cld
	movq	%r12, %rdi
	call	crdbg_hook_entry@PLT

	xorl	%ecx, %ecx
	xgetbv
	xrstor64 (%r14)
	movq	%r13, %rsp		/* back at the frame */
	cmpq	$1, FRAME_RETURN_VIA(%r13)	/* CRDBG_HOOK_RETURN_USER */
	je	.Luser_return

	/* CRDBG_HOOK_RETURN_KMOD: r15 is the return fd */
	testl	%r15d, %r15d
	js	.Luser_return
	subq	$16, %rsp		/* struct crdbg_hook_return */
	movq	FRAME_COOKIE(%r13), %rdx
	movq	%rdx, (%rsp)
	movl	%r15d, 8(%rsp)
	movl	$0, 12(%rsp)
	movl	%r15d, %edi
	movq	%rsp, %rsi
	movl	$16, %edx
	movl	$SYS_write, %eax
	syscall				/* does not come back here on success */
	movl	%r15d, %edi
	movl	$SYS_close, %eax
	syscall
	movq	%r13, %rsp

.Luser_return:
	/*
	 * Put rflags and rip just below the interrupted red zone, restore
	 * every GPR, then popfq and "ret $128" land at rip with rsp intact.
	 * The unwind info follows along: from here the CFA is rsp-based,
	 * and each callee-saved register is "same value" once it is back,
	 * r13 (the base of the remaining rules) last, so a debugger can
	 * step through this to the interrupted pc.
	 */
	movq	%r13, %rax
	movq	REG(R_SP)(%rax), %rcx
	subq	$(128 + 16), %rcx
	movq	REG(R_FLAGS)(%rax), %rdx
	movq	%rdx, (%rcx)
	movq	REG(R_IP)(%rax), %rdx
	movq	%rdx, 8(%rcx)
	movq	%rcx, %rsp
	.cfi_def_cfa rsp, 128 + 16
	.cfi_offset rip, -(128 + 8)
	movq	REG(R_R15)(%rax), %r15
	.cfi_same_value r15
	movq	REG(R_R14)(%rax), %r14
	.cfi_same_value r14
	movq	REG(R_R12)(%rax), %r12
	.cfi_same_value r12
	movq	REG(R_BP)(%rax), %rbp
	.cfi_same_value rbp
	movq	REG(R_BX)(%rax), %rbx
	.cfi_same_value rbx
	movq	REG(R_R11)(%rax), %r11
	movq	REG(R_R10)(%rax), %r10
	movq	REG(R_R9)(%rax), %r9
	movq	REG(R_R8)(%rax), %r8
	movq	REG(R_CX)(%rax), %rcx
	movq	REG(R_DX)(%rax), %rdx
	movq	REG(R_SI)(%rax), %rsi
	movq	REG(R_DI)(%rax), %rdi
	movq	REG(R_R13)(%rax), %r13
	.cfi_same_value r13
	movq	REG(R_AX)(%rax), %rax
	popfq
	.cfi_def_cfa_offset 128 + 8
	ret	$128
	.cfi_endproc
	.size	crdbg_hook_trampoline, .-crdbg_hook_trampoline

	.section .note.GNU-stack, "", @progbits
