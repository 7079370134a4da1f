// SPDX-License-Identifier: GPL-2.0
/* A job checkpoint's manifest: build, serialize, parse (see <crdbg/job.h>). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <crdbg/job.h>
#include "error.h"
#include "sealed.h"
#include "sha256.h"

void crs_job_init(struct crs_job *j)
{
	memset(j, 0, sizeof(*j));
}

void crs_job_free(struct crs_job *j)
{
	if (!j)
		return;
	free(j->parts);
	j->parts = NULL;
	j->nr_parts = 0;
}

int crs_job_add_part(struct crs_job *j, const struct crs_job_part *p)
{
	struct crs_job_part *n;

	if (j->nr_parts >= CRS_JOB_MAX_PARTS)
		return -E2BIG;
	n = realloc(j->parts, (j->nr_parts + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	n[j->nr_parts++] = *p;
	j->parts = n;
	return 0;
}

char *crs_job_node_roots(const struct crs_job *j, size_t k)
{
	size_t len = 2 + 12 * j->nr_parts, off = 0;	/* ",%d" of any int each */
	char *buf = malloc(len);

	if (!buf)
		return NULL;
	for (size_t i = 0; i < j->nr_parts; i++)
		if (i != k && j->parts[i].pid > 0 && !strcmp(j->parts[i].node, j->parts[k].node))
			off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? "," : "",
						j->parts[i].pid);
	if (!off)
		snprintf(buf, len, "-");
	return buf;
}

bool crs_cid_valid(const char *cid)
{
	return strnlen(cid, CRS_CID_MAX) < CRS_CID_MAX && crs_handle_valid(cid);
}

int crs_cid_new(char *buf, size_t len)
{
	char host[CRS_NODE_MAX] = "host", *p;
	struct timespec ts;

	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = 0;
	for (p = host; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
			*p = '_';
	clock_gettime(CLOCK_REALTIME, &ts);
	/* Short enough for a handle: the host part is cut, never the rest. */
	if (snprintf(buf, len, "%.24s-%d-%" PRId64 "%09ld", host, (int)getpid(),
		     (int64_t)ts.tv_sec, ts.tv_nsec) >= (int)len)
		return -ENAMETOOLONG;
	return crs_cid_valid(buf) ? 0 : -EINVAL;
}

/* Ranks in the display form of an id set: digits, ',' and '-', or "-". */
/* "PID,PID...": pids without leading zeros, no empty one, short enough. */
static bool agents_valid(const char *a)
{
	size_t len = strlen(a);

	if (!len || len >= CRS_AGENTS_MAX || a[len - 1] == ',')
		return false;
	for (const char *p = a; *p; p++) {
		bool first = p == a || p[-1] == ',';

		if (*p == ',' ? first : *p < '0' || *p > '9' || (first && *p == '0'))
			return false;
	}
	return true;
}

static bool ranks_valid(const char *r)
{
	size_t i, len = strnlen(r, CRS_RANKS_MAX);

	if (len == 0 || len >= CRS_RANKS_MAX)
		return false;
	if (!strcmp(r, "-"))
		return true;
	for (i = 0; i < len; i++)
		if (!((r[i] >= '0' && r[i] <= '9') || r[i] == ',' || r[i] == '-'))
			return false;
	return true;
}

bool crs_tty_path_valid(const char *path)
{
	size_t len = strnlen(path, CRS_TTY_MAX);

	if (len >= CRS_TTY_MAX || strncmp(path, "/dev/", 5) || len == 5)
		return false;
	for (; *path; path++)
		if (!((*path >= 'a' && *path <= 'z') || (*path >= 'A' && *path <= 'Z') ||
		      (*path >= '0' && *path <= '9') || *path == '/' || *path == '_' ||
		      *path == '-' || *path == '.'))
			return false;
	return true;
}

int crs_job_tty_parse(const char *s, struct crs_job_part *p)
{
	char canon[CRS_TTY_MAX + 40], *end;
	unsigned long long rdev, dev;
	const char *path;

	p->tty[0] = 0;
	p->tty_rdev = p->tty_dev = 0;
	if (!strcmp(s, "-"))
		return 0;
	/* RDEV:DEV:PATH, the numbers in hex as CRIU's "tty[RDEV:DEV]" */
	if (strnlen(s, sizeof(canon)) >= sizeof(canon))
		return -EINVAL;
	errno = 0;
	rdev = strtoull(s, &end, 16);
	if (end == s || *end != ':')
		return -EINVAL;
	path = end + 1;
	dev = strtoull(path, &end, 16);
	if (end == path || *end != ':' || errno)
		return -EINVAL;
	path = end + 1;
	if (!crs_tty_path_valid(path))
		return -EINVAL;
	/* only the form we write: no sign, 0x, leading zero or blank */
	snprintf(canon, sizeof(canon), "%llx:%llx:%s", rdev, dev, path);
	if (strcmp(canon, s))
		return -EINVAL;
	memcpy(p->tty, path, strlen(path) + 1);
	p->tty_rdev = rdev;
	p->tty_dev = dev;
	return 0;
}

static bool text_valid(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

int crs_job_format(const struct crs_job *j, char **ret_buf, size_t *ret_len)
{
	char hex[CRS_SHA256_HEX];
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f;
	int r;

	if (!crs_handle_valid(j->handle) || !crs_cid_valid(j->cid) || !text_valid(j->what) ||
	    !j->nr_parts)
		return -EINVAL;
	for (i = 0; i < j->nr_parts; i++)
		if (!crs_cid_valid(j->parts[i].node) || !ranks_valid(j->parts[i].ranks) ||
		    !crs_handle_valid(j->parts[i].handle) ||
		    (j->parts[i].parent[0] && !crs_handle_valid(j->parts[i].parent)) ||
		    (j->parts[i].tty[0] && !crs_tty_path_valid(j->parts[i].tty)) ||
		    (j->parts[i].agents[0] && !agents_valid(j->parts[i].agents)))
			return -EINVAL;
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, "crdbg-job %d\n", CRS_JOB_FORMAT);
	fprintf(f, "handle %s\n", j->handle);
	fprintf(f, "cid %s\n", j->cid);
	fprintf(f, "time %" PRId64 "\n", j->time);
	fprintf(f, "job %s\n", j->what[0] ? j->what : "-");
	if (j->has_owner)
		fprintf(f, "owner %u %u\n", (unsigned int)j->owner_uid, (unsigned int)j->owner_gid);
	fprintf(f, "parts %zu\n", j->nr_parts);
	for (i = 0; i < j->nr_parts; i++) {
		const struct crs_job_part *p = &j->parts[i];

		crs_sha256_hex(p->meta_sha, hex);
		fprintf(f, "part %zu %s %s %s %s %s %" PRIu64 " %d ", i, p->node, p->ranks,
			p->handle, hex, p->parent[0] ? p->parent : "-", p->bytes, p->pid);
		if (p->tty[0])
			fprintf(f, "%" PRIx64 ":%" PRIx64 ":%s\n", p->tty_rdev, p->tty_dev, p->tty);
		else
			fprintf(f, "-\n");
	}
	/* after every part: a reader of an older format stops at the record */
	for (i = 0; i < j->nr_parts; i++)
		if (j->parts[i].agents[0])
			fprintf(f, "agents %zu %s\n", i, j->parts[i].agents);
	r = crs_sealed_close(f, &buf, &len);
	if (r)
		return r;
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

static bool parse_count(const char *s, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1]))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*ret = v;
	return true;
}

/* One record; line is modified. */
static int parse_record(struct crs_job *j, char *line, unsigned int lineno, uint64_t *parts,
			char *err, size_t errlen)
{
	char *f[10], *p = line;
	uint64_t v;
	int n = 0;

	if (!strncmp(line, "job ", 4)) {
		if (!line[4] || !text_valid(line + 4) || strlen(line + 4) >= sizeof(j->what))
			goto bad;
		snprintf(j->what, sizeof(j->what), "%s", line + 4);
		return 0;
	}
	while (n < 10 && p) {
		f[n++] = p;
		p = strchr(p, ' ');
		if (p)
			*p++ = 0;
	}
	if (p)
		goto bad;
	if (!strcmp(f[0], "handle") && n == 2 && crs_handle_valid(f[1])) {
		snprintf(j->handle, sizeof(j->handle), "%s", f[1]);
	} else if (!strcmp(f[0], "cid") && n == 2 && crs_cid_valid(f[1])) {
		snprintf(j->cid, sizeof(j->cid), "%s", f[1]);
	} else if (!strcmp(f[0], "time") && n == 2 && parse_count(f[1], INT64_MAX, &v)) {
		j->time = (int64_t)v;
	} else if (!strcmp(f[0], "owner") && n == 3 && !j->has_owner &&
		   parse_count(f[1], UINT32_MAX - 1, &v)) {
		j->owner_uid = (uid_t)v;
		if (!parse_count(f[2], UINT32_MAX - 1, &v))
			goto bad;
		j->owner_gid = (gid_t)v;
		j->has_owner = true;
	} else if (!strcmp(f[0], "parts") && n == 2 && parse_count(f[1], CRS_JOB_MAX_PARTS, &v) &&
		   v > 0 && *parts == 0) {
		*parts = v;
	} else if (!strcmp(f[0], "part") && (n == 6 || n == 9 || n == 10) &&
		   parse_count(f[1], CRS_JOB_MAX_PARTS, &v) && v == j->nr_parts &&
		   crs_cid_valid(f[2]) && ranks_valid(f[3]) && crs_handle_valid(f[4])) {
		struct crs_job_part pt = { 0 };

		if (!crs_digest_from_hex(f[5], pt.meta_sha, CRS_SHA256_LEN))
			goto bad;
		/* Since parent, size and root pid are recorded: "-" is a full image. */
		if (n >= 9) {
			if ((strcmp(f[6], "-") && !crs_handle_valid(f[6])) ||
			    !parse_count(f[7], UINT64_MAX, &pt.bytes) ||
			    !parse_count(f[8], INT32_MAX, &v))
				goto bad;
			pt.pid = (int)v;
			/* and since its terminal is: "-" for none */
			if (n == 10 && crs_job_tty_parse(f[9], &pt))
				goto bad;
			if (strcmp(f[6], "-"))
				snprintf(pt.parent, sizeof(pt.parent), "%s", f[6]);
		}
		snprintf(pt.node, sizeof(pt.node), "%s", f[2]);
		snprintf(pt.ranks, sizeof(pt.ranks), "%s", f[3]);
		snprintf(pt.handle, sizeof(pt.handle), "%s", f[4]);
		if (crs_job_add_part(j, &pt))
			return crs_fail(err, errlen, -EBADMSG, "job manifest: too many parts");
	} else if (!strcmp(f[0], "agents") && n == 3 && *parts == j->nr_parts &&
		   parse_count(f[1], CRS_JOB_MAX_PARTS, &v) && v < j->nr_parts &&
		   !j->parts[v].agents[0] && agents_valid(f[2])) {
		snprintf(j->parts[v].agents, sizeof(j->parts[v].agents), "%s", f[2]);
	} else {
		goto bad;
	}
	return 0;
bad:
	return crs_fail(err, errlen, -EBADMSG, "job manifest line %u: unknown or malformed record",
			lineno);
}

struct job_parse {
	struct crs_job *j;
	uint64_t parts;		/* as its "parts" record says */
};

static int job_line(void *arg, char *line, unsigned int lineno, char *err, size_t errlen)
{
	struct job_parse *st = arg;

	return parse_record(st->j, line, lineno, &st->parts, err, errlen);
}

int crs_job_parse(const char *buf, size_t len, struct crs_job *j, char *err, size_t errlen)
{
	static const struct crs_sealed_form form = {
		.what = "job manifest", .magic = "crdbg-job 1\n",
		.max_bytes = CRS_JOB_MAX_BYTES, .max_line = 1023,
	};
	struct job_parse st = { .j = j };
	int r;

	crs_job_init(j);
	r = crs_sealed_parse(&form, buf, len, job_line, &st, err, errlen);
	if (r)
		goto out;
	if (!j->handle[0] || !j->cid[0] || !st.parts || st.parts != j->nr_parts) {
		r = crs_fail(err, errlen, -EBADMSG,
			     "job manifest lacks its handle, CID or parts (%zu of %" PRIu64 ")",
			     j->nr_parts, st.parts);
		goto out;
	}
	return 0;
out:
	crs_job_free(j);
	return r;
}
