// SPDX-License-Identifier: GPL-2.0
/* CRIU options a user may pass, and the ones crdbg detects (see criu-opts.h). */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "criu-opts.h"
#include "error.h"

enum opt_value { V_NONE, V_OPTIONAL, V_REQUIRED, V_SIZE };

/*
 * Options about what CRIU may take and how; every one that changes what
 * the restore must do is accepted by criu restore as well. Options crdbg
 * drives itself (-t, -D, -o, --leave-running, --leave-stopped,
 * --restore-detached, --network-lock) and those that run programs
 * (--action-script, --exec-cmd, --lib) are not here.
 */
static const struct {
	const char *name;
	enum opt_value value;
} allowed[] = {
	{ "file-locks", V_NONE },	{ "link-remap", V_NONE },
	{ "ghost-limit", V_SIZE },	{ "ext-unix-sk", V_OPTIONAL },
	{ "tcp-established", V_NONE },	{ "tcp-close", V_NONE },
	{ "skip-in-flight", V_NONE },	{ "evasive-devices", V_NONE },
	{ "force-irmap", V_NONE },	{ "manage-cgroups", V_OPTIONAL },
	{ "external", V_REQUIRED },	{ "skip-mnt", V_REQUIRED },
	{ "timeout", V_SIZE },		{ "shell-job", V_NONE },
};

#define DEFAULT_GHOST_LIMIT (1u << 20)

static bool value_chars_ok(const char *v)
{
	for (; *v; v++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:/,=+-[]@",
			    *v))
			return false;
	return true;
}

static bool size_ok(const char *v)
{
	size_t n = strspn(v, "0123456789");

	return n > 0 && (!v[n] || (strchr("KMG", v[n]) && !v[n + 1]));
}

int crs_criu_opt_check(const char *opt, char *err, size_t errlen)
{
	const char *eq = strchr(opt, '=');
	size_t len, i;

	if (strncmp(opt, "--", 2) || strlen(opt) >= CRS_CRIU_OPT_MAX)
		return crs_fail(err, errlen, -EINVAL,
			    "CRIU option \"%.40s\" is not of the form --name[=value] (under %d characters)",
			    opt, CRS_CRIU_OPT_MAX);
	len = eq ? (size_t)(eq - opt) - 2 : strlen(opt) - 2;
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		enum opt_value v = allowed[i].value;

		if (strlen(allowed[i].name) != len || strncmp(allowed[i].name, opt + 2, len))
			continue;
		if (eq && v == V_NONE)
			return crs_fail(err, errlen, -EINVAL, "CRIU option --%s takes no value",
				    allowed[i].name);
		if (!eq && (v == V_REQUIRED || v == V_SIZE))
			return crs_fail(err, errlen, -EINVAL, "CRIU option --%s needs =value",
				    allowed[i].name);
		if (eq && (!eq[1] || !value_chars_ok(eq + 1) || (v == V_SIZE && !size_ok(eq + 1))))
			return crs_fail(err, errlen, -EINVAL, "CRIU option %s: bad value", opt);
		return 0;
	}
	return crs_fail(err, errlen, -EINVAL,
		    "CRIU option \"%s\" is not one crdbg passes on (see \"Choosing CRIU options\" in Documentation/checkpoint.md)",
		    opt);
}

/* Does fdinfo text list a lock (flock, POSIX or OFD) on this file? */
static bool fdinfo_has_lock(const char *path)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(path, "re");

	while (f && !found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "lock:", 5);
	if (f)
		fclose(f);
	return found;
}

/*
 * Walk pid's open files: *locks when one carries a lock, *ghost the size
 * of its largest open unlinked regular file.
 */
static void scan_fds(pid_t pid, bool *locks, off_t *ghost)
{
	char path[300], link[4096];
	struct dirent *de;
	struct stat st;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)pid, de->d_name);
		if (!*locks && fdinfo_has_lock(path))
			*locks = true;
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 10)
			continue;
		link[n] = '\0';
		if (strcmp(link + n - 10, " (deleted)") || stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (st.st_size > *ghost)
			*ghost = st.st_size;
	}
	closedir(d);
}

/*
 * Walk pid's mappings: *ghost the size of its largest mapping of an
 * unlinked file (a POSIX shared memory segment unlinked once mapped, as
 * UCX's are; a program file replaced while it runs), which CRIU carries
 * as a ghost file too, with no fd open on it. SysV segments and memfds
 * (CRIU's own kinds) and /dev/zero (anonymous shared memory) are not
 * files CRIU carries; the file's size is at least the mapping's end in it.
 */
static void scan_maps(pid_t pid, off_t *ghost)
{
	char path[64], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, offset, ino;
		char *name;
		int at = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*x:%*x %llu %n", &start, &end, &offset, &ino,
			   &at) != 4 || !at || !ino)
			continue;
		name = line + at;
		name[strcspn(name, "\n")] = '\0';
		if (name[0] != '/' || strlen(name) < 11 || strcmp(name + strlen(name) - 10, " (deleted)") ||
		    !strncmp(name, "/SYSV", 5) || !strncmp(name, "/memfd:", 7) ||
		    !strncmp(name, "/dev/zero", 9))
			continue;
		if ((off_t)(offset + end - start) > *ghost)
			*ghost = (off_t)(offset + end - start);
	}
	fclose(f);
}

int crs_criu_auto_opts(const pid_t *pids, size_t nr, struct crs_meta *m)
{
	bool locks = false;
	off_t ghost = 0;
	char opt[64];
	size_t i;
	int r = 0;

	for (i = 0; i < nr; i++) {
		scan_fds(pids[i], &locks, &ghost);
		scan_maps(pids[i], &ghost);
	}
	if (locks)
		r = crs_meta_add_criu_opt(m, "--file-locks");
	if (!r && ghost > (off_t)DEFAULT_GHOST_LIMIT) {
		/* Whole MiB above the largest, so a file growing a little still fits. */
		snprintf(opt, sizeof(opt), "--ghost-limit=%lldM", (long long)(ghost >> 20) + 2);
		r = crs_meta_add_criu_opt(m, opt);
	}
	return r;
}
