// SPDX-License-Identifier: GPL-2.0
/*
 * Where the part program is (<crdbg/job-part.h>): in the directory of
 * crdbg's helper programs, $CRDBG_SDM_BINDIR when set (the console's own
 * rule for sdm-master and crdbg-server), else found from this program's
 * own path, whichever of crdbg, crdbg-server or a test it is; looked for
 * once a process.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <crdbg/job-part.h>

static int find_program(char *buf, size_t len)
{
	/* beside crdbg-server; build/crdbg; PREFIX/bin/crdbg; build/tests/X/ */
	static const char *const rel[] = { ".", "sdm", "../libexec/crdbg", "../../sdm" };
	const char *dir = getenv("CRDBG_SDM_BINDIR");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (dir && *dir) {
		if (snprintf(buf, len, "%s/" JOB_PART_PROGRAM, dir) >= (int)len)
			return -ENAMETOOLONG;
		return access(buf, X_OK) ? -errno : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -errno;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if (snprintf(buf, len, "%s/%s/" JOB_PART_PROGRAM, exe, rel[i]) >= (int)len)
			return -ENAMETOOLONG;
		if (!access(buf, X_OK))
			return 0;
	}
	return -ENOENT;
}

/* Found once: a coordinator starts a part per rank, each asking again. */
int job_part_program(char *buf, size_t len)
{
	static char found[PATH_MAX];
	static int r = 1;

	if (r > 0)
		r = find_program(found, sizeof(found));
	if (r)
		return r;
	if (snprintf(buf, len, "%s", found) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}
