// SPDX-License-Identifier: GPL-2.0
/*
 * The arguments of the hook and part commands (<crdbg/dbgproto.h>):
 * formatted by the console and parsed by the server, through the same
 * rules, so that neither end builds or reads them by hand.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <crdbg/dbgproto.h>

/* Above any pid: the kernel's pid_max is at most 4194304 (PID_MAX_LIMIT). */
#define PID_MAX		0x3fffffff

static const char *const hook_ops[] = {
	[DBGP_HOOK_PARK] = "park", [DBGP_HOOK_UNPARK] = "unpark",
	[DBGP_HOOK_PLAN] = "plan", [DBGP_HOOK_RELEASE] = "release",
};

static const char *const part_ops[] = {
	[DBGP_PART_START] = "start", [DBGP_PART_ORDER] = "order", [DBGP_PART_WAIT] = "wait",
	[DBGP_PART_FINISH] = "finish", [DBGP_PART_DRAIN] = "drain",
};

/* What a part may be started for: the part program's operations. */
static const char *const part_verbs[] = { "checkpoint", "restart", "verify", "rm" };

static int fits(int n, size_t size)
{
	if (n < 0)
		return -EINVAL;
	return (size_t)n < size && n <= DBGP_CMD_MAX ? n : -ENOSPC;
}

/* A whole decimal number, no sign, no spaces, at most max. */
static int parse_ulong(const char *s, size_t len, unsigned long long max,
		       unsigned long long *ret)
{
	unsigned long long v = 0;

	if (!len || len > 20)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (d > 9 || v > (max - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

int dbgp_hook_format(char *buf, size_t size, const struct dbgp_hook_cmd *h)
{
	if ((unsigned int)h->op > DBGP_HOOK_RELEASE)
		return -EINVAL;
	if (h->op == DBGP_HOOK_PARK)
		return fits(snprintf(buf, size, "park %" PRIu64, h->arg), size);
	return fits(snprintf(buf, size, "%s", hook_ops[h->op]), size);
}

int dbgp_hook_parse(const char *text, struct dbgp_hook_cmd *ret)
{
	unsigned long long v;

	memset(ret, 0, sizeof(*ret));
	if (!strncmp(text, "park ", 5)) {
		if (parse_ulong(text + 5, strlen(text + 5), UINT64_MAX, &v))
			return -EINVAL;
		ret->op = DBGP_HOOK_PARK;
		ret->arg = v;
		return 0;
	}
	for (unsigned int op = DBGP_HOOK_UNPARK; op <= DBGP_HOOK_RELEASE; op++)
		if (!strcmp(text, hook_ops[op])) {
			ret->op = (enum dbgp_hook_op)op;
			return 0;
		}
	return -EINVAL;
}

static bool part_verb_ok(const char *verb)
{
	for (size_t i = 0; i < sizeof(part_verbs) / sizeof(part_verbs[0]); i++)
		if (!strcmp(verb, part_verbs[i]))
			return true;
	return false;
}

static bool step_ok(const char *step)
{
	size_t n = strlen(step);

	return n && n < DBGP_PART_STEP_MAX && !strpbrk(step, " \n\x1e\x1f");
}

/* "wait MS debug PID,PID,...": every pid positive, at most DBGP_PART_PIDS_MAX. */
static int format_pids(char *buf, size_t size, const struct dbgp_part_cmd *c)
{
	size_t len;
	int n;

	if (c->npid > DBGP_PART_PIDS_MAX)
		return -EINVAL;
	n = snprintf(buf, size, "wait %lu debug", c->ms);
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	len = (size_t)n;
	for (unsigned int i = 0; i < c->npid; i++) {
		if (c->pid[i] <= 0 || c->pid[i] > PID_MAX)
			return -EINVAL;
		n = snprintf(buf + len, size - len, "%c%d", i ? ',' : ' ', c->pid[i]);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
		len += (size_t)n;
	}
	return len <= DBGP_CMD_MAX ? (int)len : -ENOSPC;
}

int dbgp_part_format(char *buf, size_t size, const struct dbgp_part_cmd *c)
{
	size_t len;
	int n;

	switch (c->op) {
	case DBGP_PART_START:
		if (c->argc < 1 || c->argc > DBGP_PART_ARGS_MAX || !c->argv[1] ||
		    !part_verb_ok(c->argv[1]))
			return -EINVAL;
		len = 0;
		for (int i = 0; i <= c->argc; i++) {
			const char *a = i ? c->argv[i] : "start";

			if (!a || strchr(a, DBGP_ARG_SEP) || strchr(a, '\n'))
				return -EINVAL;
			n = snprintf(buf + len, size - len, "%s%s", i == 0 ? "" : i == 1 ? " " :
				     (char[]){ DBGP_ARG_SEP, 0 }, a);
			if (n < 0 || (size_t)n >= size - len)
				return -ENOSPC;
			len += (size_t)n;
		}
		return len <= DBGP_CMD_MAX ? (int)len : -ENOSPC;
	case DBGP_PART_ORDER:
		if (!c->line || !*c->line || strlen(c->line) >= DBGP_PART_ORDER_MAX ||
		    strchr(c->line, '\n'))
			return -EINVAL;
		return fits(snprintf(buf, size, "order %s", c->line), size);
	case DBGP_PART_WAIT:
		if (c->ms > DBGP_WAIT_MAX_MS)
			return -EINVAL;
		if (c->npid)
			return format_pids(buf, size, c);
		if (!step_ok(c->step) || !strcmp(c->step, "debug"))
			return -EINVAL;
		return fits(snprintf(buf, size, "wait %lu %s", c->ms, c->step), size);
	case DBGP_PART_FINISH:
	case DBGP_PART_DRAIN:
		if (c->ms > DBGP_WAIT_MAX_MS)
			return -EINVAL;
		return fits(snprintf(buf, size, "%s %lu", part_ops[c->op], c->ms), size);
	}
	return -EINVAL;
}

/* "ARG\x1fARG..." split in place into c->argv[1..]. */
static int parse_start(char *spec, struct dbgp_part_cmd *c)
{
	char *a = spec;
	int n = 0;

	while (a && n < DBGP_PART_ARGS_MAX) {
		char *sep = strchr(a, DBGP_ARG_SEP);

		if (sep)
			*sep = 0;
		c->argv[++n] = a;
		a = sep ? sep + 1 : NULL;
	}
	if (a)
		return -EINVAL;	/* more than DBGP_PART_ARGS_MAX */
	c->argv[n + 1] = NULL;
	c->argc = n;
	return part_verb_ok(c->argv[1]) ? 0 : -EINVAL;
}

/* "MS" alone, at most DBGP_WAIT_MAX_MS. */
static int parse_ms(const char *s, size_t len, unsigned long *ms)
{
	unsigned long long v;

	if (parse_ulong(s, len, DBGP_WAIT_MAX_MS, &v))
		return -EINVAL;
	*ms = (unsigned long)v;
	return 0;
}

/* "PID,PID,..." into c->pid: each positive, none empty. */
static int parse_pids(const char *s, struct dbgp_part_cmd *c)
{
	unsigned long long pid;

	for (;;) {
		size_t l = strcspn(s, ",");

		if (c->npid == DBGP_PART_PIDS_MAX || parse_ulong(s, l, PID_MAX, &pid) || !pid)
			return -EINVAL;
		c->pid[c->npid++] = (int)pid;
		if (!s[l])
			return 0;
		s += l + 1;
	}
}

/* "MS STEP" or "MS debug PID[,PID...]". */
static int parse_wait(const char *arg, struct dbgp_part_cmd *c)
{
	const char *sp = strchr(arg, ' '), *step, *sp2;

	if (!sp || parse_ms(arg, (size_t)(sp - arg), &c->ms))
		return -EINVAL;
	step = sp + 1;
	sp2 = strchr(step, ' ');
	if (sp2) {
		if ((size_t)(sp2 - step) != 5 || strncmp(step, "debug", 5) ||
		    parse_pids(sp2 + 1, c))
			return -EINVAL;
		snprintf(c->step, sizeof(c->step), "debug");
		return 0;
	}
	if (!step_ok(step) || !strcmp(step, "debug"))
		return -EINVAL;
	snprintf(c->step, sizeof(c->step), "%s", step);
	return 0;
}

int dbgp_part_parse(char *buf, struct dbgp_part_cmd *c, const char **why)
{
	memset(c, 0, sizeof(*c));
	if (strchr(buf, '\n')) {
		*why = "a part command is one line";
		return -EINVAL;
	}
	if (!strncmp(buf, "start ", 6)) {
		c->op = DBGP_PART_START;
		*why = "part start wants checkpoint|restart|verify|rm ...";
		return parse_start(buf + 6, c);
	}
	if (!strncmp(buf, "order ", 6)) {
		c->op = DBGP_PART_ORDER;
		c->line = buf + 6;
		*why = "an order is one short line";
		return *c->line && strlen(c->line) < DBGP_PART_ORDER_MAX ? 0 : -EINVAL;
	}
	if (!strncmp(buf, "wait ", 5)) {
		c->op = DBGP_PART_WAIT;
		*why = "part wait wants MS STEP or MS debug PID[,PID...]";
		return parse_wait(buf + 5, c);
	}
	if (!strncmp(buf, "finish ", 7)) {
		c->op = DBGP_PART_FINISH;
		*why = "part finish wants MS";
		return parse_ms(buf + 7, strlen(buf + 7), &c->ms);
	}
	if (!strncmp(buf, "drain ", 6)) {
		c->op = DBGP_PART_DRAIN;
		*why = "part drain wants MS";
		return parse_ms(buf + 6, strlen(buf + 6), &c->ms);
	}
	*why = "part wants start, order, wait, finish or drain";
	return -EINVAL;
}

int dbgp_part_end_format(char *buf, size_t size, const struct dbgp_part_end *e)
{
	if (e->running)
		return fits(snprintf(buf, size, "running"), size);
	if (e->status < 0 || e->status > 255)
		return -EINVAL;
	if (!e->status)
		return fits(snprintf(buf, size, "exit 0"), size);
	if (!e->why || strchr(e->why, '\n'))
		return -EINVAL;
	return fits(snprintf(buf, size, "exit %d: %s", e->status, e->why), size);
}

int dbgp_part_end_parse(const char *text, struct dbgp_part_end *ret)
{
	unsigned long long v;
	size_t l;

	memset(ret, 0, sizeof(*ret));
	ret->why = "";
	if (!strcmp(text, "running")) {
		ret->running = true;
		return 0;
	}
	if (strncmp(text, "exit ", 5) || strchr(text, '\n'))
		return -EINVAL;
	text += 5;
	l = strcspn(text, ":");
	if (parse_ulong(text, l, 255, &v) || (v && strncmp(text + l, ": ", 2)) || (!v && text[l]))
		return -EINVAL;
	ret->status = (int)v;
	if (v)
		ret->why = text + l + 2;
	return 0;
}
