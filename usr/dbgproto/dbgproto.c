// SPDX-License-Identifier: GPL-2.0
/*
 * The debugger protocol (crdbg/dbgproto.h): encoding and parsing of the
 * commands the console sends to a GDB backend and of its replies. No I/O
 * and no allocation: both ends link it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crdbg/dbgproto.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const verb_name[] = {
	[DBGP_LOAD] = "load",		[DBGP_ATTACH] = "attach",
	[DBGP_START] = "start",		[DBGP_EXEC] = "exec",
	[DBGP_WAIT] = "wait",		[DBGP_INTERRUPT] = "interrupt",
	[DBGP_PRINT] = "print",		[DBGP_BREAK] = "break",
	[DBGP_BT] = "bt",		[DBGP_STACK] = "stack",
	[DBGP_STATUS] = "status",	[DBGP_CLI] = "cli",
	[DBGP_INPUT] = "input",		[DBGP_MPI] = "mpi",
	[DBGP_HOOK] = "hook",		[DBGP_PART] = "part",
};

static const char *const exec_name[] = {
	[DBGP_EXEC_CONTINUE] = "continue",	[DBGP_EXEC_STEP] = "step",
	[DBGP_EXEC_NEXT] = "next",		[DBGP_EXEC_FINISH] = "finish",
	[DBGP_EXEC_STEPI] = "stepi",		[DBGP_EXEC_NEXTI] = "nexti",
	[DBGP_EXEC_MPI_RETURN] = "mpi-return",
	[DBGP_EXEC_UNTIL] = "until",		[DBGP_EXEC_ADVANCE] = "advance",
};

_Static_assert(ARRAY_SIZE(verb_name) == __DBGP_VERB_LAST, "a verb without a name");
_Static_assert(ARRAY_SIZE(exec_name) == __DBGP_EXEC_LAST, "a run kind without a name");

const char *dbgp_verb_name(enum dbgp_verb verb)
{
	return (unsigned int)verb < __DBGP_VERB_LAST ? verb_name[verb] : NULL;
}

const char *dbgp_exec_name(enum dbgp_exec exec)
{
	return (unsigned int)exec < __DBGP_EXEC_LAST ? exec_name[exec] : NULL;
}

int dbgp_exec_parse(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(exec_name); i++)
		if (!strcmp(name, exec_name[i]))
			return i;
	return -EINVAL;
}

/* snprintf's result as an encoder's: the length, or -ENOSPC. */
static int fits(int n, size_t size)
{
	if (n < 0 || (size_t)n >= size || n > DBGP_CMD_MAX)
		return -ENOSPC;
	return n;
}

/* until may have a location, advance must, the other kinds have none. */
static bool exec_location_ok(enum dbgp_exec exec, bool has_location)
{
	if (exec == DBGP_EXEC_ADVANCE)
		return has_location;
	return exec == DBGP_EXEC_UNTIL || !has_location;
}

/* bt's count: N or -N, N a decimal of 1 to 6 digits, not 0. */
static bool bt_count_ok(const char *p)
{
	size_t n;

	if (*p == '-')
		p++;
	n = strspn(p, "0123456789");
	return n && n <= 6 && !p[n] && strspn(p, "0") < n;
}

static bool verb_takes_wait(enum dbgp_verb verb)
{
	return verb == DBGP_START || verb == DBGP_EXEC || verb == DBGP_WAIT ||
	       verb == DBGP_INTERRUPT;
}

static bool verb_takes_text(enum dbgp_verb verb)
{
	return verb == DBGP_PRINT || verb == DBGP_BREAK || verb == DBGP_CLI ||
	       verb == DBGP_INPUT || verb == DBGP_LOAD || verb == DBGP_HOOK ||
	       verb == DBGP_PART;
}

int dbgp_encode(char *buf, size_t size, const struct dbgp_cmd *cmd)
{
	const char *verb = dbgp_verb_name(cmd->verb);
	const char *arg = cmd->arg ? cmd->arg : "";

	if (!verb || strchr(arg, '\n'))
		return -EINVAL;
	if (verb_takes_wait(cmd->verb) && cmd->wait_ms > DBGP_WAIT_MAX_MS)
		return -EINVAL;
	switch (cmd->verb) {
	case DBGP_EXEC:
		if (!dbgp_exec_name(cmd->exec) || !exec_location_ok(cmd->exec, *arg))
			return -EINVAL;
		return fits(snprintf(buf, size, "%s %lu%s %s%s%s", verb, cmd->wait_ms,
				     cmd->hold_exits ? " hold" : "", dbgp_exec_name(cmd->exec),
				     *arg ? " " : "", arg), size);
	case DBGP_ATTACH:
		if (cmd->pid <= 0 || !*arg)
			return -EINVAL;
		return fits(snprintf(buf, size, "%s %d %s", verb, cmd->pid, arg), size);
	case DBGP_BT:
		if (!*arg)
			break;
		if (!bt_count_ok(arg))
			return -EINVAL;
		return fits(snprintf(buf, size, "%s %s", verb, arg), size);
	case DBGP_LOAD:
		if (!*arg || *arg == DBGP_ARG_SEP || strchr(arg, DBGP_OPTS_END))
			return -EINVAL;
		if (!cmd->preload)
			break;
		if (!*cmd->preload || strpbrk(cmd->preload, "\n\x1e\x1f"))
			return -EINVAL;
		return fits(snprintf(buf, size, "%s preload=%s%c%s", verb, cmd->preload,
				     DBGP_OPTS_END, arg), size);
	default:
		break;
	}
	if (verb_takes_wait(cmd->verb))
		return fits(snprintf(buf, size, "%s %lu%s", verb, cmd->wait_ms,
				     cmd->hold_exits ? " hold" : ""), size);
	if (verb_takes_text(cmd->verb) || (cmd->verb == DBGP_MPI && *arg))
		return fits(snprintf(buf, size, "%s %s", verb, arg), size);
	return fits(snprintf(buf, size, "%s", verb), size);
}

int dbgp_load_spec(char *buf, size_t size, char *const *argv)
{
	/* The command is "load " and this. */
	size_t room = DBGP_CMD_MAX - strlen(verb_name[DBGP_LOAD]) - 1, len = 0;

	if (!argv || !argv[0] || !argv[0][0])
		return -EINVAL;
	if (size > room + 1)
		size = room + 1;
	for (int i = 0; argv[i]; i++) {
		int n;

		if (i > DBGP_ARGS_MAX)
			return -E2BIG;
		if (strpbrk(argv[i], "\n\x1e\x1f"))
			return -EINVAL;	/* the protocol's separators */
		n = snprintf(buf + len, size - len, "%s%s", i ? (char[]){ DBGP_ARG_SEP, 0 } : "",
			     argv[i]);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
		len += n;
	}
	return len;
}

/* A decimal WAIT at *p, ending at a space or at the end. */
static int parse_wait(const char **p, unsigned long *ret)
{
	unsigned long v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > DBGP_WAIT_MAX_MS)
			return -EINVAL;
	}
	if (*s && *s != ' ')
		return -EINVAL;
	*ret = v;
	*p = s;
	return 0;
}

static int parse_exec(const char *p, struct dbgp_cmd *ret)
{
	int kind;

	const char *loc;
	size_t len;

	if (*p != ' ' || !p[1])
		return -ENOENT;		/* "exec MS": no kind at all */
	ret->arg = p + 1;
	loc = strchr(p + 1, ' ');
	len = loc ? (size_t)(loc - p - 1) : strlen(p + 1);
	kind = -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(exec_name); i++)
		if (strlen(exec_name[i]) == len && !strncmp(p + 1, exec_name[i], len))
			kind = i;
	if (kind < 0 || (loc && !loc[1]) || !exec_location_ok(kind, loc != NULL))
		return -EINVAL;
	ret->exec = kind;
	ret->arg = loc ? loc + 1 : "";
	return 0;
}

static int parse_attach(const char *p, struct dbgp_cmd *ret)
{
	const char *s = p;
	long pid = 0;

	ret->arg = p;
	for (; *s >= '0' && *s <= '9' && pid <= 0x7fffffff; s++)
		pid = pid * 10 + (*s - '0');
	if (s == p || pid <= 0 || pid > 0x7fffffff || *s != ' ' || !s[1])
		return -EINVAL;
	ret->pid = pid;
	ret->arg = s + 1;
	return 0;
}

/* The arguments of verb at p (just after the verb's name). */
static int parse_args(enum dbgp_verb verb, const char *p, struct dbgp_cmd *ret)
{
	if (verb_takes_wait(verb)) {
		if (*p != ' ')
			return -ENOENT;
		p++;
		ret->arg = p;
		if (parse_wait(&p, &ret->wait_ms))
			return -EINVAL;
		if (!strncmp(p, " hold", 5) && (!p[5] || p[5] == ' ')) {
			ret->hold_exits = true;
			p += 5;
		}
		if (verb == DBGP_EXEC)
			return parse_exec(p, ret);
		return *p ? -EINVAL : 0;
	}
	switch (verb) {
	case DBGP_BT:
		/* "bt" or "bt N", "bt -N": gdb's innermost or outermost N */
		if (*p && (*p != ' ' || !bt_count_ok(p + 1)))
			return -ENOENT;
		ret->arg = *p ? p + 1 : p;
		return 0;
	case DBGP_STACK:
	case DBGP_STATUS:
		return *p ? -ENOENT : 0;
	case DBGP_ATTACH:
		if (*p != ' ')
			return -ENOENT;
		return parse_attach(p + 1, ret);
	case DBGP_LOAD:
		if (*p != ' ')
			return -ENOENT;
		ret->arg = p + 1;
		return p[1] && p[1] != DBGP_ARG_SEP ? 0 : -EINVAL;
	default:	/* text verbs: "VERB" or "VERB TEXT" */
		if (*p && *p != ' ')
			return -ENOENT;
		ret->arg = *p ? p + 1 : p;
		return 0;
	}
}

/* load's "KEY=VALUE[\x1f...]\x1e" before PROG, cut off in place. */
static int parse_load_opts(char *spec, struct dbgp_cmd *ret)
{
	char *end = strchr(spec, DBGP_OPTS_END), *opt, *next;

	if (!end)
		return 0;
	*end = 0;
	ret->arg = end + 1;
	for (opt = spec; opt; opt = next) {
		next = strchr(opt, DBGP_ARG_SEP);
		if (next)
			*next++ = 0;
		if (!strncmp(opt, "preload=", 8) && opt[8])
			ret->preload = opt + 8;
		else
			return -EINVAL;	/* an option this end does not know */
	}
	return *ret->arg && *ret->arg != DBGP_ARG_SEP ? 0 : -EINVAL;
}

int dbgp_parse(char *buf, size_t len, struct dbgp_cmd *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (len > DBGP_CMD_MAX)
		return -EMSGSIZE;
	if (memchr(buf, 0, len) || memchr(buf, '\n', len))
		return -EBADMSG;
	buf[len] = 0;
	for (size_t v = 0; v < ARRAY_SIZE(verb_name); v++) {
		size_t vl = strlen(verb_name[v]);
		int rc;

		if (strncmp(buf, verb_name[v], vl) || (buf[vl] && buf[vl] != ' '))
			continue;
		rc = parse_args(v, buf + vl, ret);
		if (rc == -ENOENT)
			return rc;
		ret->verb = v;
		if (!rc && v == DBGP_LOAD)
			rc = parse_load_opts(buf + (ret->arg - buf), ret);
		return rc;
	}
	return -ENOENT;
}

size_t dbgp_split_load(char *spec, const char **ret_args, size_t max)
{
	size_t n = 0;
	char *p;

	for (p = strchr(spec, DBGP_ARG_SEP); p && n < max; p = strchr(p, DBGP_ARG_SEP)) {
		*p++ = 0;
		ret_args[n++] = p;
	}
	ret_args[n] = NULL;
	return n;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

enum dbgp_reply_kind dbgp_reply_kind(const char *reply)
{
	size_t len = dbgp_reply_text_len(reply);

	if (starts(reply, DBGP_STOPPED))
		return DBGP_REPLY_STOPPED;
	if (starts(reply, DBGP_EXITED))
		return DBGP_REPLY_EXITED;
	if (starts(reply, DBGP_ERROR))
		return DBGP_REPLY_ERROR;
	if (starts(reply, DBGP_LOST))
		return DBGP_REPLY_LOST;
	if (len == strlen(DBGP_RUNNING) && starts(reply, DBGP_RUNNING))
		return DBGP_REPLY_RUNNING;
	return DBGP_REPLY_OTHER;
}

size_t dbgp_reply_text_len(const char *reply)
{
	const char *f = strchr(reply, DBGP_FIELDS);

	return f ? (size_t)(f - reply) : strlen(reply);
}

const char *dbgp_reply_fields(const char *reply)
{
	const char *f = strchr(reply, DBGP_FIELDS);

	return f ? f + 1 : NULL;
}

int dbgp_next_field(const char **cursor, struct dbgp_field *ret)
{
	static const char seps[] = { DBGP_FIELD_SEP, DBGP_FIELDS, 0 };
	const char *f = *cursor;

	while (f && *f) {
		size_t len = strcspn(f, seps);
		const char *eq = memchr(f, '=', len);

		*cursor = f + len + !!f[len];
		if (eq && eq > f) {
			ret->key = f;
			ret->klen = eq - f;
			ret->value = eq + 1;
			ret->vlen = len - ret->klen - 1;
			return 1;
		}
		f = *cursor;
	}
	return 0;
}

bool dbgp_field_is(const struct dbgp_field *f, const char *key)
{
	return f->klen == strlen(key) && !memcmp(f->key, key, f->klen);
}

int dbgp_frame_text(char *buf, size_t size, const char *func,
		    const char *file, int line)
{
	if (!func)
		func = "??";
	if (file && line)
		return snprintf(buf, size, "%s at %s:%d", func, file, line);
	return snprintf(buf, size, "%s", func);
}

/* watchpoint-trigger, read-watchpoint-trigger, access-watchpoint-trigger */
static bool is_watch_trigger(const char *reason)
{
	size_t n = strlen(reason), k = strlen("watchpoint-trigger");

	return n >= k && !strcmp(reason + n - k, "watchpoint-trigger");
}

int dbgp_stop_text(char *buf, size_t size, const struct dbgp_stop *st)
{
	const char *reason = st->reason ? st->reason : "";
	char fr[400];

	if (st->exited && st->signal)
		return snprintf(buf, size, DBGP_EXITED "signal %s", st->signal);
	if (st->exited)
		return snprintf(buf, size, DBGP_EXITED "code %d", st->exit_code);
	if (st->attached && !st->func)
		return snprintf(buf, size, DBGP_STOPPED "attached");
	dbgp_frame_text(fr, sizeof(fr), st->func, st->file, st->line);
	if (st->attached)
		return snprintf(buf, size, DBGP_STOPPED "attached, %s", fr);
	if (!strcmp(reason, "breakpoint-hit"))
		return snprintf(buf, size, DBGP_STOPPED "breakpoint %d, %s", st->bkptno, fr);
	if (is_watch_trigger(reason) && st->bkptno && st->new_value && st->old_value)
		return snprintf(buf, size, DBGP_STOPPED "watchpoint %d: %s = %s (was %s), %s",
				st->bkptno, st->wpt_exp ? st->wpt_exp : "?",
				st->new_value, st->old_value, fr);
	if (is_watch_trigger(reason) && st->bkptno)
		return snprintf(buf, size, DBGP_STOPPED "watchpoint %d: %s = %s, %s",
				st->bkptno, st->wpt_exp ? st->wpt_exp : "?",
				st->new_value ? st->new_value : "?", fr);
	if (!strcmp(reason, "function-finished") && st->return_value)
		return snprintf(buf, size, DBGP_STOPPED "%s, %s, returned %s", reason, fr,
				st->return_value);
	if (!strcmp(reason, "signal-received") && st->signal)
		return snprintf(buf, size, DBGP_STOPPED "signal %s, %s", st->signal, fr);
	if (*reason)
		return snprintf(buf, size, DBGP_STOPPED "%s, %s", reason, fr);
	return snprintf(buf, size, DBGP_STOPPED "%s", fr);
}

/* Append one KEY=VALUE field; control bytes of VALUE become '?'. */
static void add_field(char *buf, size_t size, size_t *len, const char *key,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void add_field(char *buf, size_t size, size_t *len, const char *key,
		      const char *fmt, ...)
{
	size_t start = *len;
	va_list ap;
	int n;

	n = snprintf(buf + start, size - start, "%c%s=",
		     start ? DBGP_FIELD_SEP : DBGP_FIELDS, key);
	if (n < 0 || (size_t)n >= size - start)
		goto drop;
	va_start(ap, fmt);
	n += vsnprintf(buf + start + n, size - start - n, fmt, ap);
	va_end(ap);
	if ((size_t)n >= size - start)
		goto drop;
	for (char *p = buf + start + 1; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = '?';
	*len = start + n;
	return;
drop:
	buf[start] = 0;
}

size_t dbgp_stop_fields(char *buf, size_t size, const struct dbgp_stop *st)
{
	const char *reason = st->reason ? st->reason : "";
	size_t len = 0;

	if (!size)
		return 0;
	buf[0] = 0;
	if (*reason && !st->attached)
		add_field(buf, size, &len, "reason", "%s", reason);
	if (st->bkptno && (!strcmp(reason, "breakpoint-hit") || is_watch_trigger(reason)))
		add_field(buf, size, &len, "bkptno", "%d", st->bkptno);
	if (st->wpt_exp)
		add_field(buf, size, &len, "exp", "%s", st->wpt_exp);
	if (st->old_value)
		add_field(buf, size, &len, "old", "%s", st->old_value);
	if (st->new_value)
		add_field(buf, size, &len, "new", "%s", st->new_value);
	if (st->signal)
		add_field(buf, size, &len, "signal", "%s", st->signal);
	if (st->exited && !st->signal)
		add_field(buf, size, &len, "code", "%d", st->exit_code);
	if (st->exited && st->held)
		add_field(buf, size, &len, "held", "1");
	if (st->exited)
		return len;
	if (st->func && strcmp(st->func, "??"))
		add_field(buf, size, &len, "func", "%s", st->func);
	if (st->file)
		add_field(buf, size, &len, "file", "%s", st->file);
	if (st->line)
		add_field(buf, size, &len, "line", "%d", st->line);
	if (st->pc)
		add_field(buf, size, &len, "pc", "0x%llx", (unsigned long long)st->pc);
	if (st->return_value)
		add_field(buf, size, &len, "value", "%s", st->return_value);
	return len;
}

int dbgp_status_text(char *buf, size_t size, const char *state, int gdb_pid,
		     int pid, const char *where, uint64_t pc)
{
	if (pc)
		return snprintf(buf, size, "%s gdb=%d pid=%d %s, pc 0x%llx", state,
				gdb_pid, pid, where, (unsigned long long)pc);
	return snprintf(buf, size, "%s gdb=%d pid=%d %s", state, gdb_pid, pid, where);
}

int dbgp_parse_status(const char *reply, struct dbgp_status *ret)
{
	struct dbgp_status st = { 0 };
	int used = 0;

	if (sscanf(reply, "%15s gdb=%d pid=%d %n", st.state, &st.gdb_pid,
		   &st.pid, &used) < 3 || !used)
		return -EINVAL;
	st.where = reply + used;
	*ret = st;
	return 0;
}

void dbgp_hex_encode(char *buf, const void *data, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		buf[2 * i] = digits[p[i] >> 4];
		buf[2 * i + 1] = digits[p[i] & 15];
	}
	buf[2 * len] = 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int dbgp_hex_decode(void *out, size_t len, const char *hex, size_t hexlen)
{
	unsigned char *p = out;

	if (hexlen != 2 * len)
		return -EBADMSG;
	for (size_t i = 0; i < len; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EBADMSG;
		p[i] = hi << 4 | lo;
	}
	return 0;
}
