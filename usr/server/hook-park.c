// SPDX-License-Identifier: GPL-2.0
/*
 * The "hook" command: park, unpark and find the parked threads of a rank
 * through its gdb, in C over GDB/MI (hook-park.h).
 *
 * park ARG: every thread but libcrdbg's designated one ("crdbg-ckpt")
 *   gets the UAPI hook frame (return_via USER) below its red zone and is
 *   pointed at libcrdbg's trampoline with rdi = ARG. When the program
 *   runs, each thread saves its extended state and waits in
 *   MPIR_checkpoint_debugger_breakpoint(); nothing about it lives in gdb
 *   or in the console, so the image is self-contained.
 * unpark: undo park on threads that have not run yet (their pc is still
 *   the trampoline): the registers come back from the frame.
 * plan: open MPIR_checkpoint_debug_gate and list, for every thread under
 *   a hook frame, the pc under its outermost one: "plan SEL NUM:PC ...",
 *   SEL the selected thread.
 * release: plan, then run each of those threads alone (scheduler-locking)
 *   to a temporary breakpoint at that pc, where the trampoline hands it
 *   back with every register as it was, and check it is there; then
 *   scheduler-locking off, MPIR_debug_with_checkpoint = 0 and SEL selected
 *   again: "released N". Every rank's server does this for its own ranks
 *   at the same time, so that the console's release after a checkpoint or
 *   a restart is one command to the whole job, not a dozen per thread.
 *
 * gdb writes the registers: setting $pc also makes it drop a pending
 * system call restart, which the frame has folded in already. Every
 * expression here is C and says so (--language c): at a Fortran
 * program's stops gdb's language is Fortran, where "a.b" does not parse.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <crdbg/dbgproto.h>
#include <linux/crdbg.h>

#include "hook-park.h"

#define DESIGNATED_THREAD	"crdbg-ckpt"
#define RUN_BACK_MS		30000	/* a thread's way from the trampoline to its pc */
#define TRAMPOLINE_FUNC		"crdbg_hook_trampoline"
#define EFLAGS_DF_TF		0x500ULL

/* gdb's names of struct crdbg_regs's fields, in its order. */
static const char *const reg_name[] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10",
	"r9", "r8", "rax", "rcx", "rdx", "rsi", "rdi", "orig_rax",
	"rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base",
	"ds", "es", "fs", "gs",
};
#define NR_REGS (sizeof(reg_name) / sizeof(reg_name[0]))
_Static_assert(NR_REGS * 8 == sizeof(struct crdbg_regs), "one name per register");

/* Registers put back by unpark: those park or the program may change. */
static const char *const unpark_regs[] = {
	"r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8",
	"rax", "rcx", "rdx", "rsi", "rdi", "eflags", "rsp", "rip",
};

struct hook_ctx {
	struct mi_driver *d;
	int num[NR_REGS];	/* gdb's register number of each */
	char *err;
	size_t errlen;
};

static int failf(struct hook_ctx *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int failf(struct hook_ctx *c, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return rc;
}

static int mi_failed(struct hook_ctx *c, int rc, const char *what)
{
	const char *why = rc == -EREMOTEIO ? mi_driver_error(c->d) : strerror(-rc);

	return failf(c, rc, "%s: %s", what, why ? why : "failed");
}

static int reg_index(const char *name)
{
	for (size_t i = 0; i < NR_REGS; i++)
		if (!strcmp(reg_name[i], name))
			return i;
	return -1;
}

static int register_numbers(struct hook_ctx *c)
{
	const struct mi_value *names, *v;
	struct mi_record *rec;
	int rc, num = 0, found = 0;

	rc = mi_driver_cmd(c->d, &rec, "-data-list-register-names");
	if (rc)
		return mi_failed(c, rc, "register names");
	names = mi_get(rec->results, "register-names");
	for (v = names ? names->child : NULL; v; v = v->next, num++) {
		int i = v->kind == MI_CONST ? reg_index(v->str) : -1;

		if (i >= 0) {
			c->num[i] = num;
			found |= 1 << i;
		}
	}
	mi_record_free(rec);
	if (found != (1 << NR_REGS) - 1)
		return failf(c, -ENOTSUP, "gdb does not show every x86-64 register (orig_rax, fs_base?)");
	return 0;
}

static int read_regs(struct hook_ctx *c, int thread, struct crdbg_regs *ret)
{
	char nums[NR_REGS * 4 + 1];
	const struct mi_value *vals, *v;
	uint64_t *field = (uint64_t *)ret;
	struct mi_record *rec;
	size_t len = 0, got = 0;
	int rc;

	for (size_t i = 0; i < NR_REGS; i++)
		len += snprintf(nums + len, sizeof(nums) - len, " %d", c->num[i]);
	rc = mi_driver_cmd(c->d, &rec, "-data-list-register-values --thread %d x%s", thread, nums);
	if (rc)
		return mi_failed(c, rc, "registers");
	vals = mi_get(rec->results, "register-values");
	for (v = vals ? vals->child : NULL; v; v = v->next) {
		long long num;
		uint64_t val;

		if (mi_get_int(v, "number", &num) || mi_get_u64(v, "value", &val))
			continue;
		for (size_t i = 0; i < NR_REGS; i++)
			if (c->num[i] == num) {
				field[i] = val;
				got++;
			}
	}
	mi_record_free(rec);
	if (got != NR_REGS)
		return failf(c, -EPROTO, "thread %d: gdb gave %zu of %zu registers", thread, got,
			     NR_REGS);
	return 0;
}

static int set_reg(struct hook_ctx *c, int thread, const char *name, uint64_t val)
{
	int rc = mi_driver_cmd(c->d, NULL,
			       "-data-evaluate-expression --language c --thread %d --frame 0 \"$%s = %" PRIu64 "\"",
			       thread, name, val);

	return rc ? mi_failed(c, rc, name) : 0;
}

static int eval_u64(struct hook_ctx *c, const char *expr, uint64_t *ret)
{
	struct mi_record *rec;
	int rc;

	rc = mi_driver_cmd(c->d, &rec, "-data-evaluate-expression --language c %s", expr);
	if (rc)
		return mi_failed(c, rc, expr);
	rc = mi_get_u64(rec->results, "value", ret);
	mi_record_free(rec);
	return rc ? failf(c, -EPROTO, "%s: not a number", expr) : 0;
}

static int trampoline(struct hook_ctx *c, uint64_t *ret)
{
	int rc = eval_u64(c, "crdbg_runtime_info.trampoline", ret);

	if (!rc && !*ret)
		return failf(c, -ENOENT, "libcrdbg has no hook trampoline");
	return rc;
}

static int write_bytes(struct hook_ctx *c, uint64_t addr, const void *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *b = buf;
	char *h = malloc(2 * len + 1);
	int rc;

	if (!h)
		return failf(c, -ENOMEM, "out of memory");
	for (size_t i = 0; i < len; i++) {
		h[2 * i] = hex[b[i] >> 4];
		h[2 * i + 1] = hex[b[i] & 15];
	}
	h[2 * len] = 0;
	rc = mi_driver_cmd(c->d, NULL, "-data-write-memory-bytes --language c 0x%" PRIx64 " %s", addr, h);
	free(h);
	return rc ? mi_failed(c, rc, "writing the hook frame") : 0;
}

static int read_bytes(struct hook_ctx *c, uint64_t addr, void *buf, size_t len)
{
	struct mi_record *rec;
	const char *h;
	unsigned char *b = buf;
	int rc;

	rc = mi_driver_cmd(c->d, &rec, "-data-read-memory-bytes --language c 0x%" PRIx64 " %zu",
			   addr, len);
	if (rc)
		return mi_failed(c, rc, "reading the hook frame");
	h = mi_get_str(rec->results, "memory.0.contents");
	rc = h && strlen(h) == 2 * len ? 0 : -EPROTO;
	for (size_t i = 0; !rc && i < len; i++) {
		unsigned int byte;

		if (sscanf(h + 2 * i, "%2x", &byte) != 1)
			rc = -EPROTO;
		b[i] = byte;
	}
	mi_record_free(rec);
	return rc ? failf(c, rc, "the hook frame at 0x%" PRIx64 " cannot be read", addr) : 0;
}

static int park_thread(struct hook_ctx *c, int thread, uint64_t tramp, uint64_t arg)
{
	struct crdbg_hook_frame frame;
	struct crdbg_regs regs;
	uint64_t sp;
	int rc;

	rc = read_regs(c, thread, &regs);
	if (rc)
		return rc;
	sp = crdbg_hook_frame_init(&frame, &regs, arg, CRDBG_HOOK_RETURN_USER, 0);
	rc = write_bytes(c, sp, &frame, sizeof(frame));
	rc = rc ?: set_reg(c, thread, "rsp", sp);
	rc = rc ?: set_reg(c, thread, "rdi", arg);
	rc = rc ?: set_reg(c, thread, "eflags", regs.flags & ~EFLAGS_DF_TF);
	return rc ?: set_reg(c, thread, "pc", tramp);
}

static int unpark_thread(struct hook_ctx *c, int thread, uint64_t tramp, bool *ret_done)
{
	struct crdbg_hook_frame frame;
	struct crdbg_regs regs;
	const uint64_t *saved = (const uint64_t *)&frame.regs;
	int rc;

	*ret_done = false;
	rc = read_regs(c, thread, &regs);
	if (rc || regs.ip != tramp)
		return rc;
	rc = read_bytes(c, regs.sp, &frame, sizeof(frame));
	if (rc)
		return rc;
	if (frame.magic != CRDBG_HOOK_MAGIC)
		return failf(c, -EPROTO, "thread %d: no hook frame at its rsp", thread);
	for (size_t i = 0; !rc && i < sizeof(unpark_regs) / sizeof(unpark_regs[0]); i++)
		rc = set_reg(c, thread, unpark_regs[i], saved[reg_index(unpark_regs[i])]);
	*ret_done = !rc;
	return rc;
}

/*
 * gdb shows the trampoline (a signal frame in its CFI) as "<signal
 * handler called>": ask which function pc is in.
 */
static bool in_trampoline(struct hook_ctx *c, const char *func, uint64_t pc)
{
	char *text;
	bool yes;

	if (func && !strcmp(func, TRAMPOLINE_FUNC))
		return true;
	if (!func || strcmp(func, "<signal handler called>"))
		return false;
	free(mi_driver_take_console(c->d));
	if (mi_driver_cmd(c->d, NULL, "-interpreter-exec console \"info symbol 0x%" PRIx64 "\"",
			  pc))
		return false;
	text = mi_driver_take_console(c->d);
	yes = text && !strncmp(text, TRAMPOLINE_FUNC, strlen(TRAMPOLINE_FUNC)) &&
	      strchr(" \n", text[strlen(TRAMPOLINE_FUNC)]);
	free(text);
	return yes;
}

/* The pc under thread's outermost hook frame, 0 if it has none. */
static int pc_under_hook(struct hook_ctx *c, int thread, uint64_t *ret_pc)
{
	const struct mi_value *stack, *f;
	struct mi_record *rec;
	bool under = false;
	int rc;

	*ret_pc = 0;
	rc = mi_driver_cmd(c->d, &rec, "-stack-list-frames --thread %d", thread);
	if (rc)
		return mi_failed(c, rc, "frames");
	stack = mi_get(rec->results, "stack");
	for (f = stack ? stack->child : NULL; f; f = f->next) {
		uint64_t pc;

		if (mi_get_u64(f, "addr", &pc))
			continue;
		if (under)
			*ret_pc = pc;
		/* the frame after it is the interrupted one */
		under = in_trampoline(c, mi_get_str(f, "func"), pc);
	}
	mi_record_free(rec);
	return 0;
}

/* The next *stopped of d, the records before it dropped: 1, 0 on timeout, or -errno. */
static int wait_stopped(struct mi_driver *d, bool *ret_exited)
{
	struct mi_stop stop;
	int r = mi_wait_stop(d, RUN_BACK_MS, &stop);

	if (r > 0) {
		*ret_exited = stop.exited;
		mi_stop_release(&stop);
	}
	return r;
}

/*
 * Run thread alone from the trampoline back to pc (scheduler-locking is
 * on), through a temporary breakpoint for that thread only.
 */
static int run_back(struct hook_ctx *c, int thread, uint64_t pc)
{
	struct crdbg_regs regs = { 0 };
	struct mi_record *rec;
	bool exited = false;
	long long bp = 0;
	int rc;

	rc = mi_driver_cmd(c->d, &rec, "-break-insert -t -p %d *0x%" PRIx64, thread, pc);
	if (rc)
		return mi_failed(c, rc, "temporary breakpoint");
	mi_get_int(rec->results, "bkpt.number", &bp);
	mi_record_free(rec);
	rc = mi_driver_cmd(c->d, NULL, "-exec-continue --thread %d", thread);
	if (rc) {
		mi_failed(c, rc, "continue");
	} else {
		rc = wait_stopped(c->d, &exited);
		if (rc == 0) {
			/* still running: stop it, say so */
			mi_driver_cmd(c->d, NULL, "-exec-interrupt --thread %d", thread);
			wait_stopped(c->d, &exited);
			rc = failf(c, -ETIMEDOUT, "thread %d did not come back to its pc 0x%" PRIx64
				   " in %d s", thread, pc, RUN_BACK_MS / 1000);
		} else if (rc < 0) {
			mi_failed(c, rc, "waiting for the thread");
		} else if (exited) {
			rc = failf(c, -ESRCH, "the process exited before thread %d was back at"
				   " its pc 0x%" PRIx64, thread, pc);
		} else {
			rc = read_regs(c, thread, &regs);
		}
	}
	if (!rc && regs.ip != pc)
		rc = failf(c, -EPROTO, "thread %d is not back at its pc 0x%" PRIx64
			   " (it stopped at 0x%" PRIx64 ")", thread, pc, (uint64_t)regs.ip);
	/* hit, it is gone; else it must not stop the thread later */
	if (rc && bp)
		mi_driver_cmd(c->d, NULL, "-break-delete %lld", bp);
	return rc;
}

static int by_id(const void *a, const void *b)
{
	return ((const struct mi_thread *)a)->id - ((const struct mi_thread *)b)->id;
}

static int append(char **buf, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int append(char **buf, size_t *len, const char *fmt, ...)
{
	va_list ap;
	char *more;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&more, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	*buf = realloc(*buf, *len + n + 1);
	if (!*buf) {
		free(more);
		return -ENOMEM;
	}
	memcpy(*buf + *len, more, n + 1);
	*len += n;
	free(more);
	return 0;
}

int hook_park_command(struct mi_driver *d, const char *arg, char **ret_text, char *err,
		      size_t errlen)
{
	struct hook_ctx c = { .d = d, .err = err, .errlen = errlen };
	struct dbgp_hook_cmd cmd;
	enum dbgp_hook_op op;
	struct mi_threads th = { 0 };
	unsigned long long park_arg;
	uint64_t tramp = 0;
	char *out = NULL;
	size_t len = 0;
	char first[256] = "";
	int rc, n = 0, stuck = 0;

	*ret_text = NULL;
	err[0] = 0;
	if (dbgp_hook_parse(arg, &cmd))
		return failf(&c, -EINVAL, "hook: park ARG, unpark, plan or release, not \"%.40s\"",
			     arg);
	op = cmd.op;
	park_arg = cmd.arg;

	rc = register_numbers(&c);
	if (!rc && (op == DBGP_HOOK_PARK || op == DBGP_HOOK_UNPARK))
		rc = trampoline(&c, &tramp);
	if (!rc && (op == DBGP_HOOK_PLAN || op == DBGP_HOOK_RELEASE)) {
		rc = mi_driver_cmd(d, NULL,
				   "-data-evaluate-expression --language c \"MPIR_checkpoint_debug_gate = 1\"");
		if (rc)
			rc = mi_failed(&c, rc, "opening MPIR_checkpoint_debug_gate");
	}
	if (!rc && op == DBGP_HOOK_RELEASE) {
		rc = mi_driver_cmd(d, NULL, "-gdb-set scheduler-locking on");
		if (rc)
			rc = mi_failed(&c, rc, "scheduler-locking on");
	}
	rc = rc ?: mi_thread_info(d, &th);
	if (rc && !err[0])
		mi_failed(&c, rc, "threads");
	if (!rc && th.n)
		qsort(th.threads, th.n, sizeof(th.threads[0]), by_id);
	if (!rc && op == DBGP_HOOK_PLAN)
		rc = append(&out, &len, "plan %d", th.current);
	for (size_t i = 0; !rc && i < th.n; i++) {
		const struct mi_thread *t = &th.threads[i];
		uint64_t pc;
		bool done;

		switch (op) {
		case DBGP_HOOK_PARK:
			if (t->name && !strcmp(t->name, DESIGNATED_THREAD))
				continue;
			rc = park_thread(&c, t->id, tramp, park_arg);
			n += !rc;
			break;
		case DBGP_HOOK_UNPARK:
			rc = unpark_thread(&c, t->id, tramp, &done);
			n += done;
			break;
		case DBGP_HOOK_PLAN:
			rc = pc_under_hook(&c, t->id, &pc);
			if (!rc && pc)
				rc = append(&out, &len, " %d:%" PRIu64, t->id, pc);
			break;
		case DBGP_HOOK_RELEASE:
			/* a thread that does not come back does not hold the others */
			rc = pc_under_hook(&c, t->id, &pc);
			if (!rc && pc && run_back(&c, t->id, pc)) {
				if (!stuck++)
					snprintf(first, sizeof(first), "%s", err);
			} else if (!rc && pc) {
				n++;
			}
			break;
		}
	}
	if (op == DBGP_HOOK_RELEASE) {
		/* whatever came of the threads, the rank is the user's again */
		mi_driver_cmd(d, NULL, "-gdb-set scheduler-locking off");
		mi_driver_cmd(d, NULL,
			      "-data-evaluate-expression --language c \"MPIR_debug_with_checkpoint = 0\"");
		if (!rc && stuck)
			rc = stuck > 1 ? failf(&c, -EPROTO, "%s; %d threads are not back", first, stuck)
				       : failf(&c, -EPROTO, "%s", first);
	}
	if (th.current)
		mi_driver_cmd(d, NULL, "-thread-select %d", th.current);
	mi_threads_release(&th);
	if (!rc && op != DBGP_HOOK_PLAN)
		rc = append(&out, &len, "%s %d", op == DBGP_HOOK_PARK ? "parked" :
			    op == DBGP_HOOK_UNPARK ? "unparked" : "released", n);
	if (rc) {
		free(out);
		if (!err[0])
			failf(&c, rc, "hook: %s", strerror(-rc));
		return rc;
	}
	*ret_text = out;
	return 0;
}
