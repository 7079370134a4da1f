// SPDX-License-Identifier: GPL-2.0
/*
 * JSON string output for the console's --json mode. Replies carry
 * whatever bytes gdb decoded, so the output must stay valid JSON for any
 * input: quotes, backslashes and control characters are escaped, valid
 * UTF-8 passes through, and a byte that is not part of a valid UTF-8
 * sequence is written as \u00XX (its Latin-1 reading).
 */
#include <errno.h>
#include <stdint.h>

#include "crdbg/merge.h"

/* Length of the valid UTF-8 sequence at s (at most len bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	uint32_t cp;
	size_t n, i;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (len < n)
		return 0;
	cp = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, beyond U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

int merge_json_string(FILE *out, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	if (fputc('"', out) == EOF)
		return -EIO;
	while (i < len) {
		unsigned char ch = s[i];
		size_t n;
		int r;

		if (ch == '"' || ch == '\\') {
			r = fprintf(out, "\\%c", ch);
		} else if (ch == '\n') {
			r = fputs("\\n", out);
		} else if (ch == '\t') {
			r = fputs("\\t", out);
		} else if (ch < 0x20 || ch == 0x7f) {
			r = fprintf(out, "\\u%04x", ch);
		} else if (ch < 0x80) {
			r = fputc(ch, out);
		} else if ((n = utf8_len(s + i, len - i))) {
			r = fwrite(s + i, 1, n, out) == n ? 0 : EOF;
			i += n;
			if (r == EOF)
				return -EIO;
			continue;
		} else {
			r = fprintf(out, "\\u%04x", ch);
		}
		if (r == EOF || r < 0)
			return -EIO;
		i++;
	}
	return fputc('"', out) == EOF ? -EIO : 0;
}
