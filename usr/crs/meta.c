// SPDX-License-Identifier: GPL-2.0
/* Metadata of one checkpoint: build, serialize, parse (see meta.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "meta.h"
#include "sealed.h"
#include "sha256.h"

_Static_assert(CRS_FILE_DIGEST_LEN == CRS_SHA256_LEN, "file digests are SHA-256");

void crs_meta_init(struct crs_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->debug_with_checkpoint = -1;
}

void crs_meta_free(struct crs_meta *m)
{
	if (!m)
		return;
	free(m->procs);
	free(m->threads);
	free(m->files);
	free(m->stdio);
	free(m->chunks);
	m->chunks = NULL;
	m->nr_chunks = 0;
	m->procs = NULL;
	m->threads = NULL;
	m->files = NULL;
	m->stdio = NULL;
	m->nr_procs = m->nr_threads = m->nr_files = m->nr_stdio = 0;
}

static int grow(void **arr, size_t *nr, size_t max, size_t elem, const void *item)
{
	void *n;

	if (*nr >= max)
		return -E2BIG;
	n = realloc(*arr, (*nr + 1) * elem);
	if (!n)
		return -ENOMEM;
	memcpy((char *)n + *nr * elem, item, elem);
	*arr = n;
	(*nr)++;
	return 0;
}

int crs_meta_add_proc(struct crs_meta *m, const struct crs_proc *p)
{
	return grow((void **)&m->procs, &m->nr_procs, CRS_MAX_PROCS, sizeof(*p), p);
}

int crs_meta_add_thread(struct crs_meta *m, const struct crs_thread *t)
{
	return grow((void **)&m->threads, &m->nr_threads, CRS_MAX_THREADS, sizeof(*t), t);
}

int crs_meta_add_file(struct crs_meta *m, const struct crs_file *f)
{
	return grow((void **)&m->files, &m->nr_files, CRS_MAX_FILES, sizeof(*f), f);
}

static bool name_valid(const char *n);

int crs_meta_add_chunk(struct crs_meta *m, const struct crs_chunk *c)
{
	if (!name_valid(c->name) || !c->len || c->len > INT64_MAX || c->off > INT64_MAX - c->len)
		return -EINVAL;
	return grow((void **)&m->chunks, &m->nr_chunks, CRS_MAX_CHUNKS, sizeof(*c), c);
}

/* The link is the rest of its line: printable up to the end, not empty. */
static bool stdio_link_valid(const char *l)
{
	size_t len = strnlen(l, CRS_STDIO_LINK_MAX);

	return len && len < CRS_STDIO_LINK_MAX && !strchr(l, '\n');
}

int crs_meta_add_stdio(struct crs_meta *m, const struct crs_stdio *s)
{
	if (s->fd < 0 || s->fd > 2 || !stdio_link_valid(s->link))
		return -EINVAL;
	return grow((void **)&m->stdio, &m->nr_stdio, 3 * CRS_MAX_PROCS, sizeof(*s), s);
}

/* No spaces or control characters: one field of one metadata line. */
static bool criu_opt_printable(const char *o)
{
	size_t i, len = strnlen(o, CRS_CRIU_OPT_MAX);

	if (len < 3 || len >= CRS_CRIU_OPT_MAX || strncmp(o, "--", 2))
		return false;
	for (i = 0; i < len; i++)
		if ((unsigned char)o[i] <= ' ' || (unsigned char)o[i] >= 0x7f)
			return false;
	return true;
}

int crs_meta_add_criu_opt(struct crs_meta *m, const char *opt)
{
	size_t i;

	if (!criu_opt_printable(opt))
		return -EINVAL;
	for (i = 0; i < m->nr_criu_opts; i++)
		if (!strcmp(m->criu_opts[i], opt))
			return 0;
	if (m->nr_criu_opts >= CRS_MAX_CRIU_OPTS)
		return -E2BIG;
	strcpy(m->criu_opts[m->nr_criu_opts++], opt);
	return 0;
}

static struct crs_proc *find_proc(struct crs_meta *m, pid_t pid)
{
	size_t i;

	for (i = 0; i < m->nr_procs; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}

static struct crs_thread *find_thread(struct crs_meta *m, pid_t pid, pid_t tid)
{
	size_t i;

	for (i = 0; i < m->nr_threads; i++)
		if (m->threads[i].pid == pid && m->threads[i].tid == tid)
			return &m->threads[i];
	return NULL;
}

bool crs_handle_valid(const char *h)
{
	size_t i, len = strnlen(h, CRS_HANDLE_MAX);

	if (len == 0 || len >= CRS_HANDLE_MAX || h[0] == '.')
		return false;
	for (i = 0; i < len; i++) {
		char c = h[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* A computation id: the same characters as a handle. */
static bool cid_valid(const char *c)
{
	return strnlen(c, CRS_CID_MAX) < CRS_CID_MAX && crs_handle_valid(c);
}

static bool name_valid(const char *n)
{
	size_t i, len = strnlen(n, CRS_NAME_MAX);

	if (len == 0 || len >= CRS_NAME_MAX || n[0] == '.')
		return false;
	for (i = 0; i < len; i++)
		if (n[i] == '/' || n[i] == ' ' || n[i] == '\n' || (unsigned char)n[i] < 0x20)
			return false;
	return true;
}

int crs_meta_format(const struct crs_meta *m, char **ret_buf, size_t *ret_len)
{
	uint8_t d[CRS_SHA256_LEN];
	char hex[CRS_SHA256_HEX];
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f;
	int r;

	if (!crs_handle_valid(m->handle) || strchr(m->program, '\n') ||
	    (m->cid[0] && (!cid_valid(m->cid) || m->cid_index >= m->cid_parts)))
		return -EINVAL;
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, "crdbg-checkpoint %d\n", CRS_META_FORMAT);
	fprintf(f, "handle %s\n", m->handle);
	fprintf(f, "time %" PRId64 "\n", m->time);
	fprintf(f, "program %s\n", m->program);
	fprintf(f, "root %d\n", (int)m->root);
	fprintf(f, "mpir %d\n", m->mpir);
	fprintf(f, "debugger %d\n", m->debugger);
	fprintf(f, "debug-with-checkpoint %d\n", m->debug_with_checkpoint);
	fprintf(f, "shell-job %d\n", m->shell_job);
	fprintf(f, "criu-version %s\n", m->criu_version[0] ? m->criu_version : "unknown");
	fprintf(f, "backend %s\n", m->backend[0] ? m->backend : "none");
	if (m->parent[0] && !crs_handle_valid(m->parent)) {
		fclose(f);
		free(buf);
		return -EINVAL;
	}
	if (m->parent[0])
		fprintf(f, "parent %s\n", m->parent);
	if (m->track_mem)
		fprintf(f, "track-mem 1\n");
	if (m->cid[0])
		fprintf(f, "cid %s %u %u\n", m->cid, m->cid_parts, m->cid_index);
	if (m->has_owner)
		fprintf(f, "owner %u %u\n", (unsigned int)m->owner_uid, (unsigned int)m->owner_gid);
	for (i = 0; i < m->nr_procs; i++) {
		const struct crs_proc *p = &m->procs[i];

		fprintf(f, "process %d %d %d %d %d 0x%" PRIx64 " 0x%" PRIx64 "\n", (int)p->pid,
			(int)p->ppid, (int)p->pgid, (int)p->sid, p->mpir, p->trampoline,
			p->hook_entry);
	}
	for (i = 0; i < m->nr_procs; i++) {
		if (m->procs[i].stopped)
			fprintf(f, "stopped %d\n", (int)m->procs[i].pid);
		if (m->procs[i].zombie)
			fprintf(f, "zombie %d\n", (int)m->procs[i].pid);
		if (m->procs[i].rt_info)
			fprintf(f, "rtinfo %d 0x%" PRIx64 "\n", (int)m->procs[i].pid,
				m->procs[i].rt_info);
		if (m->procs[i].sigcont)
			fprintf(f, "sigcont %d\n", (int)m->procs[i].pid);
		if (m->procs[i].held)
			fprintf(f, "held %d\n", (int)m->procs[i].pid);
	}
	for (i = 0; i < m->nr_stdio; i++) {
		const struct crs_stdio *s = &m->stdio[i];

		if (!stdio_link_valid(s->link)) {
			fclose(f);
			free(buf);
			return -EINVAL;
		}
		fprintf(f, "stdio %d %d %d 0x%" PRIx64 " 0x%" PRIx64 " %s\n", (int)s->pid, s->fd,
			s->inside, s->rdev, s->dev, s->link);
	}
	for (i = 0; i < m->nr_criu_opts; i++)
		fprintf(f, "criu-opt %s\n", m->criu_opts[i]);
	for (i = 0; i < m->nr_threads; i++) {
		const struct crs_thread *t = &m->threads[i];

		fprintf(f, "thread %d %d 0x%" PRIx64 " 0x%" PRIx64 "\n", (int)t->pid, (int)t->tid,
			t->pc, t->sp);
	}
	for (i = 0; i < m->nr_threads; i++)
		if (m->threads[i].sigcont)
			fprintf(f, "sigcont-thread %d %d\n", (int)m->threads[i].pid,
				(int)m->threads[i].tid);
	for (i = 0; i < m->nr_files; i++) {
		if (!name_valid(m->files[i].name)) {
			fclose(f);
			free(buf);
			return -EINVAL;
		}
		crs_sha256_hex(m->files[i].sha, hex);
		if (m->files[i].digest == CRS_DIGEST_XXH128)
			fprintf(f, "file-xxh128 %.32s %" PRIu64 " %s\n", hex, m->files[i].size,
				m->files[i].name);
		else
			fprintf(f, "file %s %" PRIu64 " %s\n", hex, m->files[i].size,
				m->files[i].name);
	}
	for (i = 0; i < m->nr_chunks; i++) {
		const struct crs_chunk *c = &m->chunks[i];

		if (!name_valid(c->name) || !c->len) {
			fclose(f);
			free(buf);
			return -EINVAL;
		}
		memset(d, 0, sizeof(d));
		memcpy(d, c->digest, sizeof(c->digest));
		crs_sha256_hex(d, hex);		/* 16 bytes: its first 32 digits */
		fprintf(f, "chunk-xxh128 %.32s %" PRIu64 " %" PRIu64 " %s\n", hex, c->off, c->len,
			c->name);
	}
	r = crs_sealed_close(f, &buf, &len);
	if (r)
		return r;
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

static bool parse_i64(const char *s, int64_t min, int64_t max, int64_t *ret)
{
	char *end;
	long long v;

	if (!*s)
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*ret = v;
	return true;
}

static bool parse_hex(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (strncmp(s, "0x", 2) || !s[2])
		return false;
	errno = 0;
	v = strtoull(s + 2, &end, 16);
	if (errno || *end)
		return false;
	*ret = v;
	return true;
}

static bool parse_pid(const char *s, pid_t *ret)
{
	int64_t v;

	if (!parse_i64(s, 0, 0x3fffffff, &v))
		return false;
	*ret = (pid_t)v;
	return true;
}

/* Split line (modified in place) into at most max space-separated fields. */
static int split(char *line, char **f, int max)
{
	int n = 0;

	while (*line && n < max) {
		f[n++] = line;
		line = strchr(line, ' ');
		if (!line)
			break;
		*line++ = '\0';
	}
	return n;
}

/*
 * "stdio <pid> <fd> <inside> <rdev> <dev> <link>": the link is the rest
 * of the line (a path may hold spaces); the pid one of the checkpoint's.
 */
static int parse_stdio(struct crs_meta *m, char *rest, unsigned int lineno, char *err,
		       size_t errlen)
{
	struct crs_stdio s = { 0 };
	char *f[6];
	int64_t fd, in;
	int i;

	for (i = 0; i < 5; i++) {
		f[i] = rest;
		rest = strchr(rest, ' ');
		if (!rest)
			break;
		*rest++ = '\0';
	}
	if (i < 5 || !parse_pid(f[0], &s.pid) || !find_proc(m, s.pid) ||
	    !parse_i64(f[1], 0, 2, &fd) || !parse_i64(f[2], 0, 1, &in) ||
	    !parse_hex(f[3], &s.rdev) || !parse_hex(f[4], &s.dev) ||
	    strlen(rest) >= sizeof(s.link))
		return crs_fail(err, errlen, -EBADMSG, "metadata line %u: bad stdio record",
			    lineno);
	s.fd = (int)fd;
	s.inside = in;
	strcpy(s.link, rest);
	if (crs_meta_add_stdio(m, &s))
		return crs_fail(err, errlen, -EBADMSG, "metadata line %u: bad stdio record",
			    lineno);
	return 0;
}

static int parse_line(struct crs_meta *m, char *line, unsigned int lineno, char *err,
		      size_t errlen)
{
	char *f[8], *rest;
	int64_t v, w;
	pid_t pid;
	int n, r;

	rest = strchr(line, ' ');
	if (!rest)
		return crs_fail(err, errlen, -EBADMSG, "metadata line %u has no value", lineno);
	*rest++ = '\0';
	if (!strcmp(line, "program")) {
		snprintf(m->program, sizeof(m->program), "%s", rest);
		return 0;
	}
	if (!strcmp(line, "stdio"))
		return parse_stdio(m, rest, lineno, err, errlen);
	n = split(rest, f, 8);
	if (!strcmp(line, "handle") && n == 1 && crs_handle_valid(f[0])) {
		snprintf(m->handle, sizeof(m->handle), "%s", f[0]);
	} else if (!strcmp(line, "time") && n == 1 && parse_i64(f[0], 0, INT64_MAX, &v)) {
		m->time = v;
	} else if (!strcmp(line, "root") && n == 1 && parse_pid(f[0], &m->root)) {
	} else if (!strcmp(line, "mpir") && n == 1 && parse_i64(f[0], 0, 1, &v)) {
		m->mpir = v;
	} else if (!strcmp(line, "debugger") && n == 1 && parse_i64(f[0], 0, 1, &v)) {
		m->debugger = v;
	} else if (!strcmp(line, "debug-with-checkpoint") && n == 1 &&
		   parse_i64(f[0], -1, 1, &v)) {
		m->debug_with_checkpoint = (int)v;
	} else if (!strcmp(line, "shell-job") && n == 1 && parse_i64(f[0], 0, 1, &v)) {
		m->shell_job = v;
	} else if (!strcmp(line, "criu-version") && n == 1 &&
		   strlen(f[0]) < sizeof(m->criu_version)) {
		strcpy(m->criu_version, f[0]);
	} else if (!strcmp(line, "backend") && n == 1 && strlen(f[0]) < sizeof(m->backend)) {
		strcpy(m->backend, f[0]);
	} else if (!strcmp(line, "parent") && n == 1 && crs_handle_valid(f[0])) {
		snprintf(m->parent, sizeof(m->parent), "%s", f[0]);
	} else if (!strcmp(line, "track-mem") && n == 1 && parse_i64(f[0], 0, 1, &v)) {
		m->track_mem = v;
	} else if (!strcmp(line, "cid") && n == 3 && cid_valid(f[0]) &&
		   parse_i64(f[1], 1, CRS_MAX_PROCS, &v) && parse_i64(f[2], 0, v - 1, &w)) {
		snprintf(m->cid, sizeof(m->cid), "%s", f[0]);
		m->cid_parts = (uint32_t)v;
		m->cid_index = (uint32_t)w;
	} else if (!strcmp(line, "owner") && n == 2 && !m->has_owner &&
		   parse_i64(f[0], 0, UINT32_MAX - 1, &v) && parse_i64(f[1], 0, UINT32_MAX - 1, &w)) {
		m->has_owner = true;
		m->owner_uid = (uid_t)v;
		m->owner_gid = (gid_t)w;
	} else if (!strcmp(line, "process") && n == 7) {
		struct crs_proc p = { 0 };

		if (!parse_pid(f[0], &p.pid) || !parse_pid(f[1], &p.ppid) ||
		    !parse_pid(f[2], &p.pgid) || !parse_pid(f[3], &p.sid) ||
		    !parse_i64(f[4], 0, 1, &v) || !parse_hex(f[5], &p.trampoline) ||
		    !parse_hex(f[6], &p.hook_entry))
			return crs_fail(err, errlen, -EBADMSG, "metadata line %u: bad process record",
				    lineno);
		p.mpir = v;
		if (crs_meta_add_proc(m, &p))
			return crs_fail(err, errlen, -EBADMSG, "metadata: too many processes");
	} else if ((!strcmp(line, "stopped") || !strcmp(line, "zombie")) && n == 1) {
		struct crs_proc *p = parse_pid(f[0], &pid) ? find_proc(m, pid) : NULL;

		if (!p)
			return crs_fail(err, errlen, -EBADMSG,
				    "metadata line %u: %s names no process of the checkpoint", lineno,
				    line);
		if (line[0] == 's')
			p->stopped = true;
		else
			p->zombie = true;
	} else if (!strcmp(line, "rtinfo") && n == 2) {
		struct crs_proc *p = parse_pid(f[0], &pid) ? find_proc(m, pid) : NULL;

		if (!p || !parse_hex(f[1], &p->rt_info))
			return crs_fail(err, errlen, -EBADMSG,
				    "metadata line %u: bad rtinfo record", lineno);
	} else if ((!strcmp(line, "sigcont") || !strcmp(line, "held")) && n == 1) {
		struct crs_proc *p = parse_pid(f[0], &pid) ? find_proc(m, pid) : NULL;

		if (!p)
			return crs_fail(err, errlen, -EBADMSG,
				    "metadata line %u: %s names no process of the checkpoint",
				    lineno, line);
		if (line[0] == 's')
			p->sigcont = true;
		else
			p->held = true;
	} else if (!strcmp(line, "sigcont-thread") && n == 2) {
		struct crs_thread *t = NULL;
		pid_t tid;

		if (parse_pid(f[0], &pid) && parse_pid(f[1], &tid))
			t = find_thread(m, pid, tid);
		if (!t)
			return crs_fail(err, errlen, -EBADMSG,
				    "metadata line %u: sigcont-thread names no thread of the checkpoint",
				    lineno);
		t->sigcont = true;
	} else if (!strcmp(line, "criu-opt") && n == 1) {
		char why[256];

		/* the allow-list again: a sealed file is only as good as whoever sealed it */
		if (crs_criu_opt_check(f[0], why, sizeof(why)))
			return crs_fail(err, errlen, -EPERM, "metadata line %u: %s", lineno, why);
		if (crs_meta_add_criu_opt(m, f[0]))
			return crs_fail(err, errlen, -EBADMSG, "metadata line %u: bad criu-opt", lineno);
	} else if (!strcmp(line, "thread") && n == 4) {
		struct crs_thread t = { 0 };

		if (!parse_pid(f[0], &t.pid) || !parse_pid(f[1], &t.tid) ||
		    !parse_hex(f[2], &t.pc) || !parse_hex(f[3], &t.sp))
			return crs_fail(err, errlen, -EBADMSG, "metadata line %u: bad thread record",
				    lineno);
		if (crs_meta_add_thread(m, &t))
			return crs_fail(err, errlen, -EBADMSG, "metadata: too many threads");
	} else if ((!strcmp(line, "file") || !strcmp(line, "file-xxh128")) && n == 3) {
		struct crs_file fl = { 0 };

		fl.digest = line[4] ? CRS_DIGEST_XXH128 : CRS_DIGEST_SHA256;
		if (!crs_digest_from_hex(f[0], fl.sha, fl.digest == CRS_DIGEST_XXH128 ? 16 : CRS_SHA256_LEN) || !parse_i64(f[1], 0, INT64_MAX, &v) ||
		    strlen(f[2]) >= sizeof(fl.name) || !name_valid(f[2]))
			return crs_fail(err, errlen, -EBADMSG, "metadata line %u: bad file record",
				    lineno);
		fl.size = (uint64_t)v;
		strcpy(fl.name, f[2]);
		if (crs_meta_add_file(m, &fl))
			return crs_fail(err, errlen, -EBADMSG, "metadata: too many files");
	} else if (!strcmp(line, "chunk-xxh128") && n == 4) {
		struct crs_chunk c = { 0 };
		int64_t len;

		if (!crs_digest_from_hex(f[0], c.digest, sizeof(c.digest)) ||
		    !parse_i64(f[1], 0, INT64_MAX, &v) || !parse_i64(f[2], 1, INT64_MAX, &len) ||
		    strlen(f[3]) >= sizeof(c.name))
			return crs_fail(err, errlen, -EBADMSG, "metadata line %u: bad chunk record",
				    lineno);
		c.off = (uint64_t)v;
		c.len = (uint64_t)len;
		strcpy(c.name, f[3]);
		r = crs_meta_add_chunk(m, &c);
		if (r)
			return crs_fail(err, errlen, -EBADMSG, r == -E2BIG ?
				    "metadata: too many chunk records" :
				    "metadata line %u: bad chunk record", lineno);
	} else {
		return crs_fail(err, errlen, -EBADMSG, "metadata line %u: unknown or malformed \"%s\"",
			    lineno, line);
	}
	return 0;
}

static int meta_line(void *arg, char *line, unsigned int lineno, char *err, size_t errlen)
{
	return parse_line(arg, line, lineno, err, errlen);
}

int crs_meta_parse(const char *buf, size_t len, struct crs_meta *m, char *err, size_t errlen)
{
	static const struct crs_sealed_form form = {
		.what = "metadata", .magic = "crdbg-checkpoint 1\n",
		.max_bytes = CRS_META_MAX_BYTES, .max_line = 4199,
	};
	int ret;

	crs_meta_init(m);
	ret = crs_sealed_parse(&form, buf, len, meta_line, m, err, errlen);
	if (ret)
		goto out;
	if (!m->handle[0] || !m->root || !m->nr_procs) {
		ret = crs_fail(err, errlen, -EBADMSG, "metadata lacks handle, root or processes");
		goto out;
	}
	return 0;
out:
	crs_meta_free(m);
	return ret;
}
