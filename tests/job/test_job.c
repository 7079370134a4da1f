// SPDX-License-Identifier: GPL-2.0
/*
 * Job checkpoints on the host: the manifest's format (round trip,
 * truncation, any flipped byte, malformed records, the parts' terminals),
 * the parts' "cid" metadata record, which terminal each part of a restart
 * comes back on, and manifests in a store (save, load, list, owning job,
 * remove).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include <crdbg/job.h>
#include "join.h"
#include "meta.h"
#include "sha256.h"
#include "store.h"

static void sample(struct crs_job *j, size_t parts)
{
	crs_job_init(j);
	snprintf(j->handle, sizeof(j->handle), "job-20261125T030000-42");
	snprintf(j->cid, sizeof(j->cid), "node0-42-1764039600000000001");
	snprintf(j->what, sizeof(j->what), "slurm 17 (srun ./app)");
	j->time = 1764039600;
	for (size_t i = 0; i < parts; i++) {
		struct crs_job_part p = { 0 };

		snprintf(p.node, sizeof(p.node), "node%zu", i);
		snprintf(p.ranks, sizeof(p.ranks), "%zu-%zu", 2 * i, 2 * i + 1);
		snprintf(p.handle, sizeof(p.handle), "20261125T030000-%zu", 100 + i);
		memset(p.meta_sha, (int)i + 1, sizeof(p.meta_sha));
		if (i) {	/* part 0 a full image, the others incremental */
			snprintf(p.parent, sizeof(p.parent), "20261125T020000-%zu", 100 + i);
			p.bytes = 4096 * i + 17;
		}
		p.pid = 4711 + (int)i;
		if (i) {	/* part 0 had no terminal */
			snprintf(p.tty, sizeof(p.tty), "/dev/pts/%zu", i);
			p.tty_rdev = 0x8800 + i;
			p.tty_dev = 0x1a;
		}
		if (crs_job_add_part(j, &p))
			abort();
	}
}

TEST(round_trip)
{
	struct crs_job j, back;
	char *buf, *buf2, err[256];
	size_t len, len2;

	sample(&j, 3);
	ASSERT_EQ(0, crs_job_format(&j, &buf, &len));
	ASSERT_EQ(0, crs_job_parse(buf, len, &back, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ(j.handle, back.handle);
	EXPECT_STREQ(j.cid, back.cid);
	EXPECT_STREQ(j.what, back.what);
	EXPECT_EQ(j.time, back.time);
	ASSERT_EQ(3, back.nr_parts);
	EXPECT_STREQ("node2", back.parts[2].node);
	EXPECT_STREQ("4-5", back.parts[2].ranks);
	EXPECT_STREQ("20261125T030000-102", back.parts[2].handle);
	EXPECT_EQ(0, memcmp(j.parts[1].meta_sha, back.parts[1].meta_sha, 32));
	EXPECT_STREQ("", back.parts[0].parent);
	EXPECT_EQ(0, back.parts[0].bytes);
	EXPECT_STREQ("20261125T020000-102", back.parts[2].parent);
	EXPECT_EQ(4096 * 2 + 17, back.parts[2].bytes);
	EXPECT_EQ(4713, back.parts[2].pid);
	EXPECT_STREQ("", back.parts[0].tty);
	EXPECT_STREQ("/dev/pts/2", back.parts[2].tty);
	EXPECT_EQ(0x8802, back.parts[2].tty_rdev);
	EXPECT_EQ(0x1a, back.parts[2].tty_dev);
	EXPECT_NE(NULL, strstr(buf, " 4711 -\npart 1 ")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, " 4713 8802:1a:/dev/pts/2\n")) TH_LOG("%s", buf);
	ASSERT_EQ(0, crs_job_format(&back, &buf2, &len2));
	EXPECT_EQ(len, len2);
	EXPECT_EQ(0, memcmp(buf, buf2, len));
	free(buf);
	free(buf2);
	crs_job_free(&j);
	crs_job_free(&back);
}

TEST(truncated_and_flipped_refused)
{
	struct crs_job j, back;
	char *buf, err[256];
	size_t len, i;

	sample(&j, 2);
	ASSERT_EQ(0, crs_job_format(&j, &buf, &len));
	for (i = 0; i < len; i++)
		ASSERT_NE(0, crs_job_parse(buf, i, &back, err, sizeof(err)))
			TH_LOG("a manifest cut at %zu of %zu bytes was accepted", i, len);
	for (i = 0; i < len; i++) {
		char saved = buf[i];

		buf[i] = (char)(saved ^ 0x01);
		EXPECT_NE(0, crs_job_parse(buf, len, &back, err, sizeof(err)))
			TH_LOG("flipping byte %zu was accepted", i);
		buf[i] = saved;
	}
	free(buf);
	crs_job_free(&j);
}

TEST(malformed_refused)
{
	static const char *const bad[] = {
		"",
		"crdbg-job 2\n",
		"crdbg-job 1\nhandle ../x\n",
		"crdbg-job 1\ncid a b\n",
		"crdbg-job 1\nparts 0\n",
		"crdbg-job 1\nparts 1\nparts 1\n",
		"crdbg-job 1\npart 1 n0 0 h 00\n",	/* out of order */
		"crdbg-job 1\npart 0 n/0 0 h 0000000000000000000000000000000000000000000000000000000000000000\n",
		"crdbg-job 1\npart 0 n0 0;1 h 0000000000000000000000000000000000000000000000000000000000000000\n",
		"crdbg-job 1\njob a\x01\n",
		/* parent, size and pid come together, numbers where numbers go */
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 -\n",
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 - x\n",
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 ../p 1\n",
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 - 1\n",
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 - 1 -2\n",
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 - 1 2 3\n",
		"crdbg-job 1\nbogus 1\n",
		/* the terminal: RDEV:DEV:PATH in hex, a path under /dev, or "-" */
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 - 1 2 x\n",
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 - 1 2 8800:1a:/tmp/x\n",
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 - 1 2 8800::/dev/pts/1\n",
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 - 1 2 -1:1a:/dev/pts/1\n",
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 - 1 2 8800:1a:/dev/pts/1;x\n",
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 - 1 2 8800:1a:/dev/\n",
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 - 1 2 zz:1a:/dev/pts/1\n",
		"crdbg-job 1\npart 0 n0 0 h 0000000000000000000000000000000000000000000000000000000000000000 - 1 2 8800:1a:/dev/pts/1 -\n",
	};
	struct crs_job back;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_NE(0, crs_job_parse(bad[i], strlen(bad[i]), &back, err, sizeof(err)))
			TH_LOG("accepted: %s", bad[i]);
		EXPECT_NE(0, strlen(err));
	}
}

/* A manifest written before parts recorded their parent and size. */
TEST(manifest_without_parent_and_size)
{
	static const char body[] = "crdbg-job 1\nhandle job-1\ncid c-1\ntime 1\njob -\nparts 1\n"
		"part 0 node0 0 h0 0101010101010101010101010101010101010101010101010101010101010101\n";
	struct crs_job back;
	char *out, hex[65], err[256];
	uint8_t d[32];

	crs_sha256(body, strlen(body), d);
	crs_sha256_hex(d, hex);
	ASSERT_LT(0, asprintf(&out, "%send %s\n", body, hex));
	ASSERT_EQ(0, crs_job_parse(out, strlen(out), &back, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(1, back.nr_parts);
	EXPECT_STREQ("h0", back.parts[0].handle);
	EXPECT_STREQ("", back.parts[0].parent);
	EXPECT_EQ(0, back.parts[0].bytes);
	crs_job_free(&back);
	free(out);
}

/* A manifest written before parts recorded their terminal: none. */
TEST(manifest_without_terminal)
{
	static const char body[] = "crdbg-job 1\nhandle job-1\ncid c-1\ntime 1\njob -\nparts 1\n"
		"part 0 node0 0 h0 0101010101010101010101010101010101010101010101010101010101010101 - 5 42\n";
	struct crs_job back;
	char *out, hex[65], err[256];
	uint8_t d[32];

	crs_sha256(body, strlen(body), d);
	crs_sha256_hex(d, hex);
	ASSERT_LT(0, asprintf(&out, "%send %s\n", body, hex));
	ASSERT_EQ(0, crs_job_parse(out, strlen(out), &back, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(1, back.nr_parts);
	EXPECT_EQ(42, back.parts[0].pid);
	EXPECT_STREQ("", back.parts[0].tty);
	EXPECT_EQ(0, back.parts[0].tty_rdev);
	crs_job_free(&back);
	free(out);
}

/* body sealed as crs_job_format() seals, parsed: 0 or its refusal. */
static int parse_sealed(const char *body, struct crs_job *back, char *err, size_t errlen)
{
	char *out, hex[65];
	uint8_t d[32];
	int r;

	crs_sha256(body, strlen(body), d);
	crs_sha256_hex(d, hex);
	if (asprintf(&out, "%send %s\n", body, hex) < 0)
		return -ENOMEM;
	r = crs_job_parse(out, strlen(out), back, err, errlen);
	free(out);
	return r;
}

/* A launcher's agents: a record after every part, pids only, once a part. */
TEST(agents_record)
{
#define HEAD "crdbg-job 1\nhandle job-1\ncid c-1\ntime 1\njob -\nparts 2\n"
#define PART(k) "part " #k " node" #k " - h" #k \
	" 0101010101010101010101010101010101010101010101010101010101010101 - 5 4" #k " -\n"
	static const char *const bad[] = {
		HEAD PART(0) "agents 0 812\n" PART(1),	/* before the last part */
		HEAD PART(0) PART(1) "agents 2 812\n",
		HEAD PART(0) PART(1) "agents 1 0\n",
		HEAD PART(0) PART(1) "agents 1 0812\n",
		HEAD PART(0) PART(1) "agents 1 812,\n",
		HEAD PART(0) PART(1) "agents 1 ,812\n",
		HEAD PART(0) PART(1) "agents 1 812,,813\n",
		HEAD PART(0) PART(1) "agents 1 -\n",
		HEAD PART(0) PART(1) "agents 1 81x\n",
		HEAD PART(0) PART(1) "agents 1\n",
		HEAD PART(0) PART(1) "agents 1 812\nagents 1 813\n",
	};
	struct crs_job back, j;
	char err[256], *buf;
	size_t len;

	ASSERT_EQ(0, parse_sealed(HEAD PART(0) PART(1) "agents 1 812,813\n", &back, err,
				  sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ("", back.parts[0].agents);
	EXPECT_STREQ("812,813", back.parts[1].agents);
	ASSERT_EQ(0, crs_job_format(&back, &buf, &len));
	EXPECT_NE(NULL, strstr(buf, " 41 -\nagents 1 812,813\nend ")) TH_LOG("%s", buf);
	free(buf);
	/* what a manifest could not read back is refused when written */
	snprintf(back.parts[0].agents, sizeof(back.parts[0].agents), "812,,813");
	EXPECT_EQ(-EINVAL, crs_job_format(&back, &buf, &len));
	crs_job_free(&back);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_NE(0, parse_sealed(bad[i], &j, err, sizeof(err))) TH_LOG("accepted: %s", bad[i]);
		EXPECT_NE(NULL, strstr(err, "manifest")) TH_LOG("%s", err);
	}
#undef PART
#undef HEAD
}

/* A terminal's path that a manifest cannot hold is refused when written. */
TEST(terminal_path_checked_when_written)
{
	struct crs_job j;
	char *buf;
	size_t len;

	sample(&j, 2);
	snprintf(j.parts[1].tty, sizeof(j.parts[1].tty), "/dev/pts/1 x");
	EXPECT_EQ(-EINVAL, crs_job_format(&j, &buf, &len));
	snprintf(j.parts[1].tty, sizeof(j.parts[1].tty), "pts/1");
	EXPECT_EQ(-EINVAL, crs_job_format(&j, &buf, &len));
	crs_job_free(&j);
}

/*
 * Which terminal each part comes back on: the first terminal and parts
 * without one are the restart's own (0); every other (node, rdev, dev)
 * is a join of its own, numbered in part order.
 */
TEST(terminal_groups)
{
	static const struct { const char *node, *tty; uint64_t rdev; unsigned int want; } p[] = {
		{ "n0", "", 0, 0 },			/* no terminal */
		{ "n0", "/dev/pts/0", 0x8800, 0 },	/* the first terminal: ours */
		{ "n0", "/dev/pts/2", 0x8802, 1 },
		{ "n1", "/dev/pts/0", 0x8800, 2 },	/* same numbers, another node */
		{ "n0", "/dev/pts/0", 0x8800, 0 },
		{ "n0", "/dev/pts/2", 0x8802, 1 },
		{ "n1", "", 0, 0 },
	};
	unsigned int group[7];
	struct crs_job j;

	crs_job_init(&j);
	for (size_t i = 0; i < 7; i++) {
		struct crs_job_part pt = { .tty_rdev = p[i].rdev, .tty_dev = 0x1a };

		snprintf(pt.node, sizeof(pt.node), "%s", p[i].node);
		snprintf(pt.tty, sizeof(pt.tty), "%s", p[i].tty);
		ASSERT_EQ(0, crs_job_add_part(&j, &pt));
	}
	EXPECT_EQ(2, job_terminal_groups(&j, group));
	for (size_t k = 0; k < 7; k++) {
		size_t i = k;

		EXPECT_EQ(p[i].want, group[i]) TH_LOG("part %zu", i);
	}
	/* no terminal at all, or only one: nobody to wait for */
	j.nr_parts = 2;
	EXPECT_EQ(0, job_terminal_groups(&j, group));
	crs_job_free(&j);
}

/*
 * A restarting part learns its node's other roots (--node-roots): every
 * one of them, however many tasks the node ran (a 1 KiB buffer cut the
 * list after about 120), none of another node's, not its own, "-" alone.
 */
TEST(node_roots_of_a_full_node)
{
	char *want = calloc(300, 12), *got;
	size_t off = 0;
	struct crs_job j;

	ASSERT_NE(NULL, want);
	crs_job_init(&j);
	for (int i = 0; i < 306; i++) {
		struct crs_job_part pt = { .pid = i == 7 ? 0 : 4000000 + i };

		snprintf(pt.node, sizeof(pt.node), "%s", i < 300 ? "n0" : i < 305 ? "n1" : "n2");
		ASSERT_EQ(0, crs_job_add_part(&j, &pt));
		if (i > 0 && i < 300 && i != 7)
			off += (size_t)sprintf(want + off, "%s%d", off ? "," : "", 4000000 + i);
	}
	got = crs_job_node_roots(&j, 0);
	ASSERT_NE(NULL, got);
	EXPECT_STREQ(want, got);
	EXPECT_EQ(298u * 8 - 1, strlen(got));
	free(got);
	got = crs_job_node_roots(&j, 301);
	ASSERT_NE(NULL, got);
	EXPECT_STREQ("4000300,4000302,4000303,4000304", got);
	free(got);
	got = crs_job_node_roots(&j, 305);
	ASSERT_NE(NULL, got);
	EXPECT_STREQ("-", got);
	free(got);
	free(want);
	crs_job_free(&j);
}

TEST(part_count_must_match)
{
	struct crs_job j, back;
	char *buf, err[256];
	size_t len;

	sample(&j, 2);
	ASSERT_EQ(0, crs_job_format(&j, &buf, &len));
	/* A sealed manifest that says 3 parts but lists 2. */
	{
		char *body = strndup(buf, strstr(buf, "end ") - buf), *p, *out;
		uint8_t d[32];
		char hex[65];

		ASSERT_NE(NULL, (p = strstr(body, "parts 2")));
		p[6] = '3';
		crs_sha256(body, strlen(body), d);
		crs_sha256_hex(d, hex);
		ASSERT_LT(0, asprintf(&out, "%send %s\n", body, hex));
		EXPECT_EQ(-EBADMSG, crs_job_parse(out, strlen(out), &back, err, sizeof(err)));
		EXPECT_NE(NULL, strstr(err, "parts")) TH_LOG("%s", err);
		free(out);
		free(body);
	}
	free(buf);
	crs_job_free(&j);
}

TEST(cid_metadata_record)
{
	struct crs_meta m, back;
	struct crs_proc p = { .pid = 7, .ppid = 1, .pgid = 7, .sid = 7 };
	char *buf, err[256];
	size_t len;

	crs_meta_init(&m);
	snprintf(m.handle, sizeof(m.handle), "20261125T030000-7");
	m.root = 7;
	ASSERT_EQ(0, crs_meta_add_proc(&m, &p));
	snprintf(m.cid, sizeof(m.cid), "node0-1-2");
	m.cid_parts = 3;
	m.cid_index = 2;
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	EXPECT_NE(NULL, strstr(buf, "\ncid node0-1-2 3 2\n"));
	ASSERT_EQ(0, crs_meta_parse(buf, len, &back, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ("node0-1-2", back.cid);
	EXPECT_EQ(3, back.cid_parts);
	EXPECT_EQ(2, back.cid_index);
	crs_meta_free(&back);
	free(buf);
	m.cid_index = 3;	/* index beyond the count */
	EXPECT_EQ(-EINVAL, crs_meta_format(&m, &buf, &len));
	crs_meta_free(&m);
}

static void collect(const char *handle, const struct crs_job *j, const char *problem, void *arg)
{
	char *seen = arg;

	strcat(seen, handle);
	strcat(seen, j ? " ok;" : " bad;");
	(void)problem;
}

TEST(store)
{
	char root[] = "/tmp/crdbg-test-job.XXXXXX", seen[1024] = "", owner[64], path[256];
	struct crs_job j, back;
	char err[256];
	FILE *f;

	ASSERT_NE(NULL, mkdtemp(root));
	sample(&j, 2);
	ASSERT_EQ(0, crs_job_save(root, &j, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0, strncmp(j.handle, "job-", 4));
	EXPECT_TRUE(crs_job_exists(root, j.handle));
	EXPECT_FALSE(crs_job_exists(root, "job-none"));
	ASSERT_EQ(0, crs_job_load(root, j.handle, &back, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ(j.cid, back.cid);
	crs_job_free(&back);
	/* A second save never replaces the first. */
	{
		char first[64];

		snprintf(first, sizeof(first), "%s", j.handle);
		ASSERT_EQ(0, crs_job_save(root, &j, err, sizeof(err)));
		EXPECT_STRNE(first, j.handle);
	}
	ASSERT_EQ(0, crs_job_owning(root, "20261125T030000-101", owner, sizeof(owner)));
	EXPECT_EQ(0, strncmp(owner, "job-", 4));
	ASSERT_EQ(0, crs_job_owning(root, "20261125T030000-999", owner, sizeof(owner)));
	EXPECT_STREQ("", owner);
	/* A damaged manifest is listed as such, never taken for a checkpoint. */
	snprintf(path, sizeof(path), "%s/.jobs/job-broken", root);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("crdbg-job 1\nhandle job-broken\n", f);
	fclose(f);
	ASSERT_EQ(0, crs_job_list(root, collect, seen));
	EXPECT_NE(NULL, strstr(seen, "job-broken bad;")) TH_LOG("%s", seen);
	EXPECT_NE(NULL, strstr(seen, " ok;"));
	EXPECT_NE(0, crs_job_load(root, "job-broken", &back, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "job-broken is corrupt")) TH_LOG("%s", err);
	EXPECT_EQ(0, crs_job_remove_manifest(root, j.handle));
	EXPECT_FALSE(crs_job_exists(root, j.handle));
	crs_job_free(&j);
	crs_rmtree(AT_FDCWD, root);
}

/* The door's requests (join.h) round-trip; anything else is refused. */
TEST(door_requests)
{
	static const char *const bad[] = { "join", "join ", "join 01", "join -1", "join 1 ",
					   "join 4097", "part 1", "part 1 x", "part 1  2",
					   "parts 1", "hello" };
	struct job_door_req r;
	char buf[64];

	ASSERT_EQ(0, job_door_req_parse("join 2", &r));
	EXPECT_EQ(JOB_DOOR_JOIN, r.kind);
	EXPECT_EQ(2, r.group);
	ASSERT_EQ(0, job_door_req_parse("part 1 4096", &r));
	EXPECT_EQ(JOB_DOOR_PART, r.kind);
	EXPECT_EQ(1, r.group);
	EXPECT_EQ(4096, r.part);
	ASSERT_EQ(11, job_door_req_format(&r, buf, sizeof(buf)));
	EXPECT_STREQ("part 1 4096", buf);
	EXPECT_EQ(-ENOSPC, job_door_req_format(&r, buf, 4));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EBADMSG, job_door_req_parse(bad[i], &r)) TH_LOG("%s", bad[i]);
	}
}

TEST_HARNESS_MAIN
