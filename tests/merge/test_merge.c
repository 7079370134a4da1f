// SPDX-License-Identifier: GPL-2.0
/*
 * Rank-set reply merging and merged stacks (crdbg/merge.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "crdbg/merge.h"
#include "sdm/idset.h"

static int add_ranks(struct merge *m, const char *set, const char *reply)
{
	struct sdm_idset *s = sdm_set_new();
	int err;

	if (!s)
		return -ENOMEM;
	err = sdm_set_parse(s, set, NULL);
	if (!err)
		err = merge_add_set(m, s, reply);
	sdm_set_free(s);
	return err;
}

TEST(merge_identical_is_one_line)
{
	struct merge *m = merge_new();
	char *s;

	ASSERT_NE(NULL, m);
	for (uint32_t r = 0; r < 8; r++)
		ASSERT_EQ(0, merge_add(m, 7 - r, "x = 4\n"));
	EXPECT_EQ(1, merge_groups(m));
	s = merge_format(m);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("[0-7]: x = 4\n", s);
	free(s);
	merge_free(m);
}

TEST(merge_two_values)
{
	static const uint32_t nines[] = { 7, 4, 6 };
	static const uint32_t fours[] = { 5, 3, 0, 2, 1 };
	struct merge *m = merge_new();
	char *s;

	ASSERT_NE(NULL, m);
	/* The "9" group is created first; the "4" group has the lowest rank. */
	for (size_t i = 0; i < 3; i++) {
		ASSERT_EQ(0, merge_add(m, nines[i], "x = 9"));
		ASSERT_EQ(0, merge_add(m, fours[i], "x = 4"));
	}
	ASSERT_EQ(0, merge_add(m, fours[3], "x = 4"));
	ASSERT_EQ(0, merge_add(m, fours[4], "x = 4"));
	s = merge_format(m);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("[0-3,5]: x = 4\n[4,6-7]: x = 9\n", s);
	free(s);

	EXPECT_EQ(-EEXIST, merge_add(m, 5, "x = 9"));
	EXPECT_EQ(-ERANGE, merge_add(m, SDM_SET_MAX_ID + 1u, "x"));
	EXPECT_EQ(2, merge_groups(m));
	merge_free(m);
}

/* k distinct replies give k lines whose rank sets partition the ranks. */
TEST(merge_partitions)
{
	const uint32_t n = 1000, k = 7;
	struct merge *m = merge_new();
	struct sdm_idset *seen = sdm_set_new(), *set = sdm_set_new();
	char reply[32], *s, *line, *save = NULL;
	uint32_t lines = 0, prev_low = 0;

	ASSERT_NE(NULL, m);
	ASSERT_NE(NULL, seen);
	ASSERT_NE(NULL, set);
	for (uint32_t r = 0; r < n; r++) {
		uint32_t rank = (r * 389) % n;	/* every rank once, shuffled */

		snprintf(reply, sizeof(reply), "v = %u", rank % k);
		ASSERT_EQ(0, merge_add(m, rank, reply));
	}
	EXPECT_EQ(k, merge_groups(m));
	s = merge_format(m);
	ASSERT_NE(NULL, s);
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *end;
		sdm_id id, low;
		unsigned int v;

		ASSERT_EQ('[', line[0]);
		sdm_set_clear(set);
		ASSERT_EQ(0, sdm_set_parse(set, line + 1, &end));
		ASSERT_EQ(1, sscanf(end, "]: v = %u", &v)) TH_LOG("line: %s", line);
		ASSERT_FALSE(sdm_set_intersects(seen, set));
		ASSERT_EQ(0, sdm_set_union(seen, set));
		EXPECT_EQ((n + k - 1 - v) / k, sdm_set_size(set));
		sdm_set_for_each(id, set)
			ASSERT_EQ(v, id % k);
		/* Ordered by lowest rank. */
		ASSERT_TRUE(sdm_set_find_next(set, 0, &low));
		if (lines)
			EXPECT_LT(prev_low, low);
		prev_low = low;
		lines++;
	}
	EXPECT_EQ(k, lines);
	EXPECT_EQ(n, sdm_set_size(seen));
	free(s);
	sdm_set_free(seen);
	sdm_set_free(set);
	merge_free(m);
}

TEST(merge_similar_texts_stay_apart)
{
	struct merge *m = merge_new();
	char *s;

	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, merge_add(m, 0, "x = 4"));
	ASSERT_EQ(0, merge_add(m, 1, "x = 4 "));
	ASSERT_EQ(0, merge_add(m, 2, "x = 4\n"));	/* trailing newline ignored */
	ASSERT_EQ(0, merge_add(m, 3, "x = 4\nmore"));
	ASSERT_EQ(0, merge_add(m, 4, ""));
	s = merge_format(m);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("[0,2]: x = 4\n[1]: x = 4 \n[3]: x = 4\n[3]: more\n[4]: \n", s);
	free(s);
	merge_free(m);
}

TEST(merge_sets_from_the_sdm)
{
	struct merge *m = merge_new();
	char *s;

	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, add_ranks(m, "0-99999", "same"));
	ASSERT_EQ(0, merge_add(m, 100000, "same"));
	ASSERT_EQ(0, add_ranks(m, "100001,100003", "other"));
	EXPECT_EQ(-EEXIST, add_ranks(m, "5-6", "same"));
	s = merge_format(m);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("[0-100000]: same\n[100001,100003]: other\n", s);
	free(s);
	merge_free(m);
}

#define ADD(t, rank, ...) ({						\
	const char *const __f[] = { __VA_ARGS__ };			\
	merge_stacks_add((t), (rank), __f, sizeof(__f) / sizeof(__f[0])); })

static const char deadlock_tree[] =
	"[0-7] main\n"
	"  [0-3] compute\n"
	"    [0-3] MPI_Recv\n"
	"  [4-7] MPI_Barrier\n";

TEST(stacks_deadlock_two_groups)
{
	struct merge_stacks *t = merge_stacks_new();
	char *s;

	ASSERT_NE(NULL, t);
	/* Higher ranks first: the order comes from the ranks, not the adds. */
	for (uint32_t r = 7; r >= 4; r--)
		ASSERT_EQ(0, ADD(t, r, "main", "MPI_Barrier"));
	for (uint32_t r = 0; r < 4; r++)
		ASSERT_EQ(0, ADD(t, r, "main", "compute", "MPI_Recv"));
	s = merge_stacks_format(t);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ(deadlock_tree, s);
	free(s);
	EXPECT_EQ(-EEXIST, ADD(t, 3, "main"));
	EXPECT_EQ(-ERANGE, ADD(t, SDM_SET_MAX_ID + 1u, "main"));
	merge_stacks_free(t);
}

TEST(stacks_interleaved_and_deep)
{
	struct merge_stacks *t = merge_stacks_new();
	char *s;

	ASSERT_NE(NULL, t);
	for (uint32_t r = 0; r < 6; r++) {
		if (r % 2) {
			ASSERT_EQ(0, ADD(t, r, "_start", "main", "solve", "MPI_Allreduce"));
		} else {
			ASSERT_EQ(0, ADD(t, r, "_start", "main", "solve", "MPI_Allreduce",
					 "poll"));
		}
	}
	ASSERT_EQ(0, ADD(t, 6, "clone", "worker"));	/* another root */
	ASSERT_EQ(0, merge_stacks_add(t, 7, NULL, 0));	/* no frames: no branch */
	s = merge_stacks_format(t);
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("[0-5] _start\n"
		     "  [0-5] main\n"
		     "    [0-5] solve\n"
		     "      [0-5] MPI_Allreduce\n"
		     "        [0,2,4] poll\n"
		     "[6] clone\n"
		     "  [6] worker\n", s);
	free(s);
	EXPECT_EQ(-EEXIST, ADD(t, 7, "main"));
	merge_stacks_free(t);
}

TEST(stacks_bounded_names)
{
	struct merge_stacks *t = merge_stacks_new();
	char *longname = malloc(MERGE_MAX_NAME * 3), *s;

	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, longname);
	memset(longname, 'f', MERGE_MAX_NAME * 3 - 1);
	longname[MERGE_MAX_NAME * 3 - 1] = '\0';
	ASSERT_EQ(0, ADD(t, 0, "main", longname));
	longname[MERGE_MAX_NAME * 2] = '\0';	/* same kept prefix: same node */
	ASSERT_EQ(0, ADD(t, 1, "main", longname));
	s = merge_stacks_format(t);
	ASSERT_NE(NULL, s);
	{
		int lines = 0;

		for (const char *p = s; *p; p++)
			lines += *p == '\n';
		EXPECT_EQ(2, lines);	/* main and one merged child */
	}
	EXPECT_NE(NULL, strstr(s, "  [0-1] ffff"));
	EXPECT_NE(NULL, strstr(s, "f...\n"));
	EXPECT_GT(MERGE_MAX_NAME + 32, strlen(strchr(s, '\n') + 1));
	free(s);
	free(longname);
	merge_stacks_free(t);
}

/* Run print into a memory stream; returns the text (caller frees). */
#define CAPTURE(call) ({						\
	char *__buf = NULL;						\
	size_t __size = 0;						\
	FILE *__f = open_memstream(&__buf, &__size);			\
	int __err = __f ? (call) : -ENOMEM;				\
	if (__f)							\
		fclose(__f);						\
	if (__err) {							\
		free(__buf);						\
		__buf = NULL;						\
	}								\
	__buf; })

TEST(json_output)
{
	struct merge *m = merge_new();
	struct merge_stacks *t = merge_stacks_new();
	char *s;

	ASSERT_NE(NULL, m);
	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, add_ranks(m, "4,6-7", "x = 9"));
	ASSERT_EQ(0, add_ranks(m, "0-3,5", "x = 4"));
	s = CAPTURE(merge_print_json(m, __f, "reply"));
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("{\"type\":\"reply\",\"ranks\":\"0-3,5\",\"text\":\"x = 4\"}\n"
		     "{\"type\":\"reply\",\"ranks\":\"4,6-7\",\"text\":\"x = 9\"}\n", s);
	free(s);

	for (uint32_t r = 0; r < 4; r++)
		ASSERT_EQ(0, ADD(t, r, "main", "compute", "MPI_Recv"));
	for (uint32_t r = 4; r < 8; r++)
		ASSERT_EQ(0, ADD(t, r, "main", "MPI_Barrier"));
	s = CAPTURE(merge_stacks_print_json(t, __f));
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("{\"type\":\"stacks\",\"tree\":[{\"name\":\"main\",\"ranks\":\"0-7\",\"children\":["
		     "{\"name\":\"compute\",\"ranks\":\"0-3\",\"children\":["
		     "{\"name\":\"MPI_Recv\",\"ranks\":\"0-3\",\"children\":[]}]},"
		     "{\"name\":\"MPI_Barrier\",\"ranks\":\"4-7\",\"children\":[]}]}]}\n", s);
	free(s);
	merge_free(m);
	merge_stacks_free(t);
}

TEST(json_strings_always_valid)
{
	/* Quote, backslash, newline, control, UTF-8 é and €, stray bytes. */
	static const char in[] = "a\"b\\c\nd\001\303\251\342\202\254\377\303(\300\257\355\240\200";
	char *s = CAPTURE(merge_json_string(__f, in, sizeof(in) - 1));

	ASSERT_NE(NULL, s);
	EXPECT_STREQ("\"a\\\"b\\\\c\\nd\\u0001\303\251\342\202\254\\u00ff\\u00c3("
		     "\\u00c0\\u00af\\u00ed\\u00a0\\u0080\"", s);
	free(s);
	/* Embedded NUL and truncated sequence at the end. */
	s = CAPTURE(merge_json_string(__f, "x\0y\342\202", 5));
	ASSERT_NE(NULL, s);
	EXPECT_STREQ("\"x\\u0000y\\u00e2\\u0082\"", s);
	free(s);
}

TEST_HARNESS_MAIN
