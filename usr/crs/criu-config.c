// SPDX-License-Identifier: GPL-2.0
/* CRIU configuration lines for a criu started ahead (see criu-config.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "criu-config.h"

/* Can CRIU's configuration file carry s as one word? */
static bool config_word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == '#' || *s == '"' || *s == '\\' || *s == 0x7f)
			return false;
	return true;
}

static bool write_lines(FILE *f, char *const *opts, size_t nr, char *const *inherit,
			size_t nr_inherit, const int stdio_dup[3])
{
	for (size_t k = 0; k < nr; k++) {
		const char *o = opts[k], *val = NULL;

		if (strncmp(o, "--", 2) || !config_word(o + 2))
			return false;
		if (!strchr(o, '=') && k + 1 < nr && opts[k + 1][0] != '-')
			val = opts[++k];
		if (val && !config_word(val))
			return false;
		fprintf(f, "%s%s%s\n", o + 2, val ? " " : "", val ? val : "");
	}
	for (size_t k = 1; k < nr_inherit; k += 2) {
		const char *key = strchr(inherit[k], ':');
		int fd;

		if (!key || sscanf(inherit[k], "fd[%d]", &fd) != 1 || fd < 0 || fd > 2 ||
		    stdio_dup[fd] < 0 || !config_word(key))
			return false;
		fprintf(f, "inherit-fd fd[%d]%s\n", stdio_dup[fd], key);
	}
	return true;
}

int crs_criu_config_text(char *const *opts, size_t nr, char *const *inherit, size_t nr_inherit,
			 const int stdio_dup[3], char **text, size_t *len)
{
	FILE *f;
	bool fits;

	*text = NULL;
	*len = 0;
	f = open_memstream(text, len);
	if (!f)
		return -ENOMEM;
	fits = write_lines(f, opts, nr, inherit, nr_inherit, stdio_dup);
	if (fclose(f) || !fits) {
		free(*text);
		*text = NULL;
		*len = 0;
		return fits ? -ENOMEM : -EINVAL;
	}
	return 0;
}
