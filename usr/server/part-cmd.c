// SPDX-License-Identifier: GPL-2.0
/* Parsing the "part" command (part-cmd.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <crdbg/dbgproto.h>

#include "part-cmd.h"

/*
 * "checkpoint\x1f1234\x1f--part\x1f..." into c->argv[1..]: only crdbg's
 * part operations (a verb of them and --part among the arguments).
 */
static int parse_start(char *spec, struct part_cmd *c)
{
	static const char *const verbs[] = { "checkpoint", "restart", "verify", "rm" };
	bool verb_ok = false, part = false;
	char *a = spec;
	int n = 0;

	while (a && n < PART_ARGS_MAX) {
		char *sep = strchr(a, DBGP_ARG_SEP);

		if (sep)
			*sep = 0;
		c->argv[++n] = a;
		a = sep ? sep + 1 : NULL;
	}
	if (a)
		return -EINVAL;	/* more than PART_ARGS_MAX */
	c->argv[n + 1] = NULL;
	c->argc = n;
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		verb_ok |= !strcmp(c->argv[1], verbs[i]);
	for (int i = 2; i <= n; i++)
		part |= !strcmp(c->argv[i], "--part");
	return verb_ok && part ? 0 : -EINVAL;
}

/* "MS" alone, at most DBGP_WAIT_MAX_MS. */
static int parse_ms(const char *s, unsigned long *ms)
{
	int end = 0;

	if (*s < '0' || *s > '9' || sscanf(s, "%lu%n", ms, &end) != 1 || s[end] ||
	    *ms > DBGP_WAIT_MAX_MS)
		return -EINVAL;
	return 0;
}

static int parse_wait(const char *arg, struct part_cmd *c)
{
	int end = 0;

	c->pid = 0;
	if (*arg < '0' || *arg > '9')
		return -EINVAL;
	if (sscanf(arg, "%lu debug %d%n", &c->ms, &c->pid, &end) == 2 && !arg[end] &&
	    c->pid > 0) {
		snprintf(c->step, sizeof(c->step), "debug");
	} else if (sscanf(arg, "%lu %63s%n", &c->ms, c->step, &end) == 2 && !arg[end] &&
		   strcmp(c->step, "debug")) {
		c->pid = 0;
	} else {
		return -EINVAL;
	}
	return c->ms > DBGP_WAIT_MAX_MS ? -EINVAL : 0;
}

int part_cmd_parse(char *buf, struct part_cmd *c, const char **why)
{
	memset(c, 0, sizeof(*c));
	if (!strncmp(buf, "start ", 6)) {
		c->op = PART_START;
		*why = "part start wants checkpoint|restart|verify|rm ... --part";
		return parse_start(buf + 6, c);
	}
	if (!strncmp(buf, "order ", 6)) {
		c->op = PART_ORDER;
		c->line = buf + 6;
		*why = "an order is one short line";
		return strlen(c->line) < 256 ? 0 : -EINVAL;
	}
	if (!strncmp(buf, "wait ", 5)) {
		c->op = PART_WAIT;
		*why = "part wait wants MS STEP or MS debug PID";
		return parse_wait(buf + 5, c);
	}
	if (!strncmp(buf, "finish ", 7)) {
		c->op = PART_FINISH;
		*why = "part finish wants MS";
		return parse_ms(buf + 7, &c->ms);
	}
	if (!strncmp(buf, "drain ", 6)) {
		c->op = PART_DRAIN;
		*why = "part drain wants MS";
		return parse_ms(buf + 6, &c->ms);
	}
	*why = "part wants start, order, wait, finish or drain";
	return -EINVAL;
}
