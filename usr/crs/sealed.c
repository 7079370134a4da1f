// SPDX-License-Identifier: GPL-2.0
/* See sealed.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include <crdbg/crs.h>
#include "error.h"
#include "seal-key.h"
#include "sealed.h"
#include "sha256.h"

#define SEALED_LINE_MAX	4200

int crs_sealed_close(FILE *f, char **buf, size_t *len)
{
	uint8_t d[CRS_SHA256_LEN];
	char hex[CRS_SHA256_HEX];
	int r;

	if (fflush(f)) {
		fclose(f);
		free(*buf);
		*buf = NULL;
		return -ENOMEM;
	}
	r = crs_seal(*buf, *len, d);
	if (r) {
		fclose(f);
		free(*buf);
		*buf = NULL;
		return r;
	}
	crs_sha256_hex(d, hex);
	fprintf(f, "end %s\n", hex);
	if (fclose(f)) {
		free(*buf);
		*buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * The text's shape (magic, bounded lines, one end line, nothing after it)
 * and its seal are checked before a single record is read: a record
 * parser only ever sees text that crdbg itself wrote.
 */
int crs_sealed_parse(const struct crs_sealed_form *form, const char *buf, size_t len,
		     crs_sealed_line_fn fn, void *arg, char *err, size_t errlen)
{
	uint8_t want[CRS_SHA256_LEN], got[CRS_SHA256_LEN];
	size_t magic_len = strlen(form->magic), off, ll = 0, end_off = 0;
	size_t max_line = form->max_line < SEALED_LINE_MAX ? form->max_line : SEALED_LINE_MAX - 1;
	unsigned int lineno = 1;
	char line[SEALED_LINE_MAX];
	bool ended = false;
	const char *nl;
	int r;

	if (!len)
		return crs_fail(err, errlen, -ENODATA, "%s is empty", form->what);
	if (len > form->max_bytes)
		return crs_fail(err, errlen, -EBADMSG, "%s larger than %zu bytes", form->what,
				form->max_bytes);
	if (len < magic_len || memcmp(buf, form->magic, magic_len))
		return crs_fail(err, errlen, -EBADMSG, "%s does not start with \"%.*s\"",
				form->what, (int)magic_len - 1, form->magic);
	for (off = magic_len; off < len && !ended; off += ll + 1) {
		lineno++;
		nl = memchr(buf + off, '\n', len - off);
		if (!nl)
			return crs_fail(err, errlen, -ENODATA, "%s truncated at line %u",
					form->what, lineno);
		ll = (size_t)(nl - (buf + off));
		if (ll > max_line || memchr(buf + off, '\0', ll))
			return crs_fail(err, errlen, -EBADMSG, "%s line %u malformed", form->what,
					lineno);
		if (ll >= 4 && !memcmp(buf + off, "end ", 4)) {
			memcpy(line, buf + off + 4, ll - 4);
			line[ll - 4] = '\0';
			if (!crs_digest_from_hex(line, want, CRS_SHA256_LEN))
				return crs_fail(err, errlen, -EBADMSG, "%s end line malformed",
						form->what);
			end_off = off;
			ended = true;
		}
	}
	if (!ended)
		return crs_fail(err, errlen, -ENODATA, "%s truncated: no end line", form->what);
	if (off != len)
		return crs_fail(err, errlen, -EBADMSG, "%s has data after its end line", form->what);
	r = crs_seal(buf, end_off, got);
	if (r)
		return crs_fail(err, errlen, r, "%s cannot be checked: the seal key %s is unusable: %s",
				form->what, CRS_SEAL_KEY_PATH, strerror(-r));
	if (CRYPTO_memcmp(want, got, sizeof(got)))
		return crs_fail(err, errlen, -EBADMSG, "%s checksum mismatch", form->what);

	lineno = 1;
	for (off = magic_len; off < end_off; off += ll + 1) {
		lineno++;
		ll = (size_t)((const char *)memchr(buf + off, '\n', end_off - off) - (buf + off));
		memcpy(line, buf + off, ll);
		line[ll] = '\0';
		r = fn(arg, line, lineno, err, errlen);
		if (r)
			return r;
	}
	return 0;
}
