// SPDX-License-Identifier: GPL-2.0
/* Checkpoint metadata: SHA-256 vectors, round trip, truncation, corruption. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "meta.h"
#include "sealed-text.h"
#include "sha256.h"
#include "xxh128.h"

static void hash_hex(const char *s, size_t len, char out[CRS_SHA256_HEX])
{
	uint8_t d[CRS_SHA256_LEN];

	crs_sha256(s, len, d);
	crs_sha256_hex(d, out);
}

TEST(sha256_vectors)
{
	char hex[CRS_SHA256_HEX], *big;

	hash_hex("", 0, hex);
	EXPECT_STREQ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", hex);
	hash_hex("abc", 3, hex);
	EXPECT_STREQ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", hex);
	hash_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	EXPECT_STREQ("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", hex);
	/* One million 'a'. */
	big = malloc(1000000);
	ASSERT_NE(NULL, big);
	memset(big, 'a', 1000000);
	hash_hex(big, 1000000, hex);
	EXPECT_STREQ("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", hex);
	free(big);
}

/*
 * The buffer SHA-256 agrees with the file one (read in chunks) on every
 * length around the padding's block edges.
 */
TEST(buffer_hash_every_padding_length)
{
	char path[] = "/tmp/crdbg-sha-XXXXXX";
	uint8_t buf[200], a[CRS_SHA256_LEN], b[CRS_SHA256_LEN];
	uint64_t size;
	size_t len;
	int fd;

	for (len = 0; len < sizeof(buf); len++)
		buf[len] = (uint8_t)(len * 31 + 7);
	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	for (len = 0; len <= sizeof(buf); len++) {
		ASSERT_EQ(0, ftruncate(fd, 0));
		ASSERT_EQ((ssize_t)len, pwrite(fd, buf, len, 0));
		ASSERT_EQ(0, crs_sha256_file(AT_FDCWD, path, b, &size));
		crs_sha256(buf, len, a);
		EXPECT_EQ(0, memcmp(a, b, sizeof(a))) TH_LOG("length %zu", len);
	}
	close(fd);
	unlink(path);
}

/* Hashing a file (read in chunks) agrees with hashing its bytes at once. */
TEST(file_hash_matches)
{
	char path[] = "/tmp/crdbg-sha-XXXXXX", a[CRS_SHA256_HEX], b[CRS_SHA256_HEX];
	uint8_t d[CRS_SHA256_LEN];
	uint64_t size = 0;
	char *data;
	int fd, i;

	data = malloc(3000001);
	ASSERT_NE(NULL, data);
	for (i = 0; i < 3000001; i++)
		data[i] = (char)(i * 7 + (i >> 11));
	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(3000001, write(fd, data, 3000001));
	close(fd);
	ASSERT_EQ(0, crs_sha256_file(AT_FDCWD, path, d, &size));
	unlink(path);
	EXPECT_EQ(3000001, size);
	crs_sha256_hex(d, a);
	hash_hex(data, 3000001, b);
	EXPECT_STREQ(b, a);
	EXPECT_EQ(-ENOENT, crs_sha256_file(AT_FDCWD, path, d, &size));
	free(data);
}

static void sample(struct crs_meta *m)
{
	struct crs_proc p = { .pid = 100, .ppid = 1, .pgid = 100, .sid = 100, .mpir = true,
			      .trampoline = 0x7f0000001000, .hook_entry = 0x7f0000002000,
			      .rt_info = 0x7f0000003040 };
	struct crs_proc c = { .pid = 101, .ppid = 100, .pgid = 100, .sid = 100 };
	struct crs_thread t = { .pid = 100, .tid = 100, .pc = 0x401234, .sp = 0x7ffc0000 };
	struct crs_file f = { .name = "inventory.img", .size = 42 };

	crs_meta_init(m);
	strcpy(m->handle, "20261121T230000-100");
	m->time = 1763766000;
	strcpy(m->program, "/usr/bin/my prog");
	m->root = 100;
	m->mpir = true;
	m->debugger = true;
	m->debug_with_checkpoint = 1;
	strcpy(m->criu_version, "3.17.1");
	strcpy(m->backend, "kmod");
	crs_meta_add_proc(m, &p);
	crs_meta_add_proc(m, &c);
	crs_meta_add_thread(m, &t);
	t.tid = 102;
	t.pc = 0x401300;
	crs_meta_add_thread(m, &t);
	memset(f.sha, 0xab, sizeof(f.sha));
	crs_meta_add_file(m, &f);
}

TEST(round_trip)
{
	struct crs_meta m, back;
	char *buf, err[256];
	size_t len;

	sample(&m);
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	ASSERT_EQ(0, crs_meta_parse(buf, len, &back, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ(m.handle, back.handle);
	EXPECT_EQ(m.time, back.time);
	EXPECT_STREQ("/usr/bin/my prog", back.program);
	EXPECT_EQ(100, back.root);
	EXPECT_TRUE(back.mpir);
	EXPECT_TRUE(back.debugger);
	EXPECT_EQ(1, back.debug_with_checkpoint);
	EXPECT_EQ(0x7f0000001000ULL, back.procs[0].trampoline);
	EXPECT_EQ(0x7f0000002000ULL, back.procs[0].hook_entry);
	EXPECT_EQ(0x7f0000003040ULL, back.procs[0].rt_info);
	EXPECT_STREQ("3.17.1", back.criu_version);
	EXPECT_STREQ("kmod", back.backend);
	ASSERT_EQ(2, back.nr_procs);
	EXPECT_EQ(101, back.procs[1].pid);
	EXPECT_EQ(100, back.procs[1].ppid);
	ASSERT_EQ(2, back.nr_threads);
	EXPECT_EQ(102, back.threads[1].tid);
	EXPECT_EQ(0x401300ULL, back.threads[1].pc);
	ASSERT_EQ(1, back.nr_files);
	EXPECT_EQ(0, memcmp(m.files[0].sha, back.files[0].sha, CRS_SHA256_LEN));
	EXPECT_EQ(42, back.files[0].size);
	EXPECT_STREQ("", back.parent);
	EXPECT_FALSE(back.track_mem);
	EXPECT_EQ(0, back.nr_stdio);	/* metadata without stdio records loads */
	crs_meta_free(&back);
	crs_meta_free(&m);
	free(buf);
}

TEST(stdio_records_round_trip)
{
	struct crs_stdio s = { .pid = 101, .fd = 1, .link = "pipe:[4242]" };
	struct crs_stdio t = { .pid = 100, .fd = 2, .inside = true, .rdev = 0x8803,
			       .dev = 0x19, .link = "/tmp/a dir/my fifo" };
	struct crs_meta m, back;
	char *buf, err[256];
	size_t len;

	sample(&m);
	ASSERT_EQ(0, crs_meta_add_stdio(&m, &s));
	ASSERT_EQ(0, crs_meta_add_stdio(&m, &t));
	s.fd = 3;
	EXPECT_EQ(-EINVAL, crs_meta_add_stdio(&m, &s));
	s.fd = 0;
	strcpy(s.link, "a\nb");
	EXPECT_EQ(-EINVAL, crs_meta_add_stdio(&m, &s));
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	ASSERT_EQ(0, crs_meta_parse(buf, len, &back, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(2, back.nr_stdio);
	EXPECT_EQ(101, back.stdio[0].pid);
	EXPECT_EQ(1, back.stdio[0].fd);
	EXPECT_FALSE(back.stdio[0].inside);
	EXPECT_STREQ("pipe:[4242]", back.stdio[0].link);
	EXPECT_EQ(2, back.stdio[1].fd);
	EXPECT_TRUE(back.stdio[1].inside);
	EXPECT_EQ(0x8803ULL, back.stdio[1].rdev);
	EXPECT_EQ(0x19ULL, back.stdio[1].dev);
	EXPECT_STREQ("/tmp/a dir/my fifo", back.stdio[1].link);
	crs_meta_free(&back);
	crs_meta_free(&m);
	free(buf);
}

TEST(xxh128_vector)
{
	char path[] = "/tmp/crdbg-xxh-XXXXXX", hex[CRS_SHA256_HEX];
	uint8_t d[CRS_SHA256_LEN] = { 0 };
	uint64_t size = 1;
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	close(fd);
	/* XXH3-128 of no bytes, canonical (xxhsum -H2 /dev/null) */
	ASSERT_EQ(0, crs_xxh128_file(AT_FDCWD, path, d, &size));
	unlink(path);
	EXPECT_EQ(0, size);
	crs_sha256_hex(d, hex);
	EXPECT_EQ(0, strncmp(hex, "99aa06d3014798d86001c324468d497f", 32)) TH_LOG("%s", hex);
}

int crs_xxh128_file_scalar(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
			   uint64_t *ret_size);
int crs_xxh128_file_avx2(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
			 uint64_t *ret_size);

/*
 * The scalar and AVX2 builds (and the one crdbg picks) give xxhsum -H2's
 * digest on a file longer than a read chunk with a ragged tail.
 */
TEST(xxh128_units_agree_with_xxhsum)
{
	char path[] = "/tmp/crdbg-xxh-XXXXXX", hex[CRS_SHA256_HEX];
	const size_t len = 3 * 1048576 + 12345;
	uint8_t d[CRS_SHA256_LEN] = { 0 }, *buf = malloc(len);
	uint64_t size = 0;
	int fd = mkstemp(path);
	size_t i;

	ASSERT_GE(fd, 0);
	ASSERT_NE(NULL, buf);
	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(((uint64_t)i * 2654435761u) >> 13);
	ASSERT_EQ((ssize_t)len, write(fd, buf, len));
	close(fd);
	free(buf);
	ASSERT_EQ(0, crs_xxh128_file_scalar(AT_FDCWD, path, d, &size));
	EXPECT_EQ(len, size);
	crs_sha256_hex(d, hex);
	EXPECT_EQ(0, strncmp(hex, "52ccb30ca1f9b1a17587a29e6c579ead", 32)) TH_LOG("scalar %s", hex);
	ASSERT_EQ(0, crs_xxh128_file(AT_FDCWD, path, d, &size));
	crs_sha256_hex(d, hex);
	EXPECT_EQ(0, strncmp(hex, "52ccb30ca1f9b1a17587a29e6c579ead", 32)) TH_LOG("chosen %s", hex);
	if (__builtin_cpu_supports("avx2")) {
		memset(d, 0, sizeof(d));
		ASSERT_EQ(0, crs_xxh128_file_avx2(AT_FDCWD, path, d, &size));
		crs_sha256_hex(d, hex);
		EXPECT_EQ(0, strncmp(hex, "52ccb30ca1f9b1a17587a29e6c579ead", 32))
			TH_LOG("avx2 %s", hex);
	} else {
		TH_LOG("no AVX2 on this CPU: its unit is not run");
	}
	unlink(path);
}

TEST(xxh128_file_records_round_trip)
{
	struct crs_meta m, back;
	char *buf, err[256];
	size_t len;

	sample(&m);
	memset(m.files[0].sha, 0, sizeof(m.files[0].sha));
	memset(m.files[0].sha, 0xcd, 16);
	m.files[0].digest = CRS_DIGEST_XXH128;
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	EXPECT_NE(NULL, strstr(buf, "\nfile-xxh128 cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd 42 "));
	ASSERT_EQ(0, crs_meta_parse(buf, len, &back, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(1, back.nr_files);
	EXPECT_EQ(CRS_DIGEST_XXH128, back.files[0].digest);
	EXPECT_EQ(0, memcmp(m.files[0].sha, back.files[0].sha, CRS_SHA256_LEN));
	crs_meta_free(&back);
	free(buf);
	crs_meta_free(&m);
}

TEST(incremental_records_round_trip)
{
	struct crs_meta m, back;
	char *buf, err[256];
	size_t len;

	sample(&m);
	strcpy(m.parent, "20261124T000000-100");
	m.track_mem = true;
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	EXPECT_NE(NULL, strstr(buf, "\nparent 20261124T000000-100\ntrack-mem 1\n"));
	ASSERT_EQ(0, crs_meta_parse(buf, len, &back, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ(m.parent, back.parent);
	EXPECT_TRUE(back.track_mem);
	crs_meta_free(&back);
	free(buf);
	/* A parent that is no handle is never written. */
	strcpy(m.parent, "../x");
	EXPECT_EQ(-EINVAL, crs_meta_format(&m, &buf, &len));
	crs_meta_free(&m);
}

TEST(owner_record_round_trips_and_a_forbidden_criu_opt_is_refused_at_read)
{
	struct crs_meta m, back;
	char *buf, err[256];
	size_t len;

	sample(&m);
	m.has_owner = true;
	m.owner_uid = 1001;
	m.owner_gid = 1002;
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	EXPECT_NE(NULL, strstr(buf, "\nowner 1001 1002\n"));
	ASSERT_EQ(0, crs_meta_parse(buf, len, &back, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_TRUE(back.has_owner);
	EXPECT_EQ(1001, back.owner_uid);
	EXPECT_EQ(1002, back.owner_gid);
	crs_meta_free(&back);
	free(buf);
	/* without the record: root's, as metadata written before it */
	m.has_owner = false;
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	ASSERT_EQ(0, crs_meta_parse(buf, len, &back, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_FALSE(back.has_owner);
	crs_meta_free(&back);
	/* a criu-opt the allow-list refuses, in a file sealed as crdbg seals it */
	strcpy(m.criu_opts[0], "--action-script=/tmp/x");
	m.nr_criu_opts = 1;
	free(buf);
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	ASSERT_EQ(-EPERM, crs_meta_parse(buf, len, &back, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "action-script")) TH_LOG("%s", err);
	crs_meta_free(&back);
	crs_meta_free(&m);
	free(buf);
}

TEST(sigcont_records_round_trip)
{
	struct crs_meta m, back;
	char *buf, err[256];
	size_t len;

	sample(&m);
	m.procs[1].sigcont = true;
	m.threads[1].sigcont = true;
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	EXPECT_NE(NULL, strstr(buf, "\nsigcont 101\n"));
	EXPECT_NE(NULL, strstr(buf, "\nsigcont-thread 100 102\n"));
	ASSERT_EQ(0, crs_meta_parse(buf, len, &back, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_FALSE(back.procs[0].sigcont);
	EXPECT_TRUE(back.procs[1].sigcont);
	EXPECT_FALSE(back.threads[0].sigcont);
	EXPECT_TRUE(back.threads[1].sigcont);
	crs_meta_free(&back);
	free(buf);
	crs_meta_free(&m);
}

/* Metadata written before the sigcont records: loads, nothing pending. */
TEST(without_sigcont_records_loads)
{
	struct crs_meta m, back;
	char *buf, err[256];
	size_t len, i;

	sample(&m);
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	EXPECT_EQ(NULL, strstr(buf, "sigcont"));
	ASSERT_EQ(0, crs_meta_parse(buf, len, &back, err, sizeof(err))) TH_LOG("%s", err);
	for (i = 0; i < back.nr_procs; i++)
		EXPECT_FALSE(back.procs[i].sigcont);
	for (i = 0; i < back.nr_threads; i++)
		EXPECT_FALSE(back.threads[i].sigcont);
	crs_meta_free(&back);
	free(buf);
	crs_meta_free(&m);
}

TEST(truncated_everywhere_refused)
{
	struct crs_meta m, back;
	char *buf, err[256];
	size_t len, cut;

	sample(&m);
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	for (cut = 0; cut < len; cut++) {
		int r = crs_meta_parse(buf, cut, &back, err, sizeof(err));

		ASSERT_NE(0, r) TH_LOG("a metadata file cut at %zu of %zu bytes was accepted",
				       cut, len);
		EXPECT_TRUE(r == -ENODATA || r == -EBADMSG);
	}
	crs_meta_free(&m);
	free(buf);
}

TEST(any_flipped_byte_refused)
{
	struct crs_meta m, back;
	char *buf, err[256];
	size_t len, i;

	sample(&m);
	ASSERT_EQ(0, crs_meta_format(&m, &buf, &len));
	for (i = 0; i < len; i++) {
		char saved = buf[i];

		buf[i] = (char)(saved ^ 0x01);
		EXPECT_NE(0, crs_meta_parse(buf, len, &back, err, sizeof(err)))
			TH_LOG("flipping byte %zu was accepted", i);
		buf[i] = saved;
	}
	crs_meta_free(&m);
	free(buf);
}

TEST(malformed_refused)
{
	static const char *const bad[] = {
		"",
		"hello\n",
		"crdbg-checkpoint 2\n",
		"crdbg-checkpoint 1\nroot -5\n",
		"crdbg-checkpoint 1\nthread 1 2 0x 0x1\n",
		"crdbg-checkpoint 1\nfile abc 1 inventory.img\n",
		"crdbg-checkpoint 1\nfile 0000000000000000000000000000000000000000000000000000000000000000 1 ../x\n",
		"crdbg-checkpoint 1\nhandle ../etc\n",
		"crdbg-checkpoint 1\nbogus 1\n",
		"crdbg-checkpoint 1\nrtinfo 7 0x1000\n",	/* names no process */
		"crdbg-checkpoint 1\nprocess 7 1 7 7 1 0x0 0x0\nrtinfo 7 zz\n",
		"crdbg-checkpoint 1\nstdio 7 1 0 0x0 0x0 pipe:[1]\n",	/* names no process */
		"crdbg-checkpoint 1\nprocess 7 1 7 7 1 0x0 0x0\nstdio 7 3 0 0x0 0x0 x\n",
		"crdbg-checkpoint 1\nprocess 7 1 7 7 1 0x0 0x0\nstdio 7 1 2 0x0 0x0 x\n",
		"crdbg-checkpoint 1\nprocess 7 1 7 7 1 0x0 0x0\nstdio 7 1 0 0x0 0x0 \n",
		"crdbg-checkpoint 1\nprocess 7 1 7 7 1 0x0 0x0\nstdio 7 1 0 0x0\n",
	};
	struct crs_meta back;
	char err[256];
	size_t i;

	char text[512];
	size_t len;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* unsealed, then sealed: refused by the seal, then by the line */
		EXPECT_NE(0, crs_meta_parse(bad[i], strlen(bad[i]), &back, err, sizeof(err)))
			TH_LOG("accepted: %s", bad[i]);
		EXPECT_NE(0, strlen(err));
		len = seal_text(bad[i], text, sizeof(text));
		ASSERT_NE(0, len);
		EXPECT_NE(0, crs_meta_parse(text, len, &back, err, sizeof(err)))
			TH_LOG("accepted sealed: %s", bad[i]);
		EXPECT_NE(0, strlen(err));
	}
}

/* A sigcont record must name a process, a sigcont-thread one a thread before it. */
TEST(sigcont_records_checked)
{
	static const char *const bad[] = {
		"crdbg-checkpoint 1\nsigcont 7\n",	/* names no process */
		"crdbg-checkpoint 1\nprocess 7 1 7 7 1 0x0 0x0\nsigcont 8\n",
		"crdbg-checkpoint 1\nprocess 7 1 7 7 1 0x0 0x0\nsigcont 7 7\n",
		"crdbg-checkpoint 1\nprocess 7 1 7 7 1 0x0 0x0\nsigcont -7\n",
		/* names no thread: before its thread record, or another process's */
		"crdbg-checkpoint 1\nprocess 7 1 7 7 1 0x0 0x0\nsigcont-thread 7 9\nthread 7 9 0x1 0x1\n",
		"crdbg-checkpoint 1\nprocess 7 1 7 7 1 0x0 0x0\nthread 7 9 0x1 0x1\nsigcont-thread 8 9\n",
		"crdbg-checkpoint 1\nprocess 7 1 7 7 1 0x0 0x0\nthread 7 9 0x1 0x1\nsigcont-thread 7\n",
		"crdbg-checkpoint 1\nprocess 7 1 7 7 1 0x0 0x0\nthread 7 9 0x1 0x1\nsigcont-thread 7 x\n",
	};
	struct crs_meta back;
	char err[256];
	size_t i;

	char text[512];
	size_t len;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		len = seal_text(bad[i], text, sizeof(text));
		ASSERT_NE(0, len);
		EXPECT_EQ(-EBADMSG, crs_meta_parse(text, len, &back, err, sizeof(err)))
			TH_LOG("accepted: %s", bad[i]);
		EXPECT_NE(NULL, strstr(err, "sigcont")) TH_LOG("%s: %s", bad[i], err);
	}
}

/* A record parser never sees a line of text that is not sealed. */
TEST(lines_read_only_once_sealed)
{
	static const char forged[] = "crdbg-checkpoint 1\nbogus 1\nend "
		"0000000000000000000000000000000000000000000000000000000000000000\n";
	struct crs_meta back;
	char err[256];

	EXPECT_EQ(-EBADMSG, crs_meta_parse(forged, strlen(forged), &back, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "checksum mismatch")) TH_LOG("%s", err);
}

TEST(handle_names)
{
	EXPECT_TRUE(crs_handle_valid("20261121T230000-100"));
	EXPECT_TRUE(crs_handle_valid("a.b_c-1"));
	EXPECT_FALSE(crs_handle_valid(""));
	EXPECT_FALSE(crs_handle_valid(".tmp-x"));
	EXPECT_FALSE(crs_handle_valid("../x"));
	EXPECT_FALSE(crs_handle_valid("a/b"));
	EXPECT_FALSE(crs_handle_valid("a b"));
	EXPECT_FALSE(crs_handle_valid("0123456789012345678901234567890123456789012345678901234567890123"));
}

TEST_HARNESS_MAIN
