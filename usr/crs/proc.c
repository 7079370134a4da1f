// SPDX-License-Identifier: GPL-2.0
/* /proc readers for the checkpoint service (see proc.h). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proc.h"

static int read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (int)n;
}

static int parse_stat(const char *path, char *state, struct crs_proc *ret)
{
	char buf[1024], *p;
	int ppid, pgid, sid;
	char st;

	if (read_small(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d %d %d", &st, &ppid, &pgid, &sid) != 4)
		return -EBADMSG;
	if (state)
		*state = st;
	if (ret) {
		ret->ppid = ppid;
		ret->pgid = pgid;
		ret->sid = sid;
	}
	return 0;
}

int crs_proc_file(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	return read_small(path, buf, len);
}

int crs_proc_ids(pid_t pid, struct crs_proc *ret)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	memset(ret, 0, sizeof(*ret));
	r = parse_stat(path, NULL, ret);
	if (!r)
		ret->pid = pid;
	return r;
}

char crs_task_state(pid_t pid, pid_t tid)
{
	char path[64], st = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (parse_stat(path, &st, NULL))
		return 0;
	return st;
}

/* Every thread of pid is in state want; false if pid is gone. */
static bool all_threads(pid_t pid, char want)
{
	pid_t *tids;
	size_t nr, i;
	bool all;

	if (crs_proc_tids(pid, &tids, &nr))
		return false;
	all = nr > 0;
	for (i = 0; i < nr && all; i++)
		all = crs_task_state(pid, tids[i]) == want;
	free(tids);
	return all;
}

bool crs_proc_zombie(pid_t pid)
{
	return all_threads(pid, 'Z');
}

bool crs_proc_stopped(pid_t pid)
{
	return all_threads(pid, 'T');
}

int crs_proc_sigcont_pending(pid_t pid, pid_t tid)
{
	const char *key = tid ? "SigPnd:" : "ShdPnd:";
	unsigned long long mask;
	char path[64], line[256];
	int r = -EBADMSG;
	FILE *f;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			if (sscanf(line + strlen(key), "%llx", &mask) == 1)
				r = !!(mask & (1ULL << (SIGCONT - 1)));
			break;
		}
	fclose(f);
	return r;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int crs_proc_tids(pid_t pid, pid_t **ret_tids, size_t *ret_nr)
{
	char path[64];
	struct dirent *d;
	pid_t *tids = NULL, *n;
	size_t nr = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -ESRCH;
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		n = realloc(tids, (nr + 1) * sizeof(*tids));
		if (!n) {
			closedir(dir);
			free(tids);
			return -ENOMEM;
		}
		tids = n;
		tids[nr++] = atoi(d->d_name);
	}
	closedir(dir);
	if (nr)
		qsort(tids, nr, sizeof(*tids), cmp_pid);
	*ret_tids = tids;
	*ret_nr = nr;
	return 0;
}

int crs_proc_tree(pid_t pid, bool descendants, pid_t **ret_pids, size_t *ret_nr)
{
	pid_t *pids, *n;
	size_t nr = 1, i, j;

	if (kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	pids = malloc(sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	pids[0] = pid;
	for (i = 0; descendants && i < nr; i++) {
		pid_t *tids;
		size_t nt;

		if (crs_proc_tids(pids[i], &tids, &nt))
			continue;
		for (j = 0; j < nt; j++) {
			char path[96], buf[4096], *tok, *save;

			snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pids[i],
				 (int)tids[j]);
			if (read_small(path, buf, sizeof(buf)) <= 0)
				continue;
			for (tok = strtok_r(buf, " \n", &save); tok;
			     tok = strtok_r(NULL, " \n", &save)) {
				if (nr >= CRS_MAX_PROCS)
					break;
				n = realloc(pids, (nr + 1) * sizeof(*pids));
				if (!n) {
					free(tids);
					free(pids);
					return -ENOMEM;
				}
				pids = n;
				pids[nr++] = atoi(tok);
			}
		}
		free(tids);
	}
	*ret_pids = pids;
	*ret_nr = nr;
	return 0;
}

pid_t crs_proc_tracer(pid_t pid)
{
	pid_t *tids, tracer = 0;
	size_t nr, i;

	if (crs_proc_tids(pid, &tids, &nr))
		return 0;
	for (i = 0; i < nr && !tracer; i++) {
		char path[96], buf[4096], *p;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tids[i]);
		if (read_small(path, buf, sizeof(buf)) <= 0)
			continue;
		p = strstr(buf, "\nTracerPid:");
		if (p)
			tracer = atoi(p + 11);
	}
	free(tids);
	return tracer;
}

bool crs_proc_maps(pid_t pid, const char *lib)
{
	char path[64], line[4352];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *slash = strrchr(line, '/');

		if (slash && strstr(slash, lib))
			found = true;
	}
	fclose(f);
	return found;
}

int crs_proc_exe(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int crs_proc_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
		return errno ? -errno : -EIO;
	return 0;
}
