/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A hook-push target for both freeze backends: threads that keep canaries
 * in every general-purpose register (but rsp) and in xmm0-15 (ymm0-15 with
 * AVX) and check them in an assembly loop, one thread in a 5 s nanosleep,
 * and a hook, ft_hook_c(), that clobbers every register it may. Both
 * backends enter it through the runtime's crdbg_hook_trampoline
 * (usr/runtime/hook-trampoline.S, linked into test_freeze), which saves
 * the x87/SSE/AVX state itself and returns by write() to /dev/crdbg
 * (return_via KMOD, crdbg.ko) or by restoring the frame's registers in
 * user space (return_via USER, the ptrace backend). It calls
 * crdbg_hook_entry(arg), defined below.
 */
#ifndef CRDBG_HOOK_CANARY_H
#define CRDBG_HOOK_CANARY_H

#include <linux/crdbg.h>

#include "freeze-test.h"

#define HC_THREADS	4
#define HC_SLEEP_S	5

/* Offsets are used by the assembly below: keep them in sync. */
struct hc_slot {
	uint64_t count;		/* 0: loop iterations */
	uint64_t stop;		/* 8: set to leave the loop */
	uint64_t bad;		/* 16: the loop saw a changed register */
	uint64_t avx;		/* 24: check ymm upper halves */
	uint64_t self;		/* 32: this slot's address (r15) */
	uint64_t gpr[14];	/* 40: rax rbx rcx rdx rsi rdi rbp r8-r14 */
	uint64_t pad;
	uint8_t vec[16][32];	/* 160: ymm0-15 */
	uint64_t done;
	uint64_t pad2[3];
} __attribute__((aligned(32)));

_Static_assert(__builtin_offsetof(struct hc_slot, vec) == 160, "hc_slot layout");

struct hc_shared {
	struct hc_slot slot[HC_THREADS];
	int avx;
	volatile int started;
	volatile int nr_hooks;
	volatile int frames_ok;
	volatile int hook_tid[64];
	volatile int ns_started, ns_done, ns_err;
	volatile int64_t ns_elapsed_ns;
	volatile uint64_t return_via;	/* the frame's expected return_via */
};

/* int ft_canary_loop(struct hc_slot *slot): 0 when every check passed */
int ft_canary_loop(struct hc_slot *slot);
__asm__(
".text\n"
".globl ft_canary_loop\n"
".type ft_canary_loop,@function\n"
"ft_canary_loop:\n"
"	push %rbp\n	push %rbx\n	push %r12\n	push %r13\n	push %r14\n	push %r15\n"
"	mov %rdi, %r15\n"
"	cmpq $0, 24(%r15)\n	je 1f\n"
"	vmovdqu 160(%r15), %ymm0\n"
"	vmovdqu 192(%r15), %ymm1\n"
"	vmovdqu 224(%r15), %ymm2\n"
"	vmovdqu 256(%r15), %ymm3\n"
"	vmovdqu 288(%r15), %ymm4\n"
"	vmovdqu 320(%r15), %ymm5\n"
"	vmovdqu 352(%r15), %ymm6\n"
"	vmovdqu 384(%r15), %ymm7\n"
"	vmovdqu 416(%r15), %ymm8\n"
"	vmovdqu 448(%r15), %ymm9\n"
"	vmovdqu 480(%r15), %ymm10\n"
"	vmovdqu 512(%r15), %ymm11\n"
"	vmovdqu 544(%r15), %ymm12\n"
"	vmovdqu 576(%r15), %ymm13\n"
"	vmovdqu 608(%r15), %ymm14\n"
"	vmovdqu 640(%r15), %ymm15\n"
"	jmp 2f\n"
"1:\n"
"	movdqu 160(%r15), %xmm0\n"
"	movdqu 192(%r15), %xmm1\n"
"	movdqu 224(%r15), %xmm2\n"
"	movdqu 256(%r15), %xmm3\n"
"	movdqu 288(%r15), %xmm4\n"
"	movdqu 320(%r15), %xmm5\n"
"	movdqu 352(%r15), %xmm6\n"
"	movdqu 384(%r15), %xmm7\n"
"	movdqu 416(%r15), %xmm8\n"
"	movdqu 448(%r15), %xmm9\n"
"	movdqu 480(%r15), %xmm10\n"
"	movdqu 512(%r15), %xmm11\n"
"	movdqu 544(%r15), %xmm12\n"
"	movdqu 576(%r15), %xmm13\n"
"	movdqu 608(%r15), %xmm14\n"
"	movdqu 640(%r15), %xmm15\n"
"2:\n"
"	mov 40(%r15), %rax\n"
"	mov 48(%r15), %rbx\n"
"	mov 56(%r15), %rcx\n"
"	mov 64(%r15), %rdx\n"
"	mov 72(%r15), %rsi\n"
"	mov 80(%r15), %rdi\n"
"	mov 88(%r15), %rbp\n"
"	mov 96(%r15), %r8\n"
"	mov 104(%r15), %r9\n"
"	mov 112(%r15), %r10\n"
"	mov 120(%r15), %r11\n"
"	mov 128(%r15), %r12\n"
"	mov 136(%r15), %r13\n"
"	mov 144(%r15), %r14\n"
"3:\n"
"	cmp 32(%r15), %r15\n	jne 9f\n"
"	cmp 40(%r15), %rax\n	jne 9f\n"
"	cmp 48(%r15), %rbx\n	jne 9f\n"
"	cmp 56(%r15), %rcx\n	jne 9f\n"
"	cmp 64(%r15), %rdx\n	jne 9f\n"
"	cmp 72(%r15), %rsi\n	jne 9f\n"
"	cmp 80(%r15), %rdi\n	jne 9f\n"
"	cmp 88(%r15), %rbp\n	jne 9f\n"
"	cmp 96(%r15), %r8\n	jne 9f\n"
"	cmp 104(%r15), %r9\n	jne 9f\n"
"	cmp 112(%r15), %r10\n	jne 9f\n"
"	cmp 120(%r15), %r11\n	jne 9f\n"
"	cmp 128(%r15), %r12\n	jne 9f\n"
"	cmp 136(%r15), %r13\n	jne 9f\n"
"	cmp 144(%r15), %r14\n	jne 9f\n"
"	movq %xmm0, %rax\n	cmp 160(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm0, %rax\n	cmp 168(%r15), %rax\n	jne 9f\n"
"	movq %xmm1, %rax\n	cmp 192(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm1, %rax\n	cmp 200(%r15), %rax\n	jne 9f\n"
"	movq %xmm2, %rax\n	cmp 224(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm2, %rax\n	cmp 232(%r15), %rax\n	jne 9f\n"
"	movq %xmm3, %rax\n	cmp 256(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm3, %rax\n	cmp 264(%r15), %rax\n	jne 9f\n"
"	movq %xmm4, %rax\n	cmp 288(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm4, %rax\n	cmp 296(%r15), %rax\n	jne 9f\n"
"	movq %xmm5, %rax\n	cmp 320(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm5, %rax\n	cmp 328(%r15), %rax\n	jne 9f\n"
"	movq %xmm6, %rax\n	cmp 352(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm6, %rax\n	cmp 360(%r15), %rax\n	jne 9f\n"
"	movq %xmm7, %rax\n	cmp 384(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm7, %rax\n	cmp 392(%r15), %rax\n	jne 9f\n"
"	movq %xmm8, %rax\n	cmp 416(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm8, %rax\n	cmp 424(%r15), %rax\n	jne 9f\n"
"	movq %xmm9, %rax\n	cmp 448(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm9, %rax\n	cmp 456(%r15), %rax\n	jne 9f\n"
"	movq %xmm10, %rax\n	cmp 480(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm10, %rax\n	cmp 488(%r15), %rax\n	jne 9f\n"
"	movq %xmm11, %rax\n	cmp 512(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm11, %rax\n	cmp 520(%r15), %rax\n	jne 9f\n"
"	movq %xmm12, %rax\n	cmp 544(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm12, %rax\n	cmp 552(%r15), %rax\n	jne 9f\n"
"	movq %xmm13, %rax\n	cmp 576(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm13, %rax\n	cmp 584(%r15), %rax\n	jne 9f\n"
"	movq %xmm14, %rax\n	cmp 608(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm14, %rax\n	cmp 616(%r15), %rax\n	jne 9f\n"
"	movq %xmm15, %rax\n	cmp 640(%r15), %rax\n	jne 9f\n"
"	pextrq $1, %xmm15, %rax\n	cmp 648(%r15), %rax\n	jne 9f\n"
"	cmpq $0, 24(%r15)\n	je 4f\n"
"	vextractf128 $1, %ymm0, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 176(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 184(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm1, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 208(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 216(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm2, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 240(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 248(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm3, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 272(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 280(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm4, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 304(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 312(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm5, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 336(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 344(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm6, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 368(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 376(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm7, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 400(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 408(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm8, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 432(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 440(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm9, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 464(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 472(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm10, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 496(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 504(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm11, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 528(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 536(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm12, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 560(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 568(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm13, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 592(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 600(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm14, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 624(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 632(%r15), %rax\n	jne 9f\n"
"	vextractf128 $1, %ymm15, -32(%rsp)\n	mov -32(%rsp), %rax\n	cmp 656(%r15), %rax\n	jne 9f\n"
"	mov -24(%rsp), %rax\n	cmp 664(%r15), %rax\n	jne 9f\n"
"4:\n"
"	mov 40(%r15), %rax\n"
"	incq 0(%r15)\n"
"	cmpq $0, 8(%r15)\n	je 3b\n"
"	xor %eax, %eax\n	jmp 8f\n"
"9:	mov $1, %eax\n"
"8:	pop %r15\n	pop %r14\n	pop %r13\n	pop %r12\n	pop %rbx\n	pop %rbp\n"
"	ret\n"
".size ft_canary_loop, .-ft_canary_loop\n"
);

void ft_hook_c(uint64_t arg, const struct crdbg_hook_frame *frame);

/*
 * The runtime trampoline's hook entry: crdbg_hook_entry(arg). It keeps the
 * frame address in r13 across the call (its CFI, which lets a debugger
 * unwind from the hook into the interrupted code, is built on that), so
 * pass it on to ft_hook_c() as the frame.
 */
void crdbg_hook_trampoline(void);
void crdbg_hook_entry(uint64_t arg);
__asm__(
".text\n"
".globl crdbg_hook_entry\n"
".type crdbg_hook_entry,@function\n"
"crdbg_hook_entry:\n"
"	mov %r13, %rsi\n"
"	jmp ft_hook_c\n"
".size crdbg_hook_entry, .-crdbg_hook_entry\n"
);

__attribute__((used, noinline)) void ft_hook_c(uint64_t arg, const struct crdbg_hook_frame *frame)
{
	struct hc_shared *hs = (struct hc_shared *)arg;
	int i = __atomic_fetch_add(&hs->nr_hooks, 1, __ATOMIC_SEQ_CST);

	if (i < 64)
		hs->hook_tid[i] = (int)syscall(SYS_gettid);
	if (frame->magic == CRDBG_HOOK_MAGIC && frame->arg == arg &&
	    frame->return_via == hs->return_via && frame->size == sizeof(*frame))
		__atomic_add_fetch(&hs->frames_ok, 1, __ATOMIC_SEQ_CST);
	if (hs->avx)
		__asm__ volatile(
			"vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n"
			"vmovdqa %%ymm0, %%ymm1\n vmovdqa %%ymm0, %%ymm2\n vmovdqa %%ymm0, %%ymm3\n"
			"vmovdqa %%ymm0, %%ymm4\n vmovdqa %%ymm0, %%ymm5\n vmovdqa %%ymm0, %%ymm6\n"
			"vmovdqa %%ymm0, %%ymm7\n vmovdqa %%ymm0, %%ymm8\n vmovdqa %%ymm0, %%ymm9\n"
			"vmovdqa %%ymm0, %%ymm10\n vmovdqa %%ymm0, %%ymm11\n vmovdqa %%ymm0, %%ymm12\n"
			"vmovdqa %%ymm0, %%ymm13\n vmovdqa %%ymm0, %%ymm14\n vmovdqa %%ymm0, %%ymm15\n"
			::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
			"xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	else
		__asm__ volatile(
			"pcmpeqd %%xmm0, %%xmm0\n"
			"movdqa %%xmm0, %%xmm1\n movdqa %%xmm0, %%xmm2\n movdqa %%xmm0, %%xmm3\n"
			"movdqa %%xmm0, %%xmm4\n movdqa %%xmm0, %%xmm5\n movdqa %%xmm0, %%xmm6\n"
			"movdqa %%xmm0, %%xmm7\n movdqa %%xmm0, %%xmm8\n movdqa %%xmm0, %%xmm9\n"
			"movdqa %%xmm0, %%xmm10\n movdqa %%xmm0, %%xmm11\n movdqa %%xmm0, %%xmm12\n"
			"movdqa %%xmm0, %%xmm13\n movdqa %%xmm0, %%xmm14\n movdqa %%xmm0, %%xmm15\n"
			::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
			"xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	__asm__ volatile(
		"mov $-1, %%rax\n mov %%rax, %%rcx\n mov %%rax, %%rdx\n mov %%rax, %%rsi\n"
		"mov %%rax, %%rdi\n mov %%rax, %%r8\n mov %%rax, %%r9\n mov %%rax, %%r10\n"
		"mov %%rax, %%r11\n mov %%rax, %%rbx\n mov %%rax, %%r12\n mov %%rax, %%r13\n"
		"mov %%rax, %%r14\n mov %%rax, %%r15\n"
		::: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "rbx", "r12",
		"r13", "r14", "r15", "memory");
}

static struct hc_shared *hc_sh;

static void *hc_canary_thread(void *arg)
{
	struct hc_slot *s = arg;

	__atomic_add_fetch(&hc_sh->started, 1, __ATOMIC_SEQ_CST);
	s->bad = ft_canary_loop(s) ? 1 : 0;
	s->done = 1;
	return NULL;
}

static void *hc_sleep_thread(void *arg)
{
	struct timespec ts = { HC_SLEEP_S, 0 }, t0, t1;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	hc_sh->ns_started = 1;
	hc_sh->ns_err = nanosleep(&ts, NULL) ? errno : 0;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	hc_sh->ns_elapsed_ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	hc_sh->ns_done = 1;
	return NULL;
}

static void hc_child_main(struct hc_shared *hs)
{
	int k, j, b;

	hc_sh = hs;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (k = 0; k < HC_THREADS; k++) {
		struct hc_slot *s = &hs->slot[k];

		s->self = (uint64_t)s;
		s->avx = hs->avx;
		for (j = 0; j < 14; j++)
			s->gpr[j] = 0x0101010101010101ULL * (uint64_t)(j + 1) ^ ((uint64_t)k << 56);
		for (j = 0; j < 16; j++)
			for (b = 0; b < 32; b++)
				s->vec[j][b] = (uint8_t)(k * 64 + j * 3 + b * 7 + 1);
		ft_start(hc_canary_thread, s);
	}
	ft_start(hc_sleep_thread, NULL);
	for (;;)
		pause();
}

static pid_t hc_spawn(struct hc_shared *hs)
{
	pid_t pid;
	int i, k;

	memset(hs, 0, sizeof(*hs));
	hs->avx = __builtin_cpu_supports("avx");
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid)
		hc_child_main(hs);
	for (i = 0; i < 20000; i++) {
		int all = hs->started == HC_THREADS && hs->ns_started;

		for (k = 0; k < HC_THREADS && all; k++)
			all = hs->slot[k].count > 0;
		if (all)
			return pid;
		usleep(1000);
	}
	ft_kill(pid);
	return -ETIMEDOUT;
}

#endif /* CRDBG_HOOK_CANARY_H */
