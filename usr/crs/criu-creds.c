// SPDX-License-Identifier: GPL-2.0
/* See criu-creds.h. The protobuf wire format: (tag << 3 | type) varints. */
#include <dirent.h>
#include <grp.h>
#include <pwd.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <crdbg/crs.h>
#include "criu-creds.h"
#include "error.h"

#define IMG_COMMON_MAGIC	0x54564319u
#define CORE_MAGIC		0x55053847u

#define CORE_THREAD_CORE	5	/* core_entry.thread_core */
#define THREAD_CORE_CREDS	10	/* thread_core_entry.creds */
#define CREDS_FSGID		8	/* uid = 1 ... fsgid = 8 */
#define CREDS_CAP_INH		9
#define CREDS_CAP_EFF		11
#define CREDS_GROUPS		14

struct pb {
	const uint8_t *p, *end;
};

static bool pb_varint(struct pb *b, uint64_t *ret)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64 && b->p < b->end; shift += 7) {
		uint8_t c = *b->p++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*ret = v;
			return true;
		}
	}
	return false;
}

/* The next field: its number, wire type, and for type 2 its bytes in *sub. */
static bool pb_field(struct pb *b, uint32_t *num, uint32_t *type, uint64_t *val, struct pb *sub)
{
	uint64_t key, n;

	if (!pb_varint(b, &key) || key >> 3 == 0 || key >> 3 > UINT32_MAX)
		return false;
	*num = (uint32_t)(key >> 3);
	*type = key & 7;
	switch (*type) {
	case 0:
		return pb_varint(b, val);
	case 1:
	case 5:
		n = *type == 1 ? 8 : 4;
		if ((uint64_t)(b->end - b->p) < n)
			return false;
		*val = 0;
		memcpy(val, b->p, n);	/* little-endian host: x86-64 only, like CRIU's images */
		b->p += n;
		return true;
	case 2:
		if (!pb_varint(b, &n) || n > (uint64_t)(b->end - b->p))
			return false;
		sub->p = b->p;
		sub->end = b->p + n;
		b->p += n;
		return true;
	default:
		return false;	/* groups (3, 4) are long gone from protobuf */
	}
}

/* The bytes of the last field num (type 2) in b, as protobuf merges messages. */
static bool pb_find_message(struct pb b, uint32_t want, struct pb *ret)
{
	uint32_t num, type;
	uint64_t val;
	struct pb sub;
	bool found = false;

	while (b.p < b.end) {
		if (!pb_field(&b, &num, &type, &val, &sub))
			return false;
		if (num == want && type == 2) {
			*ret = sub;
			found = true;
		}
	}
	return found;
}

static bool add_group(struct crs_criu_creds *c, uint64_t v)
{
	if (v > UINT32_MAX || c->nr_groups >= CRS_CREDS_MAX_GROUPS)
		return false;
	if (c->nr_groups < sizeof(c->groups) / sizeof(c->groups[0]))
		c->groups[c->nr_groups] = (uint32_t)v;
	else
		c->groups_truncated = true;
	c->nr_groups++;
	return true;
}

/* A repeated uint32: one varint (type 0) or a packed run (type 2). */
static bool repeated(struct crs_criu_creds *c, uint32_t num, uint32_t type, uint64_t val,
		     struct pb sub)
{
	bool cap = num >= CREDS_CAP_INH && num <= CREDS_CAP_EFF;

	if (type == 0)
		return cap ? (c->caps |= val != 0, true) : add_group(c, val);
	if (type != 2)
		return false;
	while (sub.p < sub.end) {
		if (!pb_varint(&sub, &val))
			return false;
		if (cap)
			c->caps |= val != 0;
		else if (!add_group(c, val))
			return false;
	}
	return true;
}

static bool parse_creds(struct pb b, struct crs_criu_creds *c)
{
	uint32_t *ids[] = { &c->uid, &c->gid, &c->euid, &c->egid,
			    &c->suid, &c->sgid, &c->fsuid, &c->fsgid };
	uint32_t num, type;
	uint64_t val;
	struct pb sub = { 0 };

	while (b.p < b.end) {
		if (!pb_field(&b, &num, &type, &val, &sub))
			return false;
		if (num >= 1 && num <= CREDS_FSGID) {
			if (type != 0 || val > UINT32_MAX)
				return false;
			*ids[num - 1] = (uint32_t)val;
			c->have |= 1u << (num - 1);
		} else if ((num >= CREDS_CAP_INH && num <= CREDS_CAP_EFF) || num == CREDS_GROUPS) {
			if (!repeated(c, num, type, val, sub))
				return false;
		}
	}
	return c->have == (1u << CREDS_FSGID) - 1;
}

int crs_criu_creds_parse(const void *buf, size_t len, struct crs_criu_creds *ret)
{
	const uint8_t *p = buf;
	uint32_t magic[2], size;
	struct pb entry, tc, creds;

	memset(ret, 0, sizeof(*ret));
	if (len < 12)
		return -EBADMSG;
	memcpy(magic, p, sizeof(magic));
	memcpy(&size, p + 8, sizeof(size));
	if (magic[0] != IMG_COMMON_MAGIC || magic[1] != CORE_MAGIC || size > len - 12)
		return -EBADMSG;
	entry.p = p + 12;
	entry.end = entry.p + size;
	if (!pb_find_message(entry, CORE_THREAD_CORE, &tc) ||
	    !pb_find_message(tc, THREAD_CORE_CREDS, &creds) || !parse_creds(creds, ret))
		return -EBADMSG;
	return 0;
}

static bool group_allowed(uint32_t g, gid_t gid, const gid_t *groups, size_t n)
{
	if (g == gid)
		return true;
	for (size_t i = 0; i < n; i++)
		if (groups[i] == g)
			return true;
	return false;
}

/* Why c is not uid's and gid's ("" when it is). */
static const char *creds_mismatch(const struct crs_criu_creds *c, uid_t uid, gid_t gid,
				  const gid_t *groups, size_t n)
{
	if (c->uid != uid || c->euid != uid || c->suid != uid || c->fsuid != uid)
		return "a uid that is not the owner's";
	if (c->gid != gid || c->egid != gid || c->sgid != gid || c->fsgid != gid)
		return "a gid that is not the owner's";
	if (c->caps)
		return "capabilities";
	if (c->groups_truncated)
		return "more supplementary groups than the owner has";
	for (size_t i = 0; i < c->nr_groups; i++)
		if (!group_allowed(c->groups[i], gid, groups, n))
			return "a supplementary group that is not the owner's";
	return "";
}

static int check_one(int dfd, const char *name, uid_t uid, gid_t gid, const gid_t *groups,
		     size_t n, char *err, size_t errlen)
{
	struct crs_criu_creds c;
	const char *why;
	struct stat st;
	char *buf;
	ssize_t got;
	int fd, r;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return crs_fail(err, errlen, -errno, "cannot read %s: %s", name, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > CRS_CORE_IMG_MAX) {
		close(fd);
		return crs_fail(err, errlen, -EBADMSG, "%s is not a core image", name);
	}
	buf = malloc((size_t)st.st_size + 1);
	got = buf ? read(fd, buf, (size_t)st.st_size) : -1;
	close(fd);
	r = got == st.st_size ? crs_criu_creds_parse(buf, (size_t)got, &c) : -EIO;
	free(buf);
	if (r)
		return crs_fail(err, errlen, r, "%s is not a core image with credentials", name);
	why = creds_mismatch(&c, uid, gid, groups, n);
	if (*why)
		return crs_fail(err, errlen, -EPERM,
				"%s would restore a thread with %s (uid %u): refused", name, why,
				c.uid);
	return 0;
}

int crs_criu_creds_check(int dfd, uid_t uid, gid_t gid, const gid_t *groups, size_t nr_groups,
			 char *err, size_t errlen)
{
	struct dirent *de;
	int r = 0, cores = 0, fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return crs_fail(err, errlen, -errno, "cannot read the images: %s", strerror(errno));
	}
	rewinddir(d);
	while (!r && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (!strncmp(de->d_name, "creds-", 6))
			r = crs_fail(err, errlen, -EPERM, "%s: credentials in a separate image are refused",
				     de->d_name);
		if (r || strncmp(de->d_name, "core-", 5) || len < 9 ||
		    strcmp(de->d_name + len - 4, ".img"))
			continue;
		r = check_one(dirfd(d), de->d_name, uid, gid, groups, nr_groups, err, errlen);
		cores++;
	}
	closedir(d);
	if (!r && !cores)
		r = crs_fail(err, errlen, -EBADMSG, "the checkpoint has no core image");
	return r;
}

int crs_criu_creds_owner_check(const char *dir, const struct crs_meta *m, char *err,
			       size_t errlen)
{
	gid_t groups[256];
	int n = (int)(sizeof(groups) / sizeof(groups[0])), dfd, r;
	struct passwd *pw;

	if (!m->has_owner || !m->owner_uid)
		return 0;	/* root's: restored as CRIU finds it */
	pw = getpwuid(m->owner_uid);
	if (!pw || getgrouplist(pw->pw_name, m->owner_gid, groups, &n) < 0)
		n = 0;	/* no such user now, or too many groups: the primary gid only */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return crs_fail(err, errlen, -errno, "cannot open %s: %s", dir, strerror(errno));
	r = crs_criu_creds_check(dfd, m->owner_uid, m->owner_gid, groups, (size_t)n, err, errlen);
	close(dfd);
	return r;
}
