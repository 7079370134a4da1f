// SPDX-License-Identifier: GPL-2.0
/*
 * A short smoke of each libFuzzer target (tests/fuzz/sdm_fuzz_*), for
 * `make check`: a fixed number of runs (at most 30 s) from a fixed seed,
 * starting from a small corpus of valid encodings written here. `make fuzz` runs them for
 * longer. Skips, saying why, when a target was not built (no clang).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sdm/message.h"

#ifndef SDM_FUZZ_DIR
#define SDM_FUZZ_DIR "build/tests/fuzz"
#endif
/*
 * 200000 inputs take a few seconds of CPU each; the time cap keeps a
 * heavily loaded machine from turning that into a harness timeout.
 */
#define SMOKE_RUNS	"-runs=200000"
#define SMOKE_TIME	"-max_total_time=30"
#define SMOKE_TIMEOUT	120	/* seconds, for the harness */

static int write_file(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[256];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

/* Valid inputs for every target: sets, display forms, messages, a stream. */
static int write_corpus(const char *dir)
{
	static const char *const forms[] = { "0-3,5,7-1023", "", "16777215", "1,3,5,7,9" };
	struct sdm_message *m = sdm_message_new(SDM_MSG_REPLY, "x=1", 3);
	struct sdm_idset *s = sdm_set_new();
	uint8_t buf[16384];
	char name[32];
	ssize_t n;
	int err = 0;

	if (!m || !s)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]) && !err; i++) {
		sdm_set_clear(s);
		sdm_set_parse(s, forms[i], NULL);
		n = sdm_set_serialize(s, buf, sizeof(buf));
		snprintf(name, sizeof(name), "set%zu", i);
		err = n < 0 ? (int)n : write_file(dir, name, buf, n);
		snprintf(name, sizeof(name), "text%zu", i);
		if (!err)
			err = write_file(dir, name, forms[i], strlen(forms[i]));
	}
	/* A dense chunk, encoded with a bitmap record. */
	sdm_set_clear(s);
	for (sdm_id i = 70000; i < 72000; i += 3)
		sdm_set_add_element(s, i);
	n = sdm_set_serialize(s, buf, sizeof(buf));
	if (!err)
		err = n < 0 ? (int)n : write_file(dir, "dense", buf, n);

	m->agg.id = 9;
	sdm_set_add_range(m->src, 4, 7);
	sdm_set_add_range(m->dest, 0, 1023);
	n = sdm_message_encode(m, buf, sizeof(buf));
	if (!err && n > 0) {
		err = write_file(dir, "msg", buf, n);
		/* Two frames back to back, then an auth challenge. */
		memcpy(buf + n, buf, n);
		sdm_frame_header_encode(buf + 2 * n, SDM_FRAME_AUTH_CHALLENGE, 32);
		memset(buf + 2 * n + SDM_FRAME_HDR_LEN, 0xa5, 32);
		if (!err)
			err = write_file(dir, "stream", buf, 2 * n + SDM_FRAME_HDR_LEN + 32);
	}
	sdm_message_free(m);
	sdm_set_free(s);
	return err;
}

/* Run one fuzzer over the corpus; 0 when it finished without a finding. */
static int run_fuzzer(const char *bin, const char *corpus, const char *log)
{
	char artifacts[256];
	pid_t pid;
	int status;

	snprintf(artifacts, sizeof(artifacts), "-artifact_prefix=%s/crash-", corpus);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(bin, bin, SMOKE_RUNS, SMOKE_TIME, "-seed=1", "-max_len=4096",
		      artifacts, corpus, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void print_tail(struct __test_metadata *_metadata, const char *log)
{
	char line[512];
	FILE *f = fopen(log, "r");
	long lines = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		lines++;
	rewind(f);
	for (long i = 0; fgets(line, sizeof(line), f); i++)
		if (i >= lines - 20)
			TH_LOG("%s", strtok(line, "\n") ? line : "");
	fclose(f);
}

FIXTURE(fuzz) {
	char dir[64];
};

FIXTURE_VARIANT(fuzz) {
	const char *target;
};

FIXTURE_VARIANT_ADD(fuzz, idset) { .target = "sdm_fuzz_idset" };
FIXTURE_VARIANT_ADD(fuzz, message) { .target = "sdm_fuzz_message" };
FIXTURE_VARIANT_ADD(fuzz, frame) { .target = "sdm_fuzz_frame" };

FIXTURE_SETUP(fuzz)
{
	strcpy(self->dir, "/tmp/sdm-fuzz-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(fuzz)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	EXPECT_EQ(0, system(cmd));
}

TEST_F_TIMEOUT(fuzz, smoke, SMOKE_TIMEOUT)
{
	char bin[256], corpus[128], log[128];
	int ret;

	snprintf(bin, sizeof(bin), "%s/%s", SDM_FUZZ_DIR, variant->target);
	if (access(bin, X_OK))
		SKIP(return, "%s not built (needs clang with libFuzzer: make deps)", bin);
	snprintf(corpus, sizeof(corpus), "%s/corpus", self->dir);
	snprintf(log, sizeof(log), "%s/log", self->dir);
	ASSERT_EQ(0, mkdir(corpus, 0700));
	ASSERT_EQ(0, write_corpus(corpus));
	ret = run_fuzzer(bin, corpus, log);
	if (ret)
		print_tail(_metadata, log);
	ASSERT_EQ(0, ret);
}

TEST_HARNESS_MAIN
