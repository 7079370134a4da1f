// SPDX-License-Identifier: GPL-2.0
/* The part protocol's codec (<crdbg/job-part.h>): pure, no I/O, fuzzed. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <crdbg/job.h>
#include <crdbg/job-part.h>

_Static_assert(JOB_PART_TTY_MAX == CRS_TTY_MAX, "a stored step's terminal is a manifest's");

static const char *const step_names[] = {
	[JOB_STEP_ALIVE] = "alive",
	[JOB_STEP_FROZEN] = "frozen",
	[JOB_STEP_DUMPED] = "dumped",
	[JOB_STEP_STORED] = "stored",
	[JOB_STEP_VERIFIED] = "verified",
	[JOB_STEP_RESTORED] = "restored",
	[JOB_STEP_TASK] = "task",
	[JOB_STEP_EXIT] = "exit",
	[JOB_STEP_FAILED] = "failed",
};

static const char *const order_names[] = {
	[JOB_ORDER_DUMP] = "dump",
	[JOB_ORDER_RELEASE] = "release",
	[JOB_ORDER_COMMIT] = "commit",
	[JOB_ORDER_KILL] = "kill",
	[JOB_ORDER_ABORT] = "abort",
	[JOB_ORDER_RESTORE] = "restore",
};

const char *job_part_step_name(enum job_part_step step)
{
	return step > JOB_STEP_UNSPEC && step <= JOB_STEP_MAX ? step_names[step] : NULL;
}

const char *job_part_order_name(enum job_part_order order)
{
	return order > JOB_ORDER_UNSPEC && order <= JOB_ORDER_MAX ? order_names[order] : NULL;
}

/* A rank as a task line carries it: "-" or 1..31 of [0-9,-]. */
static bool rank_valid(const char *r)
{
	size_t n = strnlen(r, JOB_PART_RANK_MAX);

	if (!n || n >= JOB_PART_RANK_MAX)
		return false;
	if (!strcmp(r, "-"))
		return true;
	for (; *r; r++)
		if (!((*r >= '0' && *r <= '9') || *r == ',' || *r == '-'))
			return false;
	return true;
}

static int put(char *buf, size_t len, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= len)
		return -ENOSPC;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= len - *at)
		return -ENOSPC;
	*at += (size_t)n;
	return 0;
}

/* One line of text (at most max bytes): its control characters become spaces. */
static int put_line(char *buf, size_t len, size_t *at, const char *s, size_t max)
{
	int r = 0;

	for (const char *c = s; !r && c < s + max && *c; c++)
		r = put(buf, len, at, "%c", (unsigned char)*c < 0x20 || *c == 0x7f ? ' ' : *c);
	return r;
}

static int format_stored(const struct job_part_stored *s, char *buf, size_t len, size_t *at)
{
	char hex[2 * sizeof(s->meta_sha) + 1];
	int r;

	if (!crs_handle_valid(s->handle) || (s->parent[0] && !crs_handle_valid(s->parent)) ||
	    (s->tty[0] && !crs_tty_path_valid(s->tty)))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(s->meta_sha); i++)
		snprintf(hex + 2 * i, 3, "%02x", s->meta_sha[i]);
	r = put(buf, len, at, " handle=%s meta=%s parent=%s bytes=%llu", s->handle, hex,
		s->parent[0] ? s->parent : "-", (unsigned long long)s->bytes);
	if (!r && s->tty[0])
		r = put(buf, len, at, " tty=%llx:%llx:%s", (unsigned long long)s->tty_rdev,
			(unsigned long long)s->tty_dev, s->tty);
	return r;
}

int job_part_msg_format(const struct job_part_msg *m, char *buf, size_t len)
{
	const char *name = job_part_step_name(m->step);
	size_t at = 0;
	int r;

	if (!name)
		return -EINVAL;
	r = put(buf, len, &at, JOB_PART_PREFIX "%s", name);
	if (r)
		return r;
	switch (m->step) {
	case JOB_STEP_STORED:
		r = format_stored(&m->stored, buf, len, &at);
		break;
	case JOB_STEP_RESTORED:
		if (m->restored.cid[0] && !crs_cid_valid(m->restored.cid))
			return -EINVAL;
		r = put(buf, len, &at, " cid=%s parts=%u index=%u",
			m->restored.cid[0] ? m->restored.cid : "-", m->restored.parts,
			m->restored.index);
		break;
	case JOB_STEP_TASK:
		if (m->task.pid <= 0 || !rank_valid(m->task.rank))
			return -EINVAL;
		r = put(buf, len, &at, " pid=%d rank=%s", (int)m->task.pid, m->task.rank);
		break;
	case JOB_STEP_EXIT:
		if (m->exit_status < 0)
			return -EINVAL;
		r = put(buf, len, &at, " status=%d", m->exit_status);
		break;
	case JOB_STEP_FAILED:
		if (m->failed.err <= 0)
			return -EINVAL;
		r = put(buf, len, &at, " errno=%d why=", m->failed.err);
		r = r ? r : put_line(buf, len, &at, m->failed.why, sizeof(m->failed.why));
		break;
	default:
		break;
	}
	return r ? r : (int)at;
}

/* The parser's cursor over one line (not NUL terminated). */
struct cursor {
	const char *p, *end;
};

/* " KEY=" next: the cursor past it. */
static bool key(struct cursor *c, const char *k)
{
	size_t n = strlen(k);

	if ((size_t)(c->end - c->p) < n + 2 || c->p[0] != ' ' || memcmp(c->p + 1, k, n) ||
	    c->p[n + 1] != '=')
		return false;
	c->p += n + 2;
	return true;
}

/* A value: up to the next space or the end, copied into out (len bytes with its NUL). */
static bool word(struct cursor *c, char *out, size_t len)
{
	const char *s = c->p;
	size_t n;

	while (c->p < c->end && *c->p != ' ')
		c->p++;
	n = (size_t)(c->p - s);
	if (!n || n >= len || memchr(s, 0, n))
		return false;
	memcpy(out, s, n);
	out[n] = 0;
	return true;
}

/* Decimal digits, no sign or leading zero, at most max. */
static bool number(struct cursor *c, unsigned long long max, unsigned long long *ret)
{
	unsigned long long v = 0;
	const char *s = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		unsigned int d = (unsigned int)(*c->p - '0');

		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
		c->p++;
	}
	if (c->p == s || (*s == '0' && c->p - s > 1))
		return false;
	*ret = v;
	return true;
}

static bool parse_stored(struct cursor *c, struct job_part_stored *s)
{
	char hex[2 * sizeof(s->meta_sha) + 2], tty[CRS_TTY_MAX + 40];
	struct crs_job_part jp;
	unsigned long long bytes;

	if (!key(c, "handle") || !word(c, s->handle, sizeof(s->handle)) ||
	    !crs_handle_valid(s->handle) || !key(c, "meta") || !word(c, hex, sizeof(hex)) ||
	    strlen(hex) != 2 * sizeof(s->meta_sha) ||
	    !crs_digest_from_hex(hex, s->meta_sha, sizeof(s->meta_sha)) || !key(c, "parent") ||
	    !word(c, s->parent, sizeof(s->parent)) || !key(c, "bytes") ||
	    !number(c, UINT64_MAX, &bytes))
		return false;
	if (!strcmp(s->parent, "-"))
		s->parent[0] = 0;
	else if (!crs_handle_valid(s->parent))
		return false;
	s->bytes = bytes;
	s->tty[0] = 0;
	s->tty_rdev = s->tty_dev = 0;
	if (c->p == c->end)
		return true;
	/* tty= only when the tree had a terminal: "-" is not sent */
	if (!key(c, "tty") || !word(c, tty, sizeof(tty)) || !strcmp(tty, "-") ||
	    crs_job_tty_parse(tty, &jp))
		return false;
	memcpy(s->tty, jp.tty, sizeof(s->tty));
	s->tty_rdev = jp.tty_rdev;
	s->tty_dev = jp.tty_dev;
	return true;
}

static bool parse_restored(struct cursor *c, struct job_part_restored *r)
{
	unsigned long long parts, index;

	if (!key(c, "cid") || !word(c, r->cid, sizeof(r->cid)) || !key(c, "parts") ||
	    !number(c, UINT_MAX, &parts) || !key(c, "index") || !number(c, UINT_MAX, &index))
		return false;
	if (!strcmp(r->cid, "-"))
		r->cid[0] = 0;
	else if (!crs_cid_valid(r->cid))
		return false;
	r->parts = (unsigned int)parts;
	r->index = (unsigned int)index;
	return true;
}

static bool parse_failed(struct cursor *c, struct job_part_failed *f)
{
	unsigned long long e;
	size_t n;

	if (!key(c, "errno") || !number(c, 4095, &e) || !e || !key(c, "why"))
		return false;
	n = (size_t)(c->end - c->p);
	if (n >= sizeof(f->why))
		return false;
	for (size_t i = 0; i < n; i++)	/* one line, as the format writes it */
		if ((unsigned char)c->p[i] < 0x20 || c->p[i] == 0x7f)
			return false;
	memcpy(f->why, c->p, n);
	f->why[n] = 0;
	c->p = c->end;
	f->err = (int)e;
	return true;
}

int job_part_msg_parse(const char *line, size_t len, struct job_part_msg *ret)
{
	const size_t plen = sizeof(JOB_PART_PREFIX) - 1;
	struct cursor c = { line, line + len };
	struct job_part_msg m = { 0 };
	unsigned long long v;
	bool ok = true;
	int s;

	if (len && line[len - 1] == '\n')
		c.end--;
	if ((size_t)(c.end - c.p) < plen || memcmp(c.p, JOB_PART_PREFIX, plen))
		return -ENOMSG;
	if (c.end - c.p > JOB_PART_LINE_MAX)
		return -EBADMSG;
	c.p += plen;
	for (s = JOB_STEP_UNSPEC + 1; s <= JOB_STEP_MAX; s++) {
		size_t n = strlen(step_names[s]);

		if ((size_t)(c.end - c.p) >= n && !memcmp(c.p, step_names[s], n) &&
		    (c.p + n == c.end || c.p[n] == ' '))
			break;
	}
	if (s > JOB_STEP_MAX)
		return -EBADMSG;
	m.step = (enum job_part_step)s;
	c.p += strlen(step_names[s]);
	switch (m.step) {
	case JOB_STEP_STORED:
		ok = parse_stored(&c, &m.stored);
		break;
	case JOB_STEP_RESTORED:
		ok = parse_restored(&c, &m.restored);
		break;
	case JOB_STEP_TASK:
		ok = key(&c, "pid") && number(&c, 0x3fffffff, &v) && v > 0 && key(&c, "rank") &&
		     word(&c, m.task.rank, sizeof(m.task.rank)) && rank_valid(m.task.rank);
		m.task.pid = (pid_t)v;
		break;
	case JOB_STEP_EXIT:
		ok = key(&c, "status") && number(&c, INT_MAX, &v);
		m.exit_status = (int)v;
		break;
	case JOB_STEP_FAILED:
		ok = parse_failed(&c, &m.failed);
		break;
	default:
		break;
	}
	if (!ok || c.p != c.end)
		return -EBADMSG;
	*ret = m;
	return 0;
}

int job_part_order_format(enum job_part_order order, char *buf, size_t len)
{
	const char *name = job_part_order_name(order);
	size_t n;

	if (!name)
		return -EINVAL;
	n = strlen(name);
	if (n >= len)
		return -ENOSPC;
	memcpy(buf, name, n + 1);
	return (int)n;
}

int job_part_order_parse(const char *line, size_t len, enum job_part_order *ret)
{
	if (len && line[len - 1] == '\n')
		len--;
	for (int o = JOB_ORDER_UNSPEC + 1; o <= JOB_ORDER_MAX; o++)
		if (strlen(order_names[o]) == len && !memcmp(line, order_names[o], len)) {
			*ret = (enum job_part_order)o;
			return 0;
		}
	return -EBADMSG;
}

#define END_AGENTS "end-agents code="

int job_part_end_agents_format(int code, char *buf, size_t len)
{
	int n;

	if (code < 0 || code > 255)
		return -EINVAL;
	n = snprintf(buf, len, END_AGENTS "%d", code);
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

int job_part_end_agents_parse(const char *line, size_t len, int *code)
{
	size_t pre = strlen(END_AGENTS), i;
	int c = 0;

	if (len && line[len - 1] == '\n')
		len--;
	if (len <= pre || len > pre + 3 || memcmp(line, END_AGENTS, pre))
		return -EBADMSG;
	for (i = pre; i < len; i++) {
		if (line[i] < '0' || line[i] > '9' || (i == pre && line[i] == '0' && len > pre + 1))
			return -EBADMSG;
		c = c * 10 + (line[i] - '0');
	}
	if (c > 255)
		return -EBADMSG;
	*code = c;
	return 0;
}

void job_part_msg_failed(struct job_part_msg *m, int err, const char *fmt, ...)
{
	va_list ap;

	*m = (struct job_part_msg){ .step = JOB_STEP_FAILED };
	m->failed.err = err < 0 ? -err : err ? err : EIO;
	va_start(ap, fmt);
	vsnprintf(m->failed.why, sizeof(m->failed.why), fmt, ap);
	va_end(ap);
}

bool job_part_roots_valid(const char *v)
{
	return !strcmp(v, "-") || (v[0] && v[0] != ',' && !strstr(v, ",,") &&
				   v[strlen(v) - 1] != ',' && strspn(v, "0123456789,") == strlen(v));
}
