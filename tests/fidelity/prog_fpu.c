// SPDX-License-Identifier: GPL-2.0
/*
 * FPU, SSE and AVX state held in registers across the checkpoint: a
 * thread loads all 16 vector registers (ymm with AVX, else xmm) with a
 * pattern, two values on the x87 stack, its own x87 control word and
 * MXCSR (rounding modes), then loops in assembly on nanosleep until the
 * word, and stores everything back. The main thread keeps its own MXCSR.
 * After the word each register is as loaded.
 */
#include <pthread.h>
#include <stdint.h>

#include "fidelity.h"

#define NREG 16

static volatile int go;
static uint8_t pat[NREG][32] __attribute__((aligned(32)));
static uint8_t out[NREG][32] __attribute__((aligned(32)));
static double x87_in[2] = { 3.25, -1234.5 }, x87_out[2];
static uint16_t cw_in = 0x0c7f, cw_out;	/* round toward zero, all masked, 64-bit */
static uint32_t csr_in = 0x5f80, csr_out;	/* round up, all masked */
static bool avx;
static const struct timespec nap = { 0, 20 * 1000000L };
static const struct timespec *nap_p = &nap;
static volatile int *go_p = &go;

#define VREGS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", \
	"xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

/* The loop between loading and storing: nanosleep until go is set. */
#define WAIT_LOOP \
	"1:	mov $35, %%eax\n" \
	"	mov %[nap], %%rdi\n" \
	"	xor %%esi, %%esi\n" \
	"	syscall\n" \
	"	mov %[go], %%rax\n" \
	"	cmpl $0, (%%rax)\n" \
	"	je 1b\n"

#define LOADY(n) "vmovdqu " #n "*32(%[p]), %%ymm" #n "\n"
#define STOREY(n) "vmovdqu %%ymm" #n ", " #n "*32(%[o])\n"
#define LOADX(n) "movdqu " #n "*32(%[p]), %%xmm" #n "\n"
#define STOREX(n) "movdqu %%xmm" #n ", " #n "*32(%[o])\n"
#define ALL(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)

static void hold_x87_and_csr_begin(void)
{
	asm volatile("fldcw %0\n\tldmxcsr %1\n\tfldl %2\n\tfldl %3"
		     : : "m"(cw_in), "m"(csr_in), "m"(x87_in[0]), "m"(x87_in[1]));
}

static void hold_x87_and_csr_end(void)
{
	asm volatile("fstpl %0\n\tfstpl %1\n\tfnstcw %2\n\tstmxcsr %3"
		     : "=m"(x87_out[1]), "=m"(x87_out[0]), "=m"(cw_out), "=m"(csr_out));
}

static void *holder(void *arg)
{
	/* Nothing between begin and end uses the FPU: the loop is assembly. */
	hold_x87_and_csr_begin();
	if (avx)
		asm volatile(ALL(LOADY) WAIT_LOOP ALL(STOREY) "vzeroupper\n"
			     : : [p] "r"(pat), [o] "r"(out), [nap] "m"(nap_p), [go] "m"(go_p)
			     : "rax", "rcx", "rdx", "rsi", "rdi", "r11", "memory", VREGS);
	else
		asm volatile(ALL(LOADX) WAIT_LOOP ALL(STOREX)
			     : : [p] "r"(pat), [o] "r"(out), [nap] "m"(nap_p), [go] "m"(go_p)
			     : "rax", "rcx", "rdx", "rsi", "rdi", "r11", "memory", VREGS);
	hold_x87_and_csr_end();
	return NULL;
}

int main(int argc, char **argv)
{
	uint32_t main_csr = 0x3f80, got;	/* round toward minus infinity */
	int r, i, width;
	pthread_t th;

	fid_init(argc, argv);
	avx = __builtin_cpu_supports("avx");
	width = avx ? 32 : 16;
	for (r = 0; r < NREG; r++)
		for (i = 0; i < 32; i++)
			pat[r][i] = (uint8_t)(r * 17 + i * 3 + 1);
	asm volatile("ldmxcsr %0" : : "m"(main_csr));
	if (pthread_create(&th, NULL, holder, NULL))
		fid_die("pthread_create");
	fid_nap_ms(100);
	fid_ready_wait();

	asm volatile("stmxcsr %0" : "=m"(got));
	FID_CHECK(got == main_csr, "main thread MXCSR %#x, want %#x", got, main_csr);
	go = 1;
	pthread_join(th, NULL);
	for (r = 0; r < NREG; r++)
		FID_CHECK(!memcmp(pat[r], out[r], width), "%s%d differs", avx ? "ymm" : "xmm", r);
	FID_CHECK(x87_out[0] == x87_in[0] && x87_out[1] == x87_in[1], "x87 stack: %g %g",
		  x87_out[0], x87_out[1]);
	FID_CHECK(cw_out == cw_in, "x87 control word %#x, want %#x", cw_out, cw_in);
	FID_CHECK(csr_out == csr_in, "thread MXCSR %#x, want %#x", csr_out, csr_in);
	fid_touch(avx ? "avx" : "sse-only");
	fid_finish();
}
