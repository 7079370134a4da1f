// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the GDB/MI parser: the input is a byte stream from
 * "gdb"; the first byte picks the chunk size it is fed in, so the line
 * splitter is fuzzed along with the grammar. Every record is walked with
 * lookups.
 */
#include <stddef.h>
#include <stdint.h>

#include "crdbg/gdbmi.h"

static void walk(const struct mi_value *v, int depth)
{
	for (; v; v = v->next) {
		if (v->kind == MI_CONST) {
			volatile char sink = v->len ? v->str[v->len - 1] : v->str[0];

			(void)sink;
		}
		if (depth < MI_MAX_DEPTH + 2)
			walk(v->child, depth + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mi_parser *p;
	struct mi_record *rec;
	size_t chunk, off;

	if (!size)
		return 0;
	chunk = 1 + data[0] % 64;
	data++;
	size--;
	p = mi_parser_new();
	if (!p)
		return 0;
	for (off = 0; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;

		if (mi_parser_feed(p, data + off, n))
			break;
		for (int r; (r = mi_parser_next(p, &rec)) != 0;) {
			if (r < 0)
				continue;
			walk(rec->results, 0);
			mi_get(rec->results, "frame.line");
			mi_get_str(rec->results, "stack.0.frame.func");
			mi_record_free(rec);
		}
	}
	mi_parser_free(p);
	if (!mi_parse_line((const char *)data, size, &rec))
		mi_record_free(rec);
	return 0;
}
