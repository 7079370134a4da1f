// SPDX-License-Identifier: GPL-2.0
/*
 * The core image's credentials (usr/crs/criu-creds.c): a core-TID.img
 * built here as CRIU writes it (two magics, a size, a core_entry whose
 * thread_core holds creds) is decoded; an owner's image passes the
 * check, one with uid 0, a foreign gid or group, or capabilities is
 * refused naming the image; malformed images are refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "criu-creds.h"

struct pbuf {
	uint8_t b[512];
	size_t n;
};

static void varint(struct pbuf *p, uint64_t v)
{
	do {
		p->b[p->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void field_u(struct pbuf *p, unsigned int num, uint64_t v)
{
	varint(p, (uint64_t)num << 3);
	varint(p, v);
}

static void field_msg(struct pbuf *p, unsigned int num, const struct pbuf *m)
{
	varint(p, (uint64_t)num << 3 | 2);
	varint(p, m->n);
	memcpy(p->b + p->n, m->b, m->n);
	p->n += m->n;
}

struct creds_spec {
	uint32_t ids[8];	/* uid gid euid egid suid sgid fsuid fsgid */
	uint32_t cap_eff;
	uint32_t group;		/* 0: none */
};

/* A whole core image with those creds; returns its length. */
static size_t core_image(const struct creds_spec *s, uint8_t *out)
{
	struct pbuf creds = { 0 }, tc = { 0 }, core = { 0 };
	uint32_t magic[2] = { 0x54564319u, 0x55053847u }, size;

	for (int i = 0; i < 8; i++)
		field_u(&creds, i + 1, s->ids[i]);
	for (int i = 0; i < 2; i++)
		field_u(&creds, 11, i ? s->cap_eff : 0);
	field_u(&creds, 13, 0);		/* secbits */
	if (s->group)
		field_u(&creds, 14, s->group);
	field_u(&tc, 3, 0);		/* sched_nice */
	field_msg(&tc, 10, &creds);
	field_u(&core, 1, 1);		/* mtype */
	field_msg(&core, 5, &tc);
	size = (uint32_t)core.n;
	memcpy(out, magic, 8);
	memcpy(out + 8, &size, 4);
	memcpy(out + 12, core.b, core.n);
	return 12 + core.n;
}

FIXTURE(images) {
	char dir[64];
	int dfd;
};

FIXTURE_SETUP(images)
{
	strcpy(self->dir, "/tmp/crdbg-creds.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	self->dfd = open(self->dir, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, self->dfd);
}

FIXTURE_TEARDOWN(images)
{
	char cmd[128];

	close(self->dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	EXPECT_EQ(0, system(cmd));
}

static void write_image(int dfd, const char *name, const struct creds_spec *s)
{
	uint8_t buf[600];
	size_t n = core_image(s, buf);
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, buf, n) != (ssize_t)n)
		abort();
	close(fd);
}

static const struct creds_spec alice = {
	.ids = { 1001, 1001, 1001, 1001, 1001, 1001, 1001, 1001 },
};

TEST(decodes_what_criu_writes)
{
	struct creds_spec s = alice;
	struct crs_criu_creds c;
	uint8_t buf[600];
	size_t n;

	s.group = 27;
	n = core_image(&s, buf);
	ASSERT_EQ(0, crs_criu_creds_parse(buf, n, &c));
	EXPECT_EQ(1001u, c.uid);
	EXPECT_EQ(1001u, c.fsgid);
	EXPECT_EQ(0xffu, c.have);
	EXPECT_FALSE(c.caps);
	EXPECT_EQ(1u, c.nr_groups);
	EXPECT_EQ(27u, c.groups[0]);
	/* every prefix is refused (the size says more than there is) */
	for (size_t len = 0; len < n; len++)
		EXPECT_EQ(-EBADMSG, crs_criu_creds_parse(buf, len, &c));
	buf[4] ^= 1;	/* not a core image */
	EXPECT_EQ(-EBADMSG, crs_criu_creds_parse(buf, n, &c));
}

TEST_F(images, the_owners_images_pass)
{
	char err[256] = "";
	gid_t groups[] = { 27 };
	struct creds_spec s = alice;

	write_image(self->dfd, "core-100.img", &alice);
	s.group = 27;
	write_image(self->dfd, "core-101.img", &s);
	EXPECT_EQ(0, crs_criu_creds_check(self->dfd, 1001, 1001, groups, 1, err, sizeof(err)));
}

TEST_F(images, uid_0_gid_group_and_caps_are_refused)
{
	static const struct { int field; uint32_t v; const char *why; } cases[] = {
		{ 0, 0, "uid that is not" }, { 2, 0, "uid that is not" }, { 4, 0, "uid that is not" },
		{ 6, 0, "uid that is not" }, { 1, 0, "gid that is not" }, { 7, 0, "gid that is not" },
		{ -1, 0, "capabilities" }, { -2, 0, "supplementary group" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct creds_spec s = alice;
		char err[256] = "";

		if (cases[i].field >= 0)
			s.ids[cases[i].field] = cases[i].v;
		else if (cases[i].field == -1)
			s.cap_eff = 1u << 21;	/* CAP_SYS_ADMIN */
		else
			s.group = 0;	/* root's group, not among alice's */
		if (cases[i].field == -2)
			s.group = 42;
		write_image(self->dfd, "core-100.img", &alice);
		write_image(self->dfd, "core-102.img", &s);
		EXPECT_EQ(-EPERM, crs_criu_creds_check(self->dfd, 1001, 1001, NULL, 0, err,
						       sizeof(err)));
		EXPECT_NE(NULL, strstr(err, "core-102.img"));
		EXPECT_NE(NULL, strstr(err, cases[i].why)) TH_LOG("case %zu: %s", i, err);
	}
}

TEST_F(images, a_separate_creds_image_or_none_at_all_is_refused)
{
	char err[256] = "";
	int fd;

	EXPECT_EQ(-EBADMSG, crs_criu_creds_check(self->dfd, 1001, 1001, NULL, 0, err, sizeof(err)));
	write_image(self->dfd, "core-100.img", &alice);
	fd = openat(self->dfd, "creds-100.img", O_WRONLY | O_CREAT, 0600);
	ASSERT_LE(0, fd);
	close(fd);
	EXPECT_EQ(-EPERM, crs_criu_creds_check(self->dfd, 1001, 1001, NULL, 0, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "creds-100.img"));
}

TEST_HARNESS_MAIN
