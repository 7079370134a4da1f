// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the id-set decoder and the display-form parser.
 * Whatever decodes must re-encode to bytes that decode to the same set,
 * and print to a string that parses back to it.
 */
#include <stdlib.h>
#include <string.h>

#include "sdm/idset.h"

static void check_set(const struct sdm_idset *s)
{
	size_t len = sdm_set_serialized_length(s);
	uint8_t *buf = malloc(len);
	struct sdm_idset *back = sdm_set_new();
	char *str = sdm_set_to_string(s);

	if (!buf || !back || !str)
		abort();
	if (sdm_set_serialize(s, buf, len) != (ssize_t)len ||
	    sdm_set_deserialize(back, buf, len) != (ssize_t)len || !sdm_set_equal(s, back))
		abort();
	sdm_set_clear(back);
	if (sdm_set_parse(back, str, NULL) || !sdm_set_equal(s, back))
		abort();
	free(buf);
	free(str);
	sdm_set_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sdm_idset *s = sdm_set_new();
	char *text;
	ssize_t n;

	if (!s)
		abort();
	n = sdm_set_deserialize(s, data, size);
	if (n > (ssize_t)size)
		abort();
	if (n >= 0)
		check_set(s);

	/* The same bytes as display form text. */
	text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	sdm_set_clear(s);
	if (sdm_set_parse(s, text, NULL) == 0)
		check_set(s);
	free(text);
	sdm_set_free(s);
	return 0;
}
