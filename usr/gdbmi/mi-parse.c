// SPDX-License-Identifier: GPL-2.0
/*
 * GDB/MI output parser: one line into a struct mi_record, an incremental
 * line splitter on top, and path lookups in the value tree.
 *
 * Every record lives in its own arena (a chain of blocks), so freeing a
 * record is one call whatever its shape. The arena never holds more than
 * a small multiple of the line length: each value costs at least two
 * input bytes and a decoded string is never longer than its source.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crdbg/gdbmi.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct mi_block {
	struct mi_block *next;
	size_t used, size;
	max_align_t data[];
};

struct mi_arena {
	struct mi_block *head;
	size_t next_size;
};

static struct mi_arena *arena_new(size_t hint)
{
	struct mi_arena *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->next_size = hint < 256 ? 256 : hint;
	return a;
}

static void arena_free(struct mi_arena *a)
{
	struct mi_block *b, *n;

	if (!a)
		return;
	for (b = a->head; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a);
}

static void *arena_alloc(struct mi_arena *a, size_t size)
{
	struct mi_block *b = a->head;
	size_t align = _Alignof(max_align_t);
	void *p;

	size = (size + align - 1) & ~(align - 1);
	if (!b || b->size - b->used < size) {
		size_t bsize = a->next_size;

		if (bsize < size)
			bsize = size;
		b = malloc(sizeof(*b) + bsize);
		if (!b)
			return NULL;
		b->size = bsize;
		b->used = 0;
		b->next = a->head;
		a->head = b;
		if (a->next_size < (1u << 20))
			a->next_size *= 2;
	}
	p = (char *)b->data + b->used;
	b->used += size;
	return p;
}

/* ------------------------------------------------------------------ */
/* Line parser */

struct cursor {
	const char *s;
	size_t len, pos;
	struct mi_arena *arena;
	size_t nvalues;
};

static inline int peek(const struct cursor *c)
{
	return c->pos < c->len ? (unsigned char)c->s[c->pos] : -1;
}

static bool accept(struct cursor *c, char ch)
{
	if (peek(c) != (unsigned char)ch)
		return false;
	c->pos++;
	return true;
}

static bool is_name_char(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
}

/* A variable or class name, copied NUL-terminated into the arena. */
static int parse_name(struct cursor *c, const char **ret)
{
	size_t start = c->pos;
	char *name;

	while (is_name_char(peek(c)))
		c->pos++;
	if (c->pos == start)
		return -EBADMSG;
	name = arena_alloc(c->arena, c->pos - start + 1);
	if (!name)
		return -ENOMEM;
	memcpy(name, c->s + start, c->pos - start);
	name[c->pos - start] = '\0';
	*ret = name;
	return 0;
}

static int escape_char(int ch)
{
	switch (ch) {
	case 'n': return '\n';
	case 't': return '\t';
	case 'r': return '\r';
	case 'a': return '\a';
	case 'b': return '\b';
	case 'f': return '\f';
	case 'v': return '\v';
	case 'e': return 033;
	case '"': return '"';
	case '\\': return '\\';
	case '\'': return '\'';
	case '?': return '?';
	default: return -1;
	}
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * "..." with C escapes: \n \t \" \\ and friends, \NNN octal (1-3 digits,
 * at most \377), \xHH hex. Raw control characters are refused: GDB
 * always escapes them, so one means the line is not MI.
 */
static int parse_cstring(struct cursor *c, const char **ret_str, size_t *ret_len)
{
	size_t end, n = 0;
	char *out;

	if (!accept(c, '"'))
		return -EBADMSG;
	for (end = c->pos; end < c->len && c->s[end] != '"'; end++)
		if (c->s[end] == '\\')
			end++;
	if (end >= c->len)
		return -EBADMSG;	/* unterminated */
	out = arena_alloc(c->arena, end - c->pos + 1);
	if (!out)
		return -ENOMEM;
	while (c->pos < end) {
		int ch = (unsigned char)c->s[c->pos++];

		if (ch < 0x20 && ch != '\t')
			return -EBADMSG;
		if (ch != '\\') {
			out[n++] = ch;
			continue;
		}
		ch = (unsigned char)c->s[c->pos++];	/* pos <= end: '"' at worst */
		if (ch >= '0' && ch <= '7') {
			int v = ch - '0', k;

			for (k = 1; k < 3 && c->pos < end &&
			     c->s[c->pos] >= '0' && c->s[c->pos] <= '7'; k++)
				v = v * 8 + (c->s[c->pos++] - '0');
			if (v > 0xff)
				return -EBADMSG;
			out[n++] = v;
		} else if (ch == 'x') {
			int v = 0, k, h;

			for (k = 0; k < 2 && c->pos < end &&
			     (h = hexval((unsigned char)c->s[c->pos])) >= 0; k++) {
				v = v * 16 + h;
				c->pos++;
			}
			if (!k)
				return -EBADMSG;
			out[n++] = v;
		} else {
			int e = escape_char(ch);

			if (e < 0)
				return -EBADMSG;
			out[n++] = e;
		}
	}
	/* An escape at the very end consumed the real closing quote. */
	if (c->pos != end || !accept(c, '"'))
		return -EBADMSG;
	out[n] = '\0';
	*ret_str = out;
	*ret_len = n;
	return 0;
}

static int new_value(struct cursor *c, enum mi_value_kind kind, struct mi_value **ret)
{
	struct mi_value *v;

	if (++c->nvalues > MI_MAX_VALUES)
		return -E2BIG;
	v = arena_alloc(c->arena, sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	*ret = v;
	return 0;
}

static int parse_value(struct cursor *c, int depth, struct mi_value **ret);

/* name=value */
static int parse_result(struct cursor *c, int depth, struct mi_value **ret)
{
	const char *name;
	int err;

	err = parse_name(c, &name);
	if (err)
		return err;
	if (!accept(c, '='))
		return -EBADMSG;
	err = parse_value(c, depth, ret);
	if (err)
		return err;
	(*ret)->name = name;
	return 0;
}

/* Elements of a tuple (results only) or a list (results or values). */
static int parse_elements(struct cursor *c, int depth, struct mi_value *parent, char close)
{
	struct mi_value **tail = &parent->child;

	if (accept(c, close))
		return 0;
	for (;;) {
		struct mi_value *v;
		int ch = peek(c), err;

		if (parent->kind == MI_LIST && (ch == '"' || ch == '{' || ch == '['))
			err = parse_value(c, depth, &v);
		else
			err = parse_result(c, depth, &v);
		if (err)
			return err;
		*tail = v;
		tail = &v->next;
		parent->count++;
		if (accept(c, close))
			return 0;
		if (!accept(c, ','))
			return -EBADMSG;
	}
}

static int parse_value(struct cursor *c, int depth, struct mi_value **ret)
{
	struct mi_value *v;
	int ch = peek(c), err;

	if (depth >= MI_MAX_DEPTH)
		return -EBADMSG;
	if (ch == '"') {
		err = new_value(c, MI_CONST, &v);
		if (!err)
			err = parse_cstring(c, &v->str, &v->len);
	} else if (ch == '{' || ch == '[') {
		c->pos++;
		err = new_value(c, ch == '{' ? MI_TUPLE : MI_LIST, &v);
		if (!err)
			err = parse_elements(c, depth + 1, v, ch == '{' ? '}' : ']');
	} else {
		return -EBADMSG;
	}
	if (err)
		return err;
	*ret = v;
	return 0;
}

static const struct {
	const char *name;
	enum mi_result_class rclass;
} result_classes[] = {
	{ "done", MI_RC_DONE },
	{ "running", MI_RC_RUNNING },
	{ "connected", MI_RC_CONNECTED },
	{ "error", MI_RC_ERROR },
	{ "exit", MI_RC_EXIT },
};

static int parse_record(struct cursor *c, struct mi_record *rec)
{
	struct mi_value **tail;
	int ch, err;
	size_t i;

	err = new_value(c, MI_TUPLE, &rec->results);
	if (err)
		return err;

	if (c->len >= 5 && !memcmp(c->s, "(gdb)", 5)) {
		for (c->pos = 5; peek(c) == ' '; c->pos++)
			;
		rec->kind = MI_REC_PROMPT;
		return c->pos == c->len ? 0 : -EBADMSG;
	}

	ch = peek(c);
	if (ch >= '0' && ch <= '9') {
		uint64_t tok = 0;

		while ((ch = peek(c)) >= '0' && ch <= '9') {
			if (tok > (UINT64_MAX - (ch - '0')) / 10)
				return -EBADMSG;
			tok = tok * 10 + (ch - '0');
			c->pos++;
		}
		rec->has_token = true;
		rec->token = tok;
	}

	ch = peek(c);
	c->pos++;
	switch (ch) {
	case '~':
	case '@':
	case '&':
		if (rec->has_token)
			return -EBADMSG;
		rec->kind = ch == '~' ? MI_REC_CONSOLE : ch == '@' ? MI_REC_TARGET : MI_REC_LOG;
		err = parse_cstring(c, &rec->text, &rec->text_len);
		if (err)
			return err;
		return c->pos == c->len ? 0 : -EBADMSG;
	case '^':
		rec->kind = MI_REC_RESULT;
		break;
	case '*':
		rec->kind = MI_REC_EXEC;
		break;
	case '+':
		rec->kind = MI_REC_STATUS;
		break;
	case '=':
		rec->kind = MI_REC_NOTIFY;
		break;
	default:
		return -EBADMSG;
	}

	err = parse_name(c, &rec->klass);
	if (err)
		return err;
	if (rec->kind == MI_REC_RESULT) {
		for (i = 0; i < ARRAY_SIZE(result_classes); i++)
			if (!strcmp(rec->klass, result_classes[i].name))
				rec->rclass = result_classes[i].rclass;
		if (rec->rclass == MI_RC_NONE)
			return -EBADMSG;
	}

	tail = &rec->results->child;
	while (accept(c, ',')) {
		struct mi_value *v;

		err = parse_result(c, 1, &v);
		if (err)
			return err;
		*tail = v;
		tail = &v->next;
		rec->results->count++;
	}
	return c->pos == c->len ? 0 : -EBADMSG;
}

int mi_parse_line(const char *line, size_t len, struct mi_record **ret_rec)
{
	struct cursor c = { .s = line, .len = len };
	struct mi_record *rec;
	int err;

	if (len && line[len - 1] == '\r')
		c.len = --len;
	if (len > MI_MAX_LINE)
		return -E2BIG;
	if (!len)
		return -EBADMSG;
	c.arena = arena_new(len * 2 + 256);
	if (!c.arena)
		return -ENOMEM;
	rec = arena_alloc(c.arena, sizeof(*rec));
	if (!rec) {
		arena_free(c.arena);
		return -ENOMEM;
	}
	memset(rec, 0, sizeof(*rec));
	rec->arena = c.arena;
	err = parse_record(&c, rec);
	if (err) {
		arena_free(c.arena);
		return err;
	}
	*ret_rec = rec;
	return 0;
}

void mi_record_free(struct mi_record *rec)
{
	if (rec)
		arena_free(rec->arena);	/* rec itself lives in the arena */
}

/* ------------------------------------------------------------------ */
/* Incremental parser */

/*
 * An overlong line is replaced in the buffer by this one-byte line, so
 * its error comes out in order with the lines around it. GDB never
 * writes a raw NUL.
 */
#define OVERLONG_MARK '\0'

struct mi_parser {
	char *buf;
	size_t start;		/* first unconsumed byte */
	size_t scan;		/* no newline in [start, scan) */
	size_t len, cap;
	size_t tail;		/* start of the unfinished last line */
	bool skipping;		/* dropping an overlong line up to its newline */
};

struct mi_parser *mi_parser_new(void)
{
	return calloc(1, sizeof(struct mi_parser));
}

void mi_parser_free(struct mi_parser *p)
{
	if (!p)
		return;
	free(p->buf);
	free(p);
}

static int reserve(struct mi_parser *p, size_t more)
{
	size_t cap;
	char *nbuf;

	if (p->start && p->start >= p->len / 2) {
		memmove(p->buf, p->buf + p->start, p->len - p->start);
		p->len -= p->start;
		p->scan -= p->start;
		p->tail -= p->start;
		p->start = 0;
	}
	if (p->cap - p->len >= more)
		return 0;
	cap = p->cap ? p->cap : 4096;
	while (cap - p->len < more) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	nbuf = realloc(p->buf, cap);
	if (!nbuf)
		return -ENOMEM;
	p->buf = nbuf;
	p->cap = cap;
	return 0;
}

int mi_parser_feed(struct mi_parser *p, const void *data, size_t len)
{
	const char *s = data;

	while (len) {
		const char *nl = memchr(s, '\n', len);
		size_t chunk = nl ? (size_t)(nl - s) + 1 : len;
		size_t linelen = p->len - p->tail + chunk - (nl ? 1 : 0);
		int err;

		if (p->skipping) {
			if (nl)
				p->skipping = false;
		} else if (linelen > MI_MAX_LINE + 1) {	/* + 1: a '\r' */
			/* Replace the partial line by the marker line. */
			p->len = p->tail;
			err = reserve(p, 2);
			if (err)
				return err;
			p->buf[p->len++] = OVERLONG_MARK;
			p->buf[p->len++] = '\n';
			p->tail = p->len;
			p->skipping = !nl;
		} else {
			err = reserve(p, chunk);
			if (err)
				return err;
			memcpy(p->buf + p->len, s, chunk);
			p->len += chunk;
			if (nl)
				p->tail = p->len;
		}
		s += chunk;
		len -= chunk;
	}
	return 0;
}

int mi_parser_next(struct mi_parser *p, struct mi_record **ret_rec)
{
	for (;;) {
		char *line = p->buf + p->start, *nl;
		size_t n;
		int err;

		if (p->scan < p->start)
			p->scan = p->start;
		nl = p->len > p->scan ? memchr(p->buf + p->scan, '\n', p->len - p->scan) : NULL;
		if (!nl) {
			p->scan = p->len;
			return 0;
		}
		n = nl - line;
		p->start += n + 1;
		p->scan = p->start;
		if (n == 1 && line[0] == OVERLONG_MARK)
			return -E2BIG;
		if (n == 0 || (n == 1 && line[0] == '\r'))
			continue;	/* blank lines carry nothing */
		err = mi_parse_line(line, n, ret_rec);
		return err ? err : 1;
	}
}

size_t mi_parser_pending(const struct mi_parser *p)
{
	return p->len - p->start;
}

/* ------------------------------------------------------------------ */
/* Lookups */

const struct mi_value *mi_get(const struct mi_value *v, const char *path)
{
	while (v && *path) {
		const char *dot = strchrnul(path, '.');
		size_t n = dot - path;
		const struct mi_value *ch;
		char *end;

		if (v->kind == MI_CONST || !n)
			return NULL;
		if (path[0] >= '0' && path[0] <= '9') {
			unsigned long idx = strtoul(path, &end, 10);

			if (end != dot)
				return NULL;
			for (ch = v->child; ch && idx; ch = ch->next)
				idx--;
		} else {
			for (ch = v->child; ch; ch = ch->next)
				if (ch->name && !strncmp(ch->name, path, n) && !ch->name[n])
					break;
		}
		v = ch;
		path = *dot ? dot + 1 : dot;
	}
	return v;
}

const char *mi_get_str(const struct mi_value *v, const char *path)
{
	v = mi_get(v, path);
	return v && v->kind == MI_CONST ? v->str : NULL;
}

int mi_get_int(const struct mi_value *v, const char *path, long long *ret_val)
{
	const char *s = mi_get_str(v, path);
	long long val;
	char *end;

	if (!s)
		return -ENOENT;
	errno = 0;
	val = strtoll(s, &end, 0);
	if (errno || end == s || *end)
		return -EINVAL;
	*ret_val = val;
	return 0;
}

int mi_get_u64(const struct mi_value *v, const char *path, uint64_t *ret_val)
{
	const char *s = mi_get_str(v, path);
	unsigned long long val;
	char *end;

	if (!s)
		return -ENOENT;
	if (*s == '-')
		return -EINVAL;
	errno = 0;
	val = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		return -EINVAL;
	*ret_val = val;
	return 0;
}

size_t mi_quote(char *buf, size_t size, const char *s)
{
	size_t n = 0;

#define PUT(ch) do { if (n + 1 < size) buf[n] = (ch); n++; } while (0)
	PUT('"');
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\') {
			PUT('\\');
			PUT(ch);
		} else if (ch == '\n') {
			PUT('\\');
			PUT('n');
		} else if (ch == '\t') {
			PUT('\\');
			PUT('t');
		} else if (ch < 0x20 || ch == 0x7f) {
			PUT('\\');
			PUT('0' + (ch >> 6));
			PUT('0' + ((ch >> 3) & 7));
			PUT('0' + (ch & 7));
		} else {
			PUT(ch);
		}
	}
	PUT('"');
#undef PUT
	if (size)
		buf[n < size ? n : size - 1] = '\0';
	return n;
}
