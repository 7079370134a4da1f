// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the debugger protocol's decoders (crdbg/dbgproto.h):
 * the command parser every GDB backend runs on what comes down the SDM
 * tree, and the reply readers the console runs on what comes up. Any
 * bytes, as one command and as one reply. A command the parser accepts
 * (other than load, whose options it cuts in place) encodes again to one
 * the parser reads the same; so does an argument of the hook and part
 * commands (what a peer of the SDM tree can make a server run).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <crdbg/dbgproto.h>

static void read_reply(const char *text)
{
	const char *fields = dbgp_reply_fields(text);
	struct dbgp_status st;
	struct dbgp_field f;

	if (dbgp_reply_text_len(text) > strlen(text))
		abort();
	(void)dbgp_reply_kind(text);
	while (fields && dbgp_next_field(&fields, &f))
		if (!f.klen || memchr(f.key, '\x1f', f.klen) || memchr(f.value, '\x1f', f.vlen))
			abort();
	(void)dbgp_parse_status(text, &st);
}

/* hook and part arguments: what parses formats again to what parses the same. */
static void read_subcommands(const char *text)
{
	char *copy = strdup(text), again[DBGP_CMD_MAX + 1];
	struct dbgp_part_cmd p, q;
	struct dbgp_part_end e, f;
	struct dbgp_hook_cmd h, k;
	const char *why;
	int n;

	if (!copy)
		return;
	if (!dbgp_hook_parse(text, &h)) {
		n = dbgp_hook_format(again, sizeof(again), &h);
		if (n < 0 || dbgp_hook_parse(again, &k) || h.op != k.op || h.arg != k.arg)
			abort();
	}
	if (!dbgp_part_parse(copy, &p, &why)) {
		if (p.op == DBGP_PART_START &&
		    (p.argc < 1 || p.argv[p.argc + 1] || (strcmp(p.argv[1], "checkpoint") &&
		     strcmp(p.argv[1], "restart") && strcmp(p.argv[1], "verify") &&
		     strcmp(p.argv[1], "rm"))))
			abort();
		n = dbgp_part_format(again, sizeof(again), &p);
		if (n < 0 || dbgp_part_parse(again, &q, &why) || p.op != q.op || p.ms != q.ms ||
		    p.npid != q.npid || memcmp(p.pid, q.pid, sizeof(p.pid)) || p.argc != q.argc ||
		    strcmp(p.step, q.step))
			abort();
	}
	if (!dbgp_part_end_parse(text, &e)) {
		n = dbgp_part_end_format(again, sizeof(again), &e);
		if (n < 0 || dbgp_part_end_parse(again, &f) || e.running != f.running ||
		    e.status != f.status || strcmp(e.why, f.why))
			abort();
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), again[DBGP_CMD_MAX + 1];
	struct dbgp_cmd c, d;
	int n;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	read_reply(buf);
	read_subcommands(buf);
	if (dbgp_parse(buf, size, &c) == 0 && c.verb != DBGP_LOAD) {
		n = dbgp_encode(again, sizeof(again), &c);
		if (n < 0 || dbgp_parse(again, n, &d))
			abort();
		if (c.verb != d.verb || c.wait_ms != d.wait_ms || c.exec != d.exec ||
		    c.pid != d.pid || c.hold_exits != d.hold_exits)
			abort();
	}
	free(buf);
	return 0;
}
