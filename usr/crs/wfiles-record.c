// SPDX-License-Identifier: GPL-2.0
/* The "wfiles" record of a checkpoint: its lines written and parsed (wfiles.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "wfiles.h"

int crs_wfiles_format_one(FILE *out, const struct crs_wfile *w)
{
	if (w->path[0] != '/' || strchr(w->path, '\n'))
		return -EINVAL;
	fprintf(out, "wfile %u %" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %ld %o %u %u %d %s\n",
		w->index, w->dev, w->ino, w->size, w->mtime_s, w->mtime_ns, w->mode, w->uid,
		w->gid, w->copied, w->path);
	return 0;
}

void crs_wfiles_free(struct crs_wfiles *w)
{
	free(w->f);
	w->f = NULL;
	w->nr = 0;
}

/* One "wfile" line (without its newline) into w: 0 or -EBADMSG. */
static int parse_line(const char *line, struct crs_wfile *w)
{
	int copied, n = -1;
	size_t len;

	memset(w, 0, sizeof(*w));
	if (sscanf(line, "wfile %u %" SCNx64 " %" SCNu64 " %" SCNu64 " %" SCNd64 " %ld %o %u %u %d %n",
		   &w->index, &w->dev, &w->ino, &w->size, &w->mtime_s, &w->mtime_ns, &w->mode,
		   &w->uid, &w->gid, &copied, &n) != 10 || n < 0)
		return -EBADMSG;
	len = strlen(line + n);
	if (line[n] != '/' || len >= sizeof(w->path) || (copied != 0 && copied != 1) ||
	    w->index >= CRS_WFILES_MAX || w->mtime_ns < 0 || w->mtime_ns > 999999999 ||
	    (copied && w->size > CRS_WFILE_COPY_MAX))
		return -EBADMSG;
	memcpy(w->path, line + n, len + 1);
	w->copied = copied;
	return 0;
}

static bool index_taken(const struct crs_wfiles *w, unsigned int index)
{
	for (size_t i = 0; i < w->nr; i++)
		if (w->f[i].index == index)
			return true;
	return false;
}

int crs_wfiles_parse(const char *buf, size_t len, struct crs_wfiles *ret, char *err,
		     size_t errlen)
{
	static const char head[] = "crdbg-wfiles 1\n";
	struct crs_wfiles w = { 0 };
	char line[PATH_MAX + 256];
	size_t pos = sizeof(head) - 1, lineno = 1;

	if (len < pos || memcmp(buf, head, pos))
		return crs_fail(err, errlen, -EBADMSG, "not a crdbg-wfiles %d record",
				CRS_WFILES_FORMAT);
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - buf - pos) : len - pos;
		struct crs_wfile *f;

		lineno++;
		if (!nl || n >= sizeof(line) || memchr(buf + pos, '\0', n))
			goto bad;
		memcpy(line, buf + pos, n);
		line[n] = '\0';
		pos += n + 1;
		if (w.nr >= CRS_WFILES_MAX)
			goto bad;
		f = realloc(w.f, (w.nr + 1) * sizeof(*f));
		if (!f) {
			crs_wfiles_free(&w);
			return crs_fail(err, errlen, -ENOMEM, "out of memory");
		}
		w.f = f;
		if (parse_line(line, &w.f[w.nr]) || index_taken(&w, w.f[w.nr].index))
			goto bad;
		w.nr++;
	}
	*ret = w;
	return 0;
bad:
	crs_wfiles_free(&w);
	return crs_fail(err, errlen, -EBADMSG, "malformed wfiles record, line %zu", lineno);
}
