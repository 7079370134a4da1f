// SPDX-License-Identifier: GPL-2.0
/*
 * GDB/MI parser: every record kind, c-string escapes, nested tuples and
 * lists, lookups, partial lines fed byte by byte, malformed input.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "crdbg/gdbmi.h"

static struct mi_record *parse(const char *line)
{
	struct mi_record *rec = NULL;

	if (mi_parse_line(line, strlen(line), &rec))
		return NULL;
	return rec;
}

static int parse_err(const char *line)
{
	struct mi_record *rec = NULL;
	int err = mi_parse_line(line, strlen(line), &rec);

	if (!err)
		mi_record_free(rec);
	return err;
}

/* A real *stopped from gdb 13 (breakpoint hit). */
static const char stopped_line[] =
	"*stopped,reason=\"breakpoint-hit\",disp=\"keep\",bkptno=\"1\",frame={addr=\"0x00005555555551a3\","
	"func=\"main\",args=[],file=\"p.c\",fullname=\"/tmp/mi/p.c\",line=\"6\",arch=\"i386:x86-64\"},"
	"thread-id=\"1\",stopped-threads=\"all\",core=\"0\"";

static const char stack_line[] =
	"12^done,stack=[frame={level=\"0\",addr=\"0x1\",func=\"sq\",file=\"p.c\",line=\"3\"},"
	"frame={level=\"1\",addr=\"0x2\",func=\"main\",file=\"p.c\",line=\"6\"}]";

TEST(result_records)
{
	static const struct {
		const char *line;
		enum mi_result_class rclass;
	} cases[] = {
		{ "^done", MI_RC_DONE },
		{ "^running", MI_RC_RUNNING },
		{ "^connected", MI_RC_CONNECTED },
		{ "^error,msg=\"No symbol \\\"y\\\" in current context.\"", MI_RC_ERROR },
		{ "^exit", MI_RC_EXIT },
	};
	struct mi_record *rec;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rec = parse(cases[i].line);
		ASSERT_NE(NULL, rec) TH_LOG("%s", cases[i].line);
		EXPECT_EQ(MI_REC_RESULT, rec->kind);
		EXPECT_EQ(cases[i].rclass, rec->rclass);
		EXPECT_FALSE(rec->has_token);
		mi_record_free(rec);
	}
	rec = parse("^error,msg=\"No symbol \\\"y\\\" in current context.\",code=\"x\"");
	ASSERT_NE(NULL, rec);
	EXPECT_STREQ("No symbol \"y\" in current context.", mi_get_str(rec->results, "msg"));
	EXPECT_STREQ("x", mi_get_str(rec->results, "code"));
	EXPECT_EQ(2, rec->results->count);
	mi_record_free(rec);

	EXPECT_EQ(-EBADMSG, parse_err("^finished"));
	EXPECT_EQ(-EBADMSG, parse_err("^"));
}

TEST(tokens)
{
	struct mi_record *rec = parse("18446744073709551615^done,value=\"4\"");

	ASSERT_NE(NULL, rec);
	EXPECT_TRUE(rec->has_token);
	EXPECT_EQ(UINT64_MAX, rec->token);
	EXPECT_STREQ("4", mi_get_str(rec->results, "value"));
	mi_record_free(rec);

	rec = parse("7*running,thread-id=\"all\"");
	ASSERT_NE(NULL, rec);
	EXPECT_EQ(7, rec->token);
	EXPECT_EQ(MI_REC_EXEC, rec->kind);
	mi_record_free(rec);

	EXPECT_EQ(-EBADMSG, parse_err("18446744073709551616^done"));	/* overflow */
	EXPECT_EQ(-EBADMSG, parse_err("12~\"text\""));	/* streams take no token */
	EXPECT_EQ(-EBADMSG, parse_err("12"));
}

TEST(async_records)
{
	struct mi_record *rec = parse(stopped_line);
	long long v;
	uint64_t addr;

	ASSERT_NE(NULL, rec);
	EXPECT_EQ(MI_REC_EXEC, rec->kind);
	EXPECT_EQ(MI_RC_NONE, rec->rclass);
	EXPECT_STREQ("stopped", rec->klass);
	EXPECT_STREQ("breakpoint-hit", mi_get_str(rec->results, "reason"));
	EXPECT_STREQ("main", mi_get_str(rec->results, "frame.func"));
	EXPECT_STREQ("p.c", mi_get_str(rec->results, "frame.file"));
	ASSERT_EQ(0, mi_get_int(rec->results, "frame.line", &v));
	EXPECT_EQ(6, v);
	ASSERT_EQ(0, mi_get_u64(rec->results, "frame.addr", &addr));
	EXPECT_EQ(0x00005555555551a3ull, addr);
	EXPECT_EQ(MI_LIST, mi_get(rec->results, "frame.args")->kind);
	EXPECT_EQ(0, mi_get(rec->results, "frame.args")->count);
	EXPECT_EQ(-ENOENT, mi_get_int(rec->results, "frame.nope", &v));
	EXPECT_EQ(-EINVAL, mi_get_int(rec->results, "reason", &v));
	EXPECT_EQ(NULL, mi_get_str(rec->results, "frame"));	/* a tuple, not a string */
	mi_record_free(rec);

	rec = parse("=thread-created,id=\"1\",group-id=\"i1\"");
	ASSERT_NE(NULL, rec);
	EXPECT_EQ(MI_REC_NOTIFY, rec->kind);
	EXPECT_STREQ("thread-created", rec->klass);
	EXPECT_STREQ("i1", mi_get_str(rec->results, "group-id"));
	mi_record_free(rec);

	rec = parse("+download,section=\".text\",section-size=\"6668\"");
	ASSERT_NE(NULL, rec);
	EXPECT_EQ(MI_REC_STATUS, rec->kind);
	EXPECT_STREQ(".text", mi_get_str(rec->results, "section"));
	mi_record_free(rec);

	rec = parse("=thread-group-added,id=\"i1\"");
	ASSERT_NE(NULL, rec);
	EXPECT_EQ(1, rec->results->count);
	mi_record_free(rec);
}

TEST(stream_records_and_prompt)
{
	struct mi_record *rec = parse("~\"Breakpoint 1, main () at p.c:6\\n\"");

	ASSERT_NE(NULL, rec);
	EXPECT_EQ(MI_REC_CONSOLE, rec->kind);
	EXPECT_STREQ("Breakpoint 1, main () at p.c:6\n", rec->text);
	EXPECT_EQ(strlen(rec->text), rec->text_len);
	mi_record_free(rec);

	rec = parse("@\"target says hi\"");
	ASSERT_NE(NULL, rec);
	EXPECT_EQ(MI_REC_TARGET, rec->kind);
	mi_record_free(rec);

	rec = parse("&\"kill\\n\"");
	ASSERT_NE(NULL, rec);
	EXPECT_EQ(MI_REC_LOG, rec->kind);
	EXPECT_STREQ("kill\n", rec->text);
	mi_record_free(rec);

	rec = parse("(gdb) ");
	ASSERT_NE(NULL, rec);
	EXPECT_EQ(MI_REC_PROMPT, rec->kind);
	mi_record_free(rec);
	rec = parse("(gdb)\r");
	ASSERT_NE(NULL, rec);
	EXPECT_EQ(MI_REC_PROMPT, rec->kind);
	mi_record_free(rec);

	EXPECT_EQ(-EBADMSG, parse_err("(gdb) x"));
	EXPECT_EQ(-EBADMSG, parse_err("~\"a\" trailing"));
	EXPECT_EQ(-EBADMSG, parse_err("~unquoted"));
}

TEST(cstring_escapes)
{
	struct mi_record *rec =
		parse("~\"n\\n t\\t q\\\" b\\\\ o\\101\\60\\0end r\\r e\\e x\\x41 a\\a\"");
	const char want[] = "n\n t\t q\" b\\ oA0\0end r\r e\033 xA a\a";

	ASSERT_NE(NULL, rec);
	ASSERT_EQ(sizeof(want) - 1, rec->text_len);
	EXPECT_EQ(0, memcmp(want, rec->text, sizeof(want) - 1));
	mi_record_free(rec);

	/* Octal takes at most 3 digits: \1011 is 'A' then '1'. */
	rec = parse("~\"\\1011\\377\"");
	ASSERT_NE(NULL, rec);
	ASSERT_EQ(3, rec->text_len);
	EXPECT_EQ('A', rec->text[0]);
	EXPECT_EQ('1', rec->text[1]);
	EXPECT_EQ(0xff, (unsigned char)rec->text[2]);
	mi_record_free(rec);

	EXPECT_EQ(-EBADMSG, parse_err("~\"\\400\""));	/* > 0xff */
	EXPECT_EQ(-EBADMSG, parse_err("~\"\\q\""));	/* unknown escape */
	EXPECT_EQ(-EBADMSG, parse_err("~\"\\x\""));	/* \x without digits */
	EXPECT_EQ(-EBADMSG, parse_err("~\"abc"));	/* unterminated */
	EXPECT_EQ(-EBADMSG, parse_err("~\"abc\\\""));	/* escaped final quote */
	EXPECT_EQ(-EBADMSG, parse_err("~\"a\001b\""));	/* raw control char */
}

TEST(lists_and_tuples)
{
	struct mi_record *rec = parse(stack_line);
	const struct mi_value *stack, *v;
	long long line;

	ASSERT_NE(NULL, rec);
	EXPECT_EQ(12, rec->token);
	stack = mi_get(rec->results, "stack");
	ASSERT_NE(NULL, stack);
	EXPECT_EQ(MI_LIST, stack->kind);
	EXPECT_EQ(2, stack->count);
	EXPECT_STREQ("frame", stack->child->name);
	EXPECT_STREQ("sq", mi_get_str(rec->results, "stack.0.func"));
	EXPECT_STREQ("main", mi_get_str(rec->results, "stack.1.func"));
	/* By name, a list of results gives its first element. */
	EXPECT_STREQ("sq", mi_get_str(rec->results, "stack.frame.func"));
	ASSERT_EQ(0, mi_get_int(rec->results, "stack.1.line", &line));
	EXPECT_EQ(6, line);
	EXPECT_EQ(NULL, mi_get(rec->results, "stack.2"));
	EXPECT_EQ(NULL, mi_get(rec->results, "stack.1x"));
	EXPECT_EQ(NULL, mi_get(rec->results, "stack..0"));
	mi_record_free(rec);

	/* Lists of values, nested lists, empty containers. */
	rec = parse("^done,a=[\"x\",\"y\"],b=[[],[{}],{c=\"1\"}],e={},f=[]");
	ASSERT_NE(NULL, rec);
	EXPECT_EQ(4, rec->results->count);
	v = mi_get(rec->results, "a");
	ASSERT_NE(NULL, v);
	EXPECT_EQ(2, v->count);
	EXPECT_EQ(NULL, v->child->name);
	EXPECT_STREQ("y", mi_get_str(rec->results, "a.1"));
	EXPECT_EQ(MI_LIST, mi_get(rec->results, "b.0")->kind);
	EXPECT_EQ(MI_TUPLE, mi_get(rec->results, "b.1.0")->kind);
	EXPECT_STREQ("1", mi_get_str(rec->results, "b.2.c"));
	EXPECT_EQ(MI_TUPLE, mi_get(rec->results, "e")->kind);
	EXPECT_EQ(0, mi_get(rec->results, "f")->count);
	mi_record_free(rec);

	/* -thread-info shape: list of tuples with nested frame tuples. */
	rec = parse("^done,threads=[{id=\"2\",target-id=\"Thread 0x7f (LWP 5)\",frame={level=\"0\","
		    "func=\"worker\",args=[{name=\"arg\",value=\"0x0\"}]},state=\"stopped\"},"
		    "{id=\"1\",state=\"running\"}],current-thread-id=\"2\"");
	ASSERT_NE(NULL, rec);
	EXPECT_STREQ("worker", mi_get_str(rec->results, "threads.0.frame.func"));
	EXPECT_STREQ("arg", mi_get_str(rec->results, "threads.0.frame.args.0.name"));
	EXPECT_STREQ("running", mi_get_str(rec->results, "threads.1.state"));
	EXPECT_STREQ("2", mi_get_str(rec->results, "current-thread-id"));
	mi_record_free(rec);
}

TEST(malformed_rejected)
{
	static const char *const bad[] = {
		"", "garbage", "hello world", "^done,", "^done,x", "^done,x=", "^done,x=y",
		"^done,=\"v\"", "^done,x=\"v\"y", "^done,x={", "^done,x={a=\"1\"",
		"^done,x=[\"1\"", "^done,x=[\"1\",]", "^done,x={\"1\"}", "^done,x={a=\"1\",}",
		"^done,x=[a=]", "^done x=\"1\"", "*", "=", "+,a=\"1\"", "^done,x=\"1\"}",
		"^done,x=[\"1\"]]", "^done,x=\"1\",,y=\"2\"", "Program received signal",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EBADMSG, parse_err(bad[i])) TH_LOG("accepted: %s", bad[i]);
	}
}

TEST(depth_bounded)
{
	size_t n = MI_MAX_DEPTH + 8, len = 0, i;
	char *line = malloc(2 * n + 32);
	struct mi_record *rec;

	ASSERT_NE(NULL, line);
	len += sprintf(line, "^done,x=");
	for (i = 0; i < n; i++)
		line[len++] = '[';
	for (i = 0; i < n; i++)
		line[len++] = ']';
	line[len] = '\0';
	EXPECT_EQ(-EBADMSG, mi_parse_line(line, len, &rec));

	/* Just under the limit parses. */
	len = sprintf(line, "^done,x=");
	for (i = 0; i < MI_MAX_DEPTH - 2; i++)
		line[len++] = '[';
	for (i = 0; i < MI_MAX_DEPTH - 2; i++)
		line[len++] = ']';
	line[len] = '\0';
	ASSERT_EQ(0, mi_parse_line(line, len, &rec));
	mi_record_free(rec);
	free(line);
}

static char *many_values(size_t k, size_t *ret_len)
{
	char *line = malloc(3 * k + 16);
	size_t len = 0;

	if (!line)
		return NULL;
	len += sprintf(line, "^done,x=[");
	for (size_t i = 0; i < k; i++)
		len += sprintf(line + len, i ? ",\"\"" : "\"\"");
	line[len++] = ']';
	*ret_len = len;
	return line;
}

TEST(value_count_bounded)
{
	struct mi_record *rec;
	size_t len;
	char *line;

	/* The results tuple and the list count too: 2 + k values. */
	line = many_values(MI_MAX_VALUES - 2, &len);
	ASSERT_NE(NULL, line);
	ASSERT_EQ(0, mi_parse_line(line, len, &rec));
	EXPECT_EQ(MI_MAX_VALUES - 2, mi_get(rec->results, "x")->count);
	mi_record_free(rec);
	free(line);

	line = many_values(MI_MAX_VALUES - 1, &len);
	ASSERT_NE(NULL, line);
	EXPECT_EQ(-E2BIG, mi_parse_line(line, len, &rec));
	free(line);
}

/* A whole gdb session transcript, fed in chunks of every size 1..64. */
static const char transcript[] =
	"=thread-group-added,id=\"i1\"\n"
	"~\"Reading symbols from ./p...\\n\"\n"
	"(gdb) \n"
	"1^done,bkpt={number=\"1\",type=\"breakpoint\",line=\"6\",thread-groups=[\"i1\"]}\r\n"
	"(gdb) \n"
	"=thread-group-started,id=\"i1\",pid=\"3136\"\n"
	"2^running\n"
	"*running,thread-id=\"all\"\n"
	"this is not MI\n"
	"\n"
	"*stopped,reason=\"breakpoint-hit\",frame={func=\"main\",line=\"6\"},thread-id=\"1\"\n"
	"3^done,value=\"4\"\n"
	"(gdb) \n";

static const enum mi_record_kind transcript_kinds[] = {
	MI_REC_NOTIFY, MI_REC_CONSOLE, MI_REC_PROMPT, MI_REC_RESULT, MI_REC_PROMPT,
	MI_REC_NOTIFY, MI_REC_RESULT, MI_REC_EXEC, (enum mi_record_kind)-1,
	MI_REC_EXEC, MI_REC_RESULT, MI_REC_PROMPT,
};

TEST(partial_lines)
{
	for (size_t chunk = 1; chunk <= 64; chunk++) {
		struct mi_parser *p = mi_parser_new();
		size_t off = 0, nrec = 0;
		struct mi_record *rec;
		int r;

		ASSERT_NE(NULL, p);
		while (off < sizeof(transcript) - 1) {
			size_t n = sizeof(transcript) - 1 - off;

			if (n > chunk)
				n = chunk;
			ASSERT_EQ(0, mi_parser_feed(p, transcript + off, n));
			off += n;
			while ((r = mi_parser_next(p, &rec)) != 0) {
				ASSERT_LT(nrec, sizeof(transcript_kinds) / sizeof(transcript_kinds[0]));
				if (r < 0) {
					EXPECT_EQ(-EBADMSG, r);
					EXPECT_EQ((enum mi_record_kind)-1, transcript_kinds[nrec]);
				} else {
					EXPECT_EQ(transcript_kinds[nrec], rec->kind)
						TH_LOG("chunk %zu record %zu", chunk, nrec);
					if (rec->kind == MI_REC_RESULT && rec->token == 3)
						EXPECT_STREQ("4", mi_get_str(rec->results, "value"));
					mi_record_free(rec);
				}
				nrec++;
			}
		}
		EXPECT_EQ(sizeof(transcript_kinds) / sizeof(transcript_kinds[0]), nrec);
		EXPECT_EQ(0, mi_parser_pending(p));
		mi_parser_free(p);
	}
}

TEST(truncated_stream)
{
	struct mi_parser *p = mi_parser_new();
	struct mi_record *rec;

	ASSERT_NE(NULL, p);
	/* gdb died in the middle of a line: no record, bytes pending. */
	ASSERT_EQ(0, mi_parser_feed(p, "^done\n*stopped,reason=\"brea", 27));
	ASSERT_EQ(1, mi_parser_next(p, &rec));
	mi_record_free(rec);
	EXPECT_EQ(0, mi_parser_next(p, &rec));
	EXPECT_EQ(21, mi_parser_pending(p));
	mi_parser_free(p);
}

TEST(overlong_line)
{
	struct mi_parser *p = mi_parser_new();
	size_t big = MI_MAX_LINE + 100, off;
	char *junk = malloc(65536);
	struct mi_record *rec;

	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, junk);
	memset(junk, 'a', 65536);
	ASSERT_EQ(0, mi_parser_feed(p, "^done\n~\"", 8));
	for (off = 0; off < big; off += 65536)
		ASSERT_EQ(0, mi_parser_feed(p, junk, 65536));
	/* Memory stays bounded while the line goes on. */
	EXPECT_LT(mi_parser_pending(p), 64);
	ASSERT_EQ(0, mi_parser_feed(p, "\"\n^exit\n", 8));
	ASSERT_EQ(1, mi_parser_next(p, &rec));
	EXPECT_EQ(MI_RC_DONE, rec->rclass);
	mi_record_free(rec);
	EXPECT_EQ(-E2BIG, mi_parser_next(p, &rec));
	ASSERT_EQ(1, mi_parser_next(p, &rec));
	EXPECT_EQ(MI_RC_EXIT, rec->rclass);
	mi_record_free(rec);
	EXPECT_EQ(0, mi_parser_next(p, &rec));
	mi_parser_free(p);
	free(junk);
}

TEST(quote_round_trip)
{
	const char *s = "a \"b\" \\c\nd\te\001";
	char buf[128], line[160];
	struct mi_record *rec;
	size_t n = mi_quote(buf, sizeof(buf), s);

	ASSERT_EQ(strlen(buf), n);
	EXPECT_STREQ("\"a \\\"b\\\" \\\\c\\nd\\te\\001\"", buf);
	snprintf(line, sizeof(line), "~%s", buf);
	rec = parse(line);
	ASSERT_NE(NULL, rec);
	EXPECT_STREQ(s, rec->text);
	mi_record_free(rec);
	/* Truncation like snprintf. */
	EXPECT_EQ(n, mi_quote(buf, 4, s));
	EXPECT_STREQ("\"a ", buf);
}

TEST_HARNESS_MAIN
