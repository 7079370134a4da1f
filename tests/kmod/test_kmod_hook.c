// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg.ko callback push through usr/runtime/hook-trampoline.S. Canary
 * threads hold chosen values in every GPR but rsp, in rflags, ymm0-15,
 * MXCSR and st(0) while spinning on "jmp *hk_spin_target(%rip)", which
 * changes no register; the hook clobbers all of them. After the hook the
 * loop is released and every value is compared. Also: the hook runs
 * exactly once per thread with the pushed argument, an interrupted
 * nanosleep completes its full duration, a single-thread push hooks only
 * that thread, a hook that closes its return fd comes back exact through
 * the trampoline's user-space return, and bad requests are refused.
 */
#include <cpuid.h>
#include <fcntl.h>

#define KT_OWN_HOOK_ENTRY
#include "kmod-test.h"

#define NCANARY 4
#define SLEEP_NS 2000000000LL
#define HOOK_ARG 0xfeedf00dcafe1234ULL
#define HOOK_ARG_CLOSE 0xc105efdULL	/* the hook closes its return fd */

struct hk_regs {
	uint64_t gpr[16];	/* r15 r14 r13 r12 r11 r10 r9 r8 rbp rdi rsi rdx rcx rbx rax rflags */
	uint8_t vec[16][32];	/* ymm0-15 */
	double x87;		/* st(0) */
	uint32_t mxcsr;
	uint32_t pad;
} __attribute__((aligned(32)));

_Static_assert(__builtin_offsetof(struct hk_regs, vec) == 128, "layout");
_Static_assert(__builtin_offsetof(struct hk_regs, x87) == 640, "layout");
_Static_assert(__builtin_offsetof(struct hk_regs, mxcsr) == 648, "layout");

struct hk_shared {
	volatile int tids[NCANARY + 2];
	volatile int nr_started;
	volatile int release;
	volatile int hook_calls;
	volatile int hook_tid[64];
	volatile uint64_t hook_arg[64];
	volatile int mismatch[NCANARY];		/* bit i: gpr[i]; 16+: vec, x87, mxcsr */
	volatile int done[NCANARY];
	volatile long sleep_ret;
	volatile long long sleep_ns;
	volatile int closed_fd;		/* the return fd the hook closed, -1: none found */
};

static struct hk_shared *sh;
void *volatile hk_spin_target;
extern char hk_spin[], hk_check[];
int hk_canary(const struct hk_regs *in, struct hk_regs *out);

__asm__(
".text\n"
".globl hk_canary, hk_spin, hk_check\n"
".type hk_canary,@function\n"
"hk_canary:\n"
"	push %rbp\n push %rbx\n push %r12\n push %r13\n push %r14\n push %r15\n"
"	push %rsi\n push %rdi\n"
"	mov %rdi, %rax\n"
"	vmovdqu 128+0*32(%rax), %ymm0\n vmovdqu 128+1*32(%rax), %ymm1\n"
"	vmovdqu 128+2*32(%rax), %ymm2\n vmovdqu 128+3*32(%rax), %ymm3\n"
"	vmovdqu 128+4*32(%rax), %ymm4\n vmovdqu 128+5*32(%rax), %ymm5\n"
"	vmovdqu 128+6*32(%rax), %ymm6\n vmovdqu 128+7*32(%rax), %ymm7\n"
"	vmovdqu 128+8*32(%rax), %ymm8\n vmovdqu 128+9*32(%rax), %ymm9\n"
"	vmovdqu 128+10*32(%rax), %ymm10\n vmovdqu 128+11*32(%rax), %ymm11\n"
"	vmovdqu 128+12*32(%rax), %ymm12\n vmovdqu 128+13*32(%rax), %ymm13\n"
"	vmovdqu 128+14*32(%rax), %ymm14\n vmovdqu 128+15*32(%rax), %ymm15\n"
"	fldl 640(%rax)\n"
"	ldmxcsr 648(%rax)\n"
"	pushq 15*8(%rax)\n popfq\n"
"	mov 0*8(%rax), %r15\n mov 1*8(%rax), %r14\n mov 2*8(%rax), %r13\n"
"	mov 3*8(%rax), %r12\n mov 4*8(%rax), %r11\n mov 5*8(%rax), %r10\n"
"	mov 6*8(%rax), %r9\n mov 7*8(%rax), %r8\n mov 8*8(%rax), %rbp\n"
"	mov 9*8(%rax), %rdi\n mov 10*8(%rax), %rsi\n mov 11*8(%rax), %rdx\n"
"	mov 12*8(%rax), %rcx\n mov 13*8(%rax), %rbx\n mov 14*8(%rax), %rax\n"
"hk_spin:\n"
"	jmp *hk_spin_target(%rip)\n"
"hk_check:\n"
"	pushfq\n"
"	push %rax\n push %rbx\n push %rcx\n push %rdx\n push %rsi\n push %rdi\n push %rbp\n"
"	push %r8\n push %r9\n push %r10\n push %r11\n push %r12\n push %r13\n push %r14\n push %r15\n"
"	mov 17*8(%rsp), %rdi\n"			/* out */
"	xor %ecx, %ecx\n"
"1:	mov (%rsp,%rcx,8), %rax\n mov %rax, (%rdi,%rcx,8)\n inc %ecx\n cmp $16, %ecx\n jne 1b\n"
"	vmovdqu %ymm0, 128+0*32(%rdi)\n vmovdqu %ymm1, 128+1*32(%rdi)\n"
"	vmovdqu %ymm2, 128+2*32(%rdi)\n vmovdqu %ymm3, 128+3*32(%rdi)\n"
"	vmovdqu %ymm4, 128+4*32(%rdi)\n vmovdqu %ymm5, 128+5*32(%rdi)\n"
"	vmovdqu %ymm6, 128+6*32(%rdi)\n vmovdqu %ymm7, 128+7*32(%rdi)\n"
"	vmovdqu %ymm8, 128+8*32(%rdi)\n vmovdqu %ymm9, 128+9*32(%rdi)\n"
"	vmovdqu %ymm10, 128+10*32(%rdi)\n vmovdqu %ymm11, 128+11*32(%rdi)\n"
"	vmovdqu %ymm12, 128+12*32(%rdi)\n vmovdqu %ymm13, 128+13*32(%rdi)\n"
"	vmovdqu %ymm14, 128+14*32(%rdi)\n vmovdqu %ymm15, 128+15*32(%rdi)\n"
"	fstpl 640(%rdi)\n"
"	stmxcsr 648(%rdi)\n"
"	movl $0x1f80, 656(%rdi)\n ldmxcsr 656(%rdi)\n"
"	add $16*8, %rsp\n"
"	pop %rdi\n pop %rsi\n"
"	pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbx\n pop %rbp\n"
"	vzeroupper\n"
"	xor %eax, %eax\n"
"	ret\n"
".size hk_canary, .-hk_canary\n");

/*
 * Close the fd that is a "[crdbg-hook]" file (the hook's return fd);
 * raw system calls only, as other threads may hold libc's locks.
 */
static int close_return_fd(void)
{
	char buf[1024], link[64], path[32];
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY), n, off, fd, found = -1;

	if (dir < 0)
		return -1;
	while (found < 0 && (n = (int)syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n && found < 0;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			ssize_t len;

			off += d->d_reclen;
			fd = atoi(d->d_name);
			if (d->d_name[0] == '.' || fd == dir)
				continue;
			snprintf(path, sizeof(path), "%d", fd);
			len = readlinkat(dir, path, link, sizeof(link) - 1);
			if (len > 0 && (link[len] = 0, !strcmp(link, "anon_inode:[crdbg-hook]")))
				found = fd;
		}
	}
	close(dir);
	if (found >= 0)
		close(found);
	return found;
}

/* The test's hook: count, remember who and with what, clobber everything. */
void crdbg_hook_entry(uint64_t arg)
{
	int i = __atomic_fetch_add(&sh->hook_calls, 1, __ATOMIC_SEQ_CST);
	uint32_t mx = 0x7f80 | (3 << 13);	/* round toward zero, all masked */

	if (i < 64) {
		sh->hook_tid[i] = (int)syscall(SYS_gettid);
		sh->hook_arg[i] = arg;
	}
	if (arg == HOOK_ARG_CLOSE)
		sh->closed_fd = close_return_fd();
	__asm__ volatile(
		"vpcmpeqb %%ymm0, %%ymm0, %%ymm0\n vpcmpeqb %%ymm1, %%ymm1, %%ymm1\n"
		"vpcmpeqb %%ymm2, %%ymm2, %%ymm2\n vpcmpeqb %%ymm3, %%ymm3, %%ymm3\n"
		"vpcmpeqb %%ymm4, %%ymm4, %%ymm4\n vpcmpeqb %%ymm5, %%ymm5, %%ymm5\n"
		"vpcmpeqb %%ymm6, %%ymm6, %%ymm6\n vpcmpeqb %%ymm7, %%ymm7, %%ymm7\n"
		"vpcmpeqb %%ymm8, %%ymm8, %%ymm8\n vpcmpeqb %%ymm9, %%ymm9, %%ymm9\n"
		"vpcmpeqb %%ymm10, %%ymm10, %%ymm10\n vpcmpeqb %%ymm11, %%ymm11, %%ymm11\n"
		"vpcmpeqb %%ymm12, %%ymm12, %%ymm12\n vpcmpeqb %%ymm13, %%ymm13, %%ymm13\n"
		"vpcmpeqb %%ymm14, %%ymm14, %%ymm14\n vpcmpeqb %%ymm15, %%ymm15, %%ymm15\n"
		"fninit\n fldpi\n"
		"ldmxcsr %0\n"
		"mov $-1, %%rax\n mov %%rax, %%rcx\n mov %%rax, %%rdx\n mov %%rax, %%rsi\n"
		"mov %%rax, %%rdi\n mov %%rax, %%r8\n mov %%rax, %%r9\n mov %%rax, %%r10\n"
		"mov %%rax, %%r11\n mov %%rax, %%rbx\n mov %%rax, %%r12\n mov %%rax, %%r13\n"
		"mov %%rax, %%r14\n mov %%rax, %%r15\n"
		"cmp %%rax, %%rcx\n"	/* ZF=1, CF=0 ... */
		: : "m"(mx)
		: "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
		  "r12", "r13", "r14", "r15", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
		  "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
		  "xmm13", "xmm14", "xmm15", "st", "cc", "memory");
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static void *canary_thread(void *p)
{
	int idx = (int)(long)p, i, bad = 0;
	static struct hk_regs in[NCANARY], out[NCANARY];
	struct hk_regs *ri = &in[idx], *ro = &out[idx];

	for (i = 0; i < 15; i++)
		ri->gpr[i] = mix(idx * 100 + i + 1);
	ri->gpr[15] = 0x8d7 | ((idx & 1) ? 0 : 0x1);	/* CF PF AF ZF SF OF + bit 1 */
	for (i = 0; i < 16 * 32; i++)
		ri->vec[i / 32][i % 32] = (uint8_t)mix(idx * 1000 + i);
	ri->x87 = 1234.5 + idx;
	ri->mxcsr = 0x1f80 | (1 << 13);	/* round down */
	sh->tids[idx] = (int)syscall(SYS_gettid);
	__atomic_add_fetch(&sh->nr_started, 1, __ATOMIC_SEQ_CST);

	hk_canary(ri, ro);

	for (i = 0; i < 15; i++)
		if (ri->gpr[i] != ro->gpr[i])
			bad |= 1 << i;
	if ((ri->gpr[15] & 0xdd5) != (ro->gpr[15] & 0xdd5))
		bad |= 1 << 15;
	if (memcmp(ri->vec, ro->vec, sizeof(ri->vec)))
		bad |= 1 << 16;
	if (ri->x87 != ro->x87)
		bad |= 1 << 17;
	if (ri->mxcsr != ro->mxcsr)
		bad |= 1 << 18;
	sh->mismatch[idx] = bad;
	sh->done[idx] = 1;
	return NULL;
}

static void *sleep_thread(void *p)
{
	struct timespec t0, t1, req = { SLEEP_NS / 1000000000LL, SLEEP_NS % 1000000000LL };

	(void)p;
	sh->tids[NCANARY] = (int)syscall(SYS_gettid);
	__atomic_add_fetch(&sh->nr_started, 1, __ATOMIC_SEQ_CST);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sh->sleep_ret = syscall(SYS_nanosleep, &req, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	sh->sleep_ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	return NULL;
}

static pid_t spawn_target(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pthread_t th[NCANARY + 1];
		int i, bad = 0;

		kt_child_setup();
		hk_spin_target = hk_spin;
		sh->tids[NCANARY + 1] = (int)syscall(SYS_gettid);
		for (i = 0; i < NCANARY; i++)
			pthread_create(&th[i], NULL, canary_thread, (void *)(long)i);
		pthread_create(&th[NCANARY], NULL, sleep_thread, NULL);
		while (!sh->release)
			kt_msleep(1);
		hk_spin_target = hk_check;
		for (i = 0; i <= NCANARY; i++)
			pthread_join(th[i], NULL);
		for (i = 0; i < NCANARY; i++)
			bad |= sh->mismatch[i];
		_exit(bad ? 1 : 0);
	}
	while (pid > 0 && sh->nr_started < NCANARY + 1)
		kt_msleep(1);
	kt_msleep(100);		/* the sleeper is inside nanosleep now */
	return pid;
}

static int have_avx2(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return !!(b & bit_AVX2);
}

static int wait_hooks(int n)
{
	int i;

	for (i = 0; i < 20000 && sh->hook_calls < n; i++)
		kt_msleep(1);
	return sh->hook_calls;
}

FIXTURE(hook) {
	struct freeze_backend *b;
	pid_t pid;
	char err[256];
};

FIXTURE_SETUP(hook)
{
	int ret;

	if (!have_avx2())
		SKIP(return, "the canary loop needs AVX2");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	self->pid = spawn_target();
	ASSERT_LT(0, self->pid);
	ret = kt_open(&self->b, self->err, sizeof(self->err));
	if (ret == -ENOENT)
		SKIP(return, "crdbg.ko is not loaded");
	ASSERT_EQ(0, ret) TH_LOG("%s", self->err);
}

FIXTURE_TEARDOWN(hook)
{
	kt_kill(self->pid);
	freeze_backend_close(self->b);
}

static int finish(pid_t pid)
{
	int st;

	sh->release = 1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TEST_F_TIMEOUT(hook, every_thread_once_state_exact, 60)
{
	int nthreads = NCANARY + 2, i, j, seen;

	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
	ASSERT_EQ(0, freeze_push_hook(self->b, self->pid, 0, (uint64_t)(uintptr_t)crdbg_hook_trampoline,
			       HOOK_ARG, self->err, sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_EQ(-EBUSY, freeze_push_hook(self->b, self->pid, 0,
				    (uint64_t)(uintptr_t)crdbg_hook_trampoline, 1, self->err,
				    sizeof(self->err)));
	EXPECT_EQ(0, sh->hook_calls);	/* hooks run at thaw, not before */
	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	ASSERT_EQ(nthreads, wait_hooks(nthreads));
	kt_msleep(200);
	EXPECT_EQ(nthreads, sh->hook_calls);
	for (i = 0; i < nthreads; i++) {
		for (seen = 0, j = 0; j < nthreads; j++)
			if (sh->hook_tid[j] == sh->tids[i])
				seen++;
		EXPECT_EQ(1, seen) TH_LOG("thread %d ran its hook %d times", sh->tids[i], seen);
		EXPECT_EQ(HOOK_ARG, sh->hook_arg[i]);
	}
	EXPECT_EQ(0, finish(self->pid));
	self->pid = 0;
	for (i = 0; i < NCANARY; i++) {
		EXPECT_EQ(1, sh->done[i]);
		EXPECT_EQ(0, sh->mismatch[i]) TH_LOG("canary thread %d: mismatch mask 0x%x", i,
						     sh->mismatch[i]);
	}
	/* interrupted by the freeze and the hook, the sleep still lasted */
	EXPECT_EQ(0, sh->sleep_ret);
	EXPECT_LE(SLEEP_NS, sh->sleep_ns);
}

TEST_F_TIMEOUT(hook, one_thread_only, 60)
{
	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	ASSERT_EQ(0, freeze_push_hook(self->b, self->pid, sh->tids[1],
			       (uint64_t)(uintptr_t)crdbg_hook_trampoline, 7, self->err,
			       sizeof(self->err))) TH_LOG("%s", self->err);
	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	ASSERT_EQ(1, wait_hooks(1));
	kt_msleep(300);
	EXPECT_EQ(1, sh->hook_calls);
	EXPECT_EQ(sh->tids[1], sh->hook_tid[0]);
	EXPECT_EQ(7, sh->hook_arg[0]);
	EXPECT_EQ(0, finish(self->pid));
	self->pid = 0;
	EXPECT_EQ(0, sh->mismatch[1]);
}

TEST_F_TIMEOUT(hook, return_fd_closed_falls_back, 60)
{
	sh->closed_fd = -2;
	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	ASSERT_EQ(0, freeze_push_hook(self->b, self->pid, sh->tids[2],
			       (uint64_t)(uintptr_t)crdbg_hook_trampoline, HOOK_ARG_CLOSE,
			       self->err, sizeof(self->err))) TH_LOG("%s", self->err);
	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	ASSERT_EQ(1, wait_hooks(1));
	kt_msleep(300);
	EXPECT_EQ(1, sh->hook_calls);
	EXPECT_LE(0, sh->closed_fd) TH_LOG("the hook found no [crdbg-hook] fd");
	EXPECT_EQ(0, finish(self->pid));
	self->pid = 0;
	EXPECT_EQ(1, sh->done[2]);
	EXPECT_EQ(0, sh->mismatch[2]) TH_LOG("mismatch mask 0x%x", sh->mismatch[2]);
}

TEST_F(hook, bad_requests)
{
	uint64_t tramp = (uint64_t)(uintptr_t)crdbg_hook_trampoline;

	EXPECT_EQ(-ENOENT, freeze_push_hook(self->b, self->pid, 0, tramp, 0, self->err,
				     sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "not frozen")) TH_LOG("%s", self->err);
	ASSERT_EQ(0, freeze_process(self->b, self->pid, 0, self->err, sizeof(self->err)));
	EXPECT_EQ(-EINVAL, freeze_push_hook(self->b, self->pid, 0, 0xffffffff81000000ULL, 0, self->err,
				     sizeof(self->err)));
	EXPECT_NE(NULL, strstr(self->err, "user address")) TH_LOG("%s", self->err);
	EXPECT_EQ(-ESRCH, freeze_push_hook(self->b, self->pid, getpid(), tramp, 0, self->err,
				    sizeof(self->err)));
	ASSERT_EQ(0, freeze_thaw(self->b, self->pid, self->err, sizeof(self->err)));
	kt_msleep(100);
	EXPECT_EQ(0, sh->hook_calls);
	EXPECT_EQ(0, finish(self->pid));
	self->pid = 0;
}

TEST_HARNESS_MAIN
