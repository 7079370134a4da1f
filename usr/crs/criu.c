// SPDX-License-Identifier: GPL-2.0
/* Running criu dump / restore as a child (see criu.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "criu.h"
#include "sock-inodes.h"
#include "criu-config.h"
#include "error.h"
#include "fdio.h"
#include "proc.h"
#include "store.h"
#include "tmpfs.h"
#include "tree-stdio.h"
#include <crdbg/criu-gate.h>

/* Distinct terminals of one tree dumped as external (more: CRIU refuses). */
#define MAX_EXTERNAL_TTYS 4


const char *crs_criu_path(void)
{
	const char *env = getenv("CRDBG_CRIU");

	if (env && *env)
		return env;
	if (access("/usr/sbin/criu", X_OK) == 0)
		return "/usr/sbin/criu";
	return "criu";
}

/*
 * fork + exec argv with stdin from /dev/null and stdout to outfd (or
 * null), each of env ("NAME=value", NULL-terminated; NULL for none) added
 * to its environment.
 */
static pid_t spawn_env(char *const argv[], int outfd, char *const env[])
{
	pid_t pid = fork();
	int null;

	if (pid != 0)
		return pid;
	for (size_t k = 0; env && env[k]; k++)
		putenv(env[k]);
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(outfd >= 0 ? outfd : null, 1);
		if (outfd >= 0)
			dup2(null, 2);
	}
	execvp(argv[0], argv);
	_exit(127);
}

static pid_t spawn(char *const argv[], int outfd)
{
	return spawn_env(argv, outfd, NULL);
}

/* Run argv quietly (no stdio) and return its exit status, -1 if it did not run. */
static int run_quiet(char *const argv[])
{
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC), st;
	pid_t pid = spawn(argv, null);

	if (null >= 0)
		close(null);
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool in_path(const char *prog)
{
	char *path = getenv("PATH"), *copy, *dir, *save = NULL, file[4200];
	bool found = false;

	copy = strdup(path && *path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
	if (!copy)
		return false;
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		snprintf(file, sizeof(file), "%s/%s", dir, prog);
		found = access(file, X_OK) == 0;
	}
	free(copy);
	return found;
}

/*
 * The network lock CRIU uses while TCP connections are dumped or restored:
 * nftables (built into Debian's criu 3.17; the kernel needs nf_tables,
 * which crdbg loads quietly if it can), or CRIU's default, iptables, when
 * nf_tables cannot be had and an iptables-restore binary exists.
 */
static const char *network_lock(void)
{
	char *modprobe[] = { "modprobe", "-q", "nf_tables", NULL };

	if (access("/sys/module/nf_tables", F_OK) == 0)
		return "nftables";
	run_quiet(modprobe);
	if (access("/sys/module/nf_tables", F_OK) == 0 || !in_path("iptables-restore"))
		return "nftables";
	return "iptables";
}

static bool same_netns(pid_t pid)
{
	char path[64], mine[64] = "", theirs[64] = "";

	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	if (readlink("/proc/self/ns/net", mine, sizeof(mine) - 1) < 0 ||
	    readlink(path, theirs, sizeof(theirs) - 1) < 0)
		return true;
	return strcmp(mine, theirs) == 0;
}

/* Does pid hold a socket listed in its network namespace's tcp table? */
static bool has_tcp_socket(pid_t pid, const char *table)
{
	struct crs_sock_inodes s = { 0 };
	unsigned long ino;
	char path[64], line[512];
	bool found = false;
	FILE *f;

	if (crs_sock_inodes_add(&s, pid) || !s.nr) {
		crs_sock_inodes_free(&s);
		return false;
	}
	snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)pid, table);
	f = fopen(path, "re");
	while (f && !found && fgets(line, sizeof(line), f))
		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
		found = sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %lu", &ino) == 1 &&
			ino && crs_sock_inodes_has(&s, ino);
	if (f)
		fclose(f);
	crs_sock_inodes_free(&s);
	return found;
}

/*
 * An MPI job's tree holds TCP connections (ranks to mpirun, a singleton to
 * its orted), or lives in its own network namespace: CRIU then needs
 * --tcp-established and a network lock that works without iptables.
 */
bool crs_criu_needs_network(pid_t root)
{
	pid_t *pids = NULL;
	size_t nr = 0, i;
	bool need = !same_netns(root);

	if (!need && crs_proc_tree(root, true, &pids, &nr) == 0)
		for (i = 0; i < nr && !need; i++)
			need = has_tcp_socket(pids[i], "tcp") || has_tcp_socket(pids[i], "tcp6");
	free(pids);
	return need;
}

/* Did the dump in dir take TCP connections or a network namespace? */
static bool images_need_network(const char *dir)
{
	struct dirent *de;
	bool need = false;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while (!need && (de = readdir(d)))
		need = !strncmp(de->d_name, "tcp-stream-", 11) || !strncmp(de->d_name, "netns-", 6);
	closedir(d);
	return need;
}

bool crs_criu_restore_reaches_out(const char *dir, const struct crs_meta *m)
{
	static const char *const out[] = { "--tcp-established", "--ext-unix-sk", "--external" };

	for (size_t i = 0; i < m->nr_criu_opts; i++)
		for (size_t j = 0; j < sizeof(out) / sizeof(out[0]); j++)
			if (!strncmp(m->criu_opts[i], out[j], strlen(out[j])))
				return true;
	return images_need_network(dir);
}

int crs_criu_version(char *buf, size_t len)
{
	char *argv[] = { (char *)crs_criu_path(), "--version", NULL };
	char out[256] = "", *p;
	int fds[2], st;
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = spawn(argv, fds[1]);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -errno;
	}
	n = read(fds[0], out, sizeof(out) - 1);
	close(fds[0]);
	waitpid(pid, &st, 0);
	if (n <= 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -ENOENT;
	out[n] = '\0';
	p = strstr(out, "Version:");
	if (!p)
		return -EBADMSG;
	p += 8;
	while (*p == ' ')
		p++;
	snprintf(buf, len, "%.*s", (int)strcspn(p, " \n"), p);
	return 0;
}

/*
 * What a user can do about a refusal CRIU words in its own terms; NULL
 * for none.
 */
static const struct {
	const char *says, *hint;
} criu_hints[] = {
	{ "doesn't live in IPC ns",
	  "CRIU takes SysV shared memory only with an IPC namespace of the tree's own: start the job under `unshare --ipc`, or without SysV segments (MPICH over UCX: UCX_TLS=^sysv)" },
	{ "outside of its pid namespace",
	  "its session has no leader in its PID namespace: start the job under setsid(1) or from a login shell" },
	{ "Address already in use",
	  "a port of the job's is still taken (by the killed original's sockets, which linger a few seconds, or by another program): restart again in a moment, or run the job in a network namespace of its own" },
	{ "has bad size",
	  "a file the program had open changed size since the checkpoint: put it back as it was, or move it aside if the program may start it anew" },
	{ "on restore: No such file or directory",
	  "a file the program had open is gone: put it back at that path (without the leading /)" },
	{ "Don't have tty to inherit session from",
	  "the tree is a shell job on a terminal: restart from a terminal, or hand one in with --terminal-fd N" },
	{ "without correspond master peer",
	  "a terminal of the tree has its master outside it: start the job from a shell (a shell job) or under setsid on its terminal" },
};

static const char *criu_error_hint(const char *e)
{
	for (size_t i = 0; i < sizeof(criu_hints) / sizeof(criu_hints[0]); i++)
		if (strstr(e, criu_hints[i].says))
			return criu_hints[i].hint;
	return NULL;
}

/* A child's exit that CRIU reports as an error, e.g. a feature probe's. */
static bool is_exit_report(const char *e)
{
	return strstr(e, "): exited, status=") || strstr(e, "): killed by signal");
}

/*
 * The first "Error" line of CRIU's log that names a cause: one reporting
 * a helper's exit (CRIU's first run probes `iptables -w -L` and logs its
 * failure as an error, then goes on) only when there is no other.
 */
void crs_criu_log_error(const char *log, char *out, size_t len)
{
	char line[1024], first[1024] = "";
	FILE *f = fopen(log, "re");
	const char *hint;

	snprintf(out, len, "see %s", log);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *e = strstr(line, "Error");

		if (!e)
			continue;
		e[strcspn(e, "\n")] = '\0';
		if (!first[0])
			snprintf(first, sizeof(first), "%s", e);
		if (is_exit_report(e))
			continue;
		snprintf(first, sizeof(first), "%s", e);
		break;
	}
	fclose(f);
	if (!first[0])
		return;
	hint = criu_error_hint(first);
	if (hint)
		snprintf(out, len, "%s; %s (CRIU's log: %s)", first, hint, log);
	else
		snprintf(out, len, "%s (CRIU's log: %s; CRDBG_CRIU_VERBOSITY=4 makes it say more)",
			 first, log);
}

/*
 * CRIU's log level for crdbg's dumps and restores: CRIU's own default
 * (2: errors and warnings, all crs_criu_log_error() needs) unless
 * $CRDBG_CRIU_VERBOSITY says 0-4. Its debug level (4) writes a line per
 * mapping, file and page run, about a thousand for a small process, one
 * write() each, much of it while the tree is stopped: measured in the
 * TCG guest it made a raw dump stop longer (Documentation/performance.md).
 */
static const char *criu_verbosity(void)
{
	static const char *const level[] = { "-v0", "-v1", "-v2", "-v3", "-v4" };
	const char *env = getenv("CRDBG_CRIU_VERBOSITY");

	if (env && env[0] >= '0' && env[0] <= '4' && !env[1])
		return level[env[0] - '0'];
	return level[2];
}

/* "criu VERB -t PID -D DIR -o LOG -vN" into argv (spid: room for the pid); returns the count. */
static int dump_args(char **argv, const char *verb, pid_t pid, char spid[16], const char *dir,
		     const char *log)
{
	int i = 0;

	snprintf(spid, 16, "%d", (int)pid);
	argv[i++] = (char *)crs_criu_path();
	argv[i++] = (char *)verb;
	argv[i++] = "-t";
	argv[i++] = spid;
	argv[i++] = "-D";
	argv[i++] = (char *)dir;
	argv[i++] = "-o";
	argv[i++] = (char *)log;
	argv[i++] = (char *)criu_verbosity();
	return i;
}

/* The recorded options (automatic and the user's), for dump and restore alike. */
static int add_recorded(char **argv, int i, const struct crs_meta *m)
{
	size_t k;

	for (k = 0; k < m->nr_criu_opts; k++)
		argv[i++] = (char *)m->criu_opts[k];
	return i;
}

/*
 * The dump gate: criu dump is started before the tree is frozen, so that
 * its start-up (exec, libraries, kernel feature checks, options, its
 * set-up before it seizes the root) is not part of the time the tree is
 * stopped. A CRIU plugin of crdbg's (usr/crs/gate/criu-gate.c, carried in
 * libcrs and written out here for each dump, loaded with --libdir and
 * preloaded) holds CRIU at its first seize of the root, the first thing
 * it does to the tree (at its start, where the preload did not take),
 * until crdbg has frozen the tree and writes "go" into the gate FIFO
 * (the words and files are <crdbg/criu-gate.h>'s);
 * end of file instead makes it fail and CRIU give up before touching
 * anything. It says "ready" when it waits and, once every image
 * is written and closed, "dumped" (or "failed") into the status FIFO,
 * before CRIU lets go of the tree. crdbg holds both FIFOs open
 * read-write, so the plugin's opens never block and crdbg's death is an
 * end of file at the gate. It replaces an action script: CRIU runs one in
 * a new process (a fork of criu, an exec of the shell) at each of its
 * actions, the post-dump one while the tree is stopped.
 */
extern const char crs_gate_plugin[], crs_gate_plugin_end[];

static int write_file(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), r;

	if (fd < 0)
		return -errno;
	r = crs_write_all(fd, buf, len);
	close(fd);
	return r;
}

/*
 * --libdir replaces CRIU's plugin directory: the plugins installed there
 * ($CRIU_LIBS_DIR, else /usr/lib/criu) are linked in beside the gate, so
 * that CRIU still loads them.
 */
static void link_installed_plugins(const char *gatedir)
{
	const char *dir = getenv("CRIU_LIBS_DIR");
	char from[PATH_MAX], to[PATH_MAX];
	struct dirent *de;
	DIR *d;

	d = opendir(dir && *dir ? dir : "/usr/lib/criu");
	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len < 4 || strcmp(de->d_name + len - 3, ".so") ||
		    !strcmp(de->d_name, CRDBG_GATE_PLUGIN))
			continue;
		snprintf(from, sizeof(from), "%s/%s", dir && *dir ? dir : "/usr/lib/criu",
			 de->d_name);
		snprintf(to, sizeof(to), "%s/%s", gatedir, de->d_name);
		if (symlink(from, to))
			continue;	/* CRIU goes on without it, as without --libdir */
	}
	closedir(d);
}

static int gate_fifo(struct crs_criu_gate *g, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", g->dir, name);
	if (mkfifo(path, 0600))
		return -errno;
	return open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
}

/*
 * The plugin in a new directory of DIR named crdbg-gate- and six random
 * characters (mkdtemp(3)): all criu's exec needs (it preloads the plugin).
 */
static int gate_make(struct crs_criu_gate *g, const char *dir)
{
	char so[PATH_MAX];

	g->gate_fd = g->status_fd = -1;
	snprintf(g->dir, sizeof(g->dir), "%s/crdbg-gate-XXXXXX", dir);
	if (!mkdtemp(g->dir)) {
		g->dir[0] = '\0';
		return -errno;
	}
	snprintf(so, sizeof(so), "%s/%s", g->dir, CRDBG_GATE_PLUGIN);
	return write_file(so, crs_gate_plugin, (size_t)(crs_gate_plugin_end - crs_gate_plugin));
}

/*
 * The installed CRIU plugins beside it and its FIFOs, which criu needs
 * only at its plugins' init, after it read its configuration: a criu
 * started ahead execs before this (5-10 ms of directory work in the test
 * guest). Done once.
 */
static int gate_equip(struct crs_criu_gate *g)
{
	if (g->status_fd >= 0)
		return 0;
	link_installed_plugins(g->dir);
	g->gate_fd = gate_fifo(g, CRDBG_GATE_FIFO);
	if (g->gate_fd < 0)
		return g->gate_fd == -1 ? -errno : g->gate_fd;
	g->status_fd = gate_fifo(g, CRDBG_GATE_STATUS);
	if (g->status_fd < 0)
		return g->status_fd == -1 ? -errno : g->status_fd;
	return 0;
}

/* The plugin and its FIFOs, ready. */
static int gate_open(struct crs_criu_gate *g, const char *dir)
{
	int r = gate_make(g, dir);

	return r ? r : gate_equip(g);
}

static void gate_close(struct crs_criu_gate *g)
{
	if (g->gate_fd >= 0)
		close(g->gate_fd);	/* end of file for a waiting plugin */
	if (g->status_fd >= 0)
		close(g->status_fd);
	g->gate_fd = g->status_fd = -1;
	if (!g->dir[0])
		return;
	crs_rmtree(AT_FDCWD, g->dir);
	g->dir[0] = '\0';
}

/*
 * Has criu exited? 1 with its wait status in g->status (g->exited), else
 * 0. block: wait for it. criu is our child, or the lineage keeper's,
 * which reports its exit (a keeper gone: a failure all the same).
 */
static int gate_reap(struct crs_criu_gate *g, bool block)
{
	int r;

	if (g->exited)
		return 1;
	if (g->keeper) {
		r = crs_lineage_wait(g->keeper, g->child, &g->status, block ? -1 : 0);
		if (r < 0)
			g->status = 1 << 8;
	} else {
		while ((r = waitpid(g->child, &g->status, block ? 0 : WNOHANG)) < 0 &&
		       errno == EINTR)
			;
		if (r < 0)
			g->status = 1 << 8;
		r = r != 0;
	}
	g->exited = r != 0;
	return g->exited;
}

/*
 * Wait up to ms milliseconds (< 0: as long as it takes) for the plugin
 * to say word ("ready", "dumped", "held"), or for criu's exit or
 * "failed": 1 when it said word, 0 when criu exited (g->exited,
 * g->status), -EIO when it said "failed", -ETIMEDOUT. Other words are
 * passed over.
 */
static int gate_wait_for(struct crs_criu_gate *g, const char *word, int ms)
{
	struct pollfd p = { .fd = g->status_fd, .events = POLLIN };
	size_t have = strlen(g->said);
	char *nl;
	ssize_t n;
	int waited;

	for (waited = 0; ms < 0 || waited <= ms; waited += 5) {
		while ((nl = strchr(g->said, '\n'))) {
			bool match = (size_t)(nl - g->said) == strlen(word) &&
				     !strncmp(g->said, word, strlen(word));
			bool failed = !strncmp(g->said, CRDBG_GATE_LINE(CRDBG_GATE_FAILED),
					       strlen(CRDBG_GATE_LINE(CRDBG_GATE_FAILED)));

			memmove(g->said, nl + 1, strlen(nl + 1) + 1);
			if (match)
				return 1;
			if (failed)
				return -EIO;
		}
		have = strlen(g->said);
		if (poll(&p, 1, 5) > 0) {
			n = read(g->status_fd, g->said + have, sizeof(g->said) - 1 - have);
			if (n > 0)
				g->said[have + (size_t)n] = '\0';
			if (have + (size_t)(n > 0 ? n : 0) >= sizeof(g->said) - 1)
				g->said[0] = '\0';	/* not the plugin's words */
			continue;
		}
		if (gate_reap(g, false))
			return 0;
	}
	return -ETIMEDOUT;
}

/* "go": CRIU goes on from where the plugin holds it. */
static int gate_go(struct crs_criu_gate *g)
{
	static const char go[] = CRDBG_GATE_LINE(CRDBG_GATE_GO);

	return write(g->gate_fd, go, sizeof(go) - 1) == (ssize_t)sizeof(go) - 1 ? 0 : -errno;
}

#define GATE_TIMEOUT_MS 60000

/* Wait until criu is up and waits at the gate. */
static int wait_at_gate(struct crs_criu_dump *d, char *err, size_t errlen)
{
	struct crs_criu_gate *g = &d->g;
	char log[4200];
	int r = gate_wait_for(g, CRDBG_GATE_READY, GATE_TIMEOUT_MS);

	if (r == 1)
		return 0;
	if (r == -ETIMEDOUT) {
		kill(g->child, SIGKILL);
		crs_criu_dump_cancel(d);
		snprintf(err, errlen, "criu did not start in %d s", GATE_TIMEOUT_MS / 1000);
		return -ETIMEDOUT;
	}
	if (!g->exited)
		while (waitpid(g->child, &g->status, 0) < 0 && errno == EINTR)
			;
	g->child = 0;
	gate_close(g);
	if (WIFEXITED(g->status) && WEXITSTATUS(g->status) == 127) {
		snprintf(err, errlen, "cannot run %s", crs_criu_path());
		return -ENOENT;
	}
	snprintf(log, sizeof(log), "%s/%s", d->dir, CRS_CRIU_DUMP_LOG);
	crs_criu_log_error(log, err, errlen);
	if (strstr(err, " (see "))
		*strstr(err, " (see ") = '\0';
	return -EIO;
}

void crs_criu_dump_cancel(struct crs_criu_dump *d);

int crs_criu_dump_start(pid_t pid, const char *dir, const struct crs_meta *m, bool leave_running,
			const char *pre, struct crs_criu_dump *d, char *err, size_t errlen)
{
	char spid[16], prev[CRS_HANDLE_MAX + 4], gate[sizeof(d->g.dir) + 16];
	char seize[32], preload[sizeof(d->g.dir) + 32];
	char *env[] = { gate, seize, preload, NULL };
	char *argv[24 + CRS_MAX_CRIU_OPTS + 2 * MAX_EXTERNAL_TTYS], **ext;
	const char *tmp = getenv("TMPDIR");
	size_t nr_ext, k;
	int i, r;

	memset(d, 0, sizeof(*d));
	d->pid = pid;
	snprintf(d->dir, sizeof(d->dir), "%s", dir);
	r = gate_open(&d->g, tmp && *tmp ? tmp : "/tmp");
	if (r) {
		snprintf(err, errlen, "cannot prepare criu's start: %s", strerror(-r));
		gate_close(&d->g);
		return r;
	}
	i = dump_args(argv, "dump", pid, spid, dir, CRS_CRIU_DUMP_LOG);
	argv[i++] = "--libdir";
	argv[i++] = d->g.dir;
	if (leave_running)
		argv[i++] = "--leave-running";
	if (m->shell_job)
		argv[i++] = "--shell-job";
	if (m->track_mem)
		argv[i++] = "--track-mem";
	if (m->parent[0]) {
		/* relative to -D: CRIU links "parent" to it, valid wherever the store is */
		snprintf(prev, sizeof(prev), "../%s", m->parent);
		argv[i++] = "--prev-images-dir";
		argv[i++] = prev;
	} else if (pre) {
		argv[i++] = "--prev-images-dir";
		argv[i++] = (char *)pre;
	}
	if (crs_criu_needs_network(pid)) {
		argv[i++] = "--tcp-established";
		argv[i++] = "--network-lock";
		argv[i++] = (char *)network_lock();
	}
	i = add_recorded(argv, i, m);
	/* The tree's terminals whose masters are outside it (tree-stdio.h). */
	if (crs_stdio_external_args(m, &ext, &nr_ext)) {
		snprintf(err, errlen, "out of memory");
		gate_close(&d->g);
		return -ENOMEM;
	}
	for (k = 0; k < nr_ext && k < 2 * MAX_EXTERNAL_TTYS; k++)
		argv[i++] = ext[k];
	argv[i] = NULL;
	snprintf(gate, sizeof(gate), CRDBG_GATE_ENV "=%s", d->g.dir);
	snprintf(seize, sizeof(seize), CRDBG_GATE_SEIZE_ENV "=%d", (int)pid);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/%s", d->g.dir, CRDBG_GATE_PLUGIN);
	d->g.child = spawn_env(argv, -1, env);
	crs_stdio_args_free(ext, nr_ext);
	if (d->g.child < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot run criu: %s", strerror(errno));
		gate_close(&d->g);
		return r;
	}
	return wait_at_gate(d, err, errlen);
}

void crs_criu_dump_cancel(struct crs_criu_dump *d)
{
	if (d->g.child <= 0 || d->g.exited) {
		gate_close(&d->g);
		d->g.child = 0;
		return;
	}
	gate_close(&d->g);	/* the gate fails: CRIU gives up before touching a task */
	while (waitpid(d->g.child, NULL, 0) < 0 && errno == EINTR)
		;
	d->g.child = 0;
}

int crs_criu_dump_go(struct crs_criu_dump *d, char *err, size_t errlen)
{
	if (d->went)
		return 0;
	if (gate_go(&d->g)) {
		snprintf(err, errlen, "cannot let criu go on: %s", strerror(errno));
		crs_criu_dump_cancel(d);
		return -EIO;
	}
	d->went = true;
	return 0;
}

int crs_criu_dump_wait_written(struct crs_criu_dump *d)
{
	int r = gate_wait_for(&d->g, CRDBG_GATE_DUMPED, -1);

	if (r == 1)
		return 1;
	/* it failed: criu lets go of the tree and exits with its error */
	while (!d->g.exited && waitpid(d->g.child, &d->g.status, 0) < 0) {
		if (errno != EINTR) {
			d->g.status = 1 << 8;	/* lost: a failure all the same */
			break;
		}
	}
	d->g.exited = true;
	return 0;
}

int crs_criu_dump_save_tmpfs(struct crs_criu_dump *d, char *err, size_t errlen)
{
	d->tmpfs_saved = true;
	return crs_tmpfs_save(d->pid, d->dir, err, errlen) ? -EIO : 0;
}

int crs_criu_dump_finish(struct crs_criu_dump *d, char *err, size_t errlen)
{
	char log[4200];
	int st = d->g.status, r;

	r = crs_criu_dump_go(d, err, errlen);
	if (r)
		return r;
	while (!d->g.exited && waitpid(d->g.child, &st, 0) < 0) {
		if (errno != EINTR) {
			gate_close(&d->g);
			return -errno;
		}
	}
	d->g.child = 0;
	gate_close(&d->g);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return d->tmpfs_saved ? 0 : crs_criu_dump_save_tmpfs(d, err, errlen);
	snprintf(log, sizeof(log), "%s/%s", d->dir, CRS_CRIU_DUMP_LOG);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		snprintf(err, errlen, "cannot run %s", crs_criu_path());
		return -ENOENT;
	}
	/* The log goes away with the failed checkpoint: keep only its error. */
	crs_criu_log_error(log, err, errlen);
	if (strstr(err, " (see "))
		*strstr(err, " (see ") = '\0';
	return -EIO;
}

/*
 * The same options as the dump's, less the gate, the network lock and
 * --leave-running (a pre-dump always leaves the tree running): CRIU
 * collects the same tree either way.
 */
int crs_criu_pre_dump(pid_t pid, const char *dir, const struct crs_meta *m, const char *log,
		      char *err, size_t errlen)
{
	char *argv[16 + CRS_MAX_CRIU_OPTS + 2 * MAX_EXTERNAL_TTYS], **ext;
	char spid[16], path[PATH_MAX + 64];
	size_t nr_ext, k;
	int i, st, e;
	pid_t child;

	i = dump_args(argv, "pre-dump", pid, spid, dir, log);
	argv[i++] = "--track-mem";
	if (m->shell_job)
		argv[i++] = "--shell-job";
	i = add_recorded(argv, i, m);
	if (crs_stdio_external_args(m, &ext, &nr_ext))
		return crs_fail(err, errlen, -ENOMEM, "out of memory");
	for (k = 0; k < nr_ext && k < 2 * MAX_EXTERNAL_TTYS; k++)
		argv[i++] = ext[k];
	argv[i] = NULL;
	child = spawn(argv, -1);
	e = errno;
	crs_stdio_args_free(ext, nr_ext);
	if (child < 0)
		return crs_fail(err, errlen, -e, "cannot run criu: %s", strerror(e));
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return crs_fail(err, errlen, -errno, "lost criu: %s", strerror(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		return crs_fail(err, errlen, -ENOENT, "cannot run %s", crs_criu_path());
	snprintf(path, sizeof(path), "%s/%s", dir, log);
	crs_criu_log_error(path, err, errlen);
	if (strstr(err, " (see "))
		*strstr(err, " (see ") = '\0';
	return -EIO;
}

/*
 * criu closes every --inherit-fd once it has put it into its fdstore,
 * and a shell job's restore then stores criu's own stdin there as well
 * (its terminal): an inherit of our fd 0 failed that with "Can't send fd
 * 0 into store: Bad file descriptor". So an inherited fd 0-2 goes to
 * criu as a close-on-exec dup above them (dups[i], -1 for none), which
 * the child keeps; criu's stdio stays its own.
 */
static int inherit_above_stdio(char **inherit, size_t nr, int *dups)
{
	for (size_t k = 1; k < nr; k += 2) {
		const char *key = strchr(inherit[k], ':');
		char *moved;
		int fd;

		dups[k / 2] = -1;
		if (!key || sscanf(inherit[k], "fd[%d]", &fd) != 1 || fd > 2)
			continue;
		dups[k / 2] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (dups[k / 2] < 0 || asprintf(&moved, "fd[%d]%s", dups[k / 2], key) < 0)
			return -errno;
		free(inherit[k]);
		inherit[k] = moved;
	}
	return 0;
}

static void close_dups(const int *dups, size_t nr)
{
	for (size_t k = 0; k < nr; k++)
		if (dups[k] >= 0)
			close(dups[k]);
}

/*
 * Add fd as the child's fd target, unless the child has that one
 * already; false when there is no room for it.
 */
static bool add_fd(int *fds, int *targets, size_t *n, int fd, int target)
{
	for (size_t k = 0; k < *n; k++)
		if (targets[k] == target)
			return true;
	if (*n == CRS_LINEAGE_MAX_FDS)
		return false;
	fds[*n] = fd;
	targets[(*n)++] = target;
	return true;
}

/*
 * criu run by the lineage keeper (lineage.h), with the fds it would have
 * had as our child: our stdin, its log as stdout and stderr, the tree's
 * pty, every fd an --inherit-fd names.
 */
static pid_t keeper_spawn(struct crs_criu_restore *rs, char **argv, char **inherit,
			  size_t nr_inherit, int terminal_fd, const char *workdir)
{
	int fds[CRS_LINEAGE_MAX_FDS], targets[CRS_LINEAGE_MAX_FDS], log_fd, fd;
	char log[PATH_MAX], gate[sizeof(rs->g.dir) + 16], preload[sizeof(rs->g.dir) + 64];
	char *env[4] = { NULL };
	size_t n = 0, e = 0;
	bool room;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/%s", workdir, CRS_CRIU_RESTORE_LOG);
	log_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (log_fd < 0)
		return -errno;
	room = add_fd(fds, targets, &n, 0, 0) && add_fd(fds, targets, &n, log_fd, 1) &&
	       add_fd(fds, targets, &n, log_fd, 2) &&
	       (terminal_fd < 0 || add_fd(fds, targets, &n, terminal_fd, terminal_fd));
	for (size_t k = 1; room && k < nr_inherit; k += 2)
		if (sscanf(inherit[k], "fd[%d]", &fd) == 1)
			room = add_fd(fds, targets, &n, fd, fd);
	snprintf(gate, sizeof(gate), CRDBG_GATE_ENV "=%s", rs->g.dir);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/%s", rs->g.dir, CRDBG_GATE_PLUGIN);
	if (rs->g.dir[0]) {
		env[e++] = gate;
		env[e++] = preload;
		env[e++] = CRDBG_GATE_DETACH_ENV "=1";
	}
	pid = room ? crs_lineage_spawn(rs->g.keeper, argv, env, fds, targets, n) : -E2BIG;
	close(log_fd);
	return pid;
}

int crs_criu_restore_gate(struct crs_criu_restore *rs, const char *workdir, char *why,
			  size_t whylen)
{
	struct statvfs vfs;
	int r;

	*rs = (struct crs_criu_restore)CRS_CRIU_RESTORE_INIT;
	if (statvfs(workdir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
		snprintf(why, whylen, "%s is on a noexec file system: CRIU cannot load crdbg's plugin there",
			 workdir);
		return -ENOEXEC;
	}
	r = gate_make(&rs->g, workdir);	/* equipped by prestart() or start() */
	if (r) {
		snprintf(why, whylen, "cannot write crdbg's CRIU plugin into %s: %s", workdir,
			 strerror(-r));
		gate_close(&rs->g);
		return r;
	}
	rs->gated = true;
	return 0;
}

/* "criu VERB -D dir -W workdir -o LOG -vN" into argv; the count. */
static int workdir_args(char **argv, const char *verb, const char *dir, const char *workdir,
			const char *log)
{
	int i = 0;

	argv[i++] = (char *)crs_criu_path();
	argv[i++] = (char *)verb;
	argv[i++] = "-D";
	argv[i++] = (char *)dir;
	argv[i++] = "-W";
	argv[i++] = (char *)workdir;
	argv[i++] = "-o";
	argv[i++] = (char *)log;
	argv[i++] = (char *)criu_verbosity();
	return i;
}

/* "criu restore -D dir -W workdir -o LOG -vN [--libdir GATE]" into argv; the count. */
static int restore_args(char **argv, const struct crs_criu_restore *rs, const char *dir,
			const char *workdir)
{
	int i = workdir_args(argv, "restore", dir, workdir, CRS_CRIU_RESTORE_LOG);

	if (rs->g.dir[0]) {
		argv[i++] = "--libdir";
		argv[i++] = (char *)rs->g.dir;
	}
	return i;
}

/*
 * In the child: exec criu restore with its log as stdout and stderr, the
 * plugin preloaded, keep[0..nr) inherited (every other fd of ours is
 * close-on-exec) and, when config_fd >= 0, its options read from there.
 */
static void exec_restore(char **argv, const struct crs_criu_restore *rs, const char *workdir,
			 const int *keep, size_t nr, int config_fd)
{
	char log[PATH_MAX], gate[sizeof(rs->g.dir) + 16], preload[sizeof(rs->g.dir) + 64];
	char config[64];
	int fd;

	/*
	 * criu keeps our stdin (a shell job's terminal: criu/tty.c takes
	 * only that) and the tree's pty. What criu prints itself
	 * (libnftables' complaint about the lock the dump removed) goes to
	 * its log: our stdout and stderr are what a job's part relays as the
	 * restored ranks' own.
	 */
	snprintf(log, sizeof(log), "%s/%s", workdir, CRS_CRIU_RESTORE_LOG);
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (rs->g.dir[0]) {
		/* preloaded: CRIU's detach is the plugin's (children first) */
		snprintf(gate, sizeof(gate), CRDBG_GATE_ENV "=%s", rs->g.dir);
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/%s", rs->g.dir, CRDBG_GATE_PLUGIN);
		putenv(gate);
		putenv(preload);
		putenv(CRDBG_GATE_DETACH_ENV "=1");
	}
	if (config_fd >= 0) {
		snprintf(config, sizeof(config), "CRIU_CONFIG_FILE=/proc/self/fd/%d", config_fd);
		putenv(config);
		fcntl(config_fd, F_SETFD, 0);
	}
	for (size_t k = 0; k < nr; k++)
		if (keep[k] >= 0)
			fcntl(keep[k], F_SETFD, 0);
	execvp(argv[0], argv);
	_exit(127);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The pipe and copies of our stdio a criu started ahead takes (or took). */
static void early_fds_close(struct crs_criu_restore *rs)
{
	close_fd(&rs->config_fd);
	for (int k = 0; k < 3; k++)
		close_fd(&rs->stdio_dup[k]);
}

/* A criu started ahead that did not take its options: killed (it restored nothing). */
static void early_drop(struct crs_criu_restore *rs)
{
	if (rs->early <= 0)
		return;
	kill(rs->early, SIGKILL);
	while (waitpid(rs->early, NULL, 0) < 0 && errno == EINTR)
		;
	rs->early = 0;
	early_fds_close(rs);
}

int crs_criu_restore_prestart(struct crs_criu_restore *rs, const char *dir, const char *workdir)
{
	char *argv[16];
	int p[2], e;
	pid_t child;

	if (!rs->gated)
		return -EINVAL;
	snprintf(rs->dir, sizeof(rs->dir), "%s", dir);
	argv[restore_args(argv, rs, dir, workdir)] = NULL;
	/* our 0-2 as copies above them: criu's own stdio stays its own */
	for (int k = 0; k < 3; k++)
		rs->stdio_dup[k] = fcntl(k, F_DUPFD_CLOEXEC, 3);
	if (pipe2(p, O_CLOEXEC)) {
		e = -errno;
		early_fds_close(rs);
		return e;
	}
	child = p[0] > 2 ? fork() : -1;
	if (child == 0)
		exec_restore(argv, rs, workdir, rs->stdio_dup, 3, p[0]);
	e = p[0] > 2 ? -errno : -EBADF;
	close(p[0]);
	rs->config_fd = p[1];
	if (child < 0) {
		early_fds_close(rs);
		return e;
	}
	rs->early = child;
	/* while criu execs; it waits for its options before it looks here */
	e = gate_equip(&rs->g);
	if (e) {
		early_drop(rs);
		gate_close(&rs->g);
		rs->gated = false;
	}
	return e;
}

/*
 * Hand the criu started ahead its options: 0 once written (it goes on),
 * else a negative errno (it is still waiting: early_drop()).
 */
static int configure_early(struct crs_criu_restore *rs, char **opts, int nr, char **inherit,
			   size_t nr_inherit)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	char *text;
	size_t len;
	int r;

	r = crs_criu_config_text(opts, (size_t)nr, inherit, nr_inherit, rs->stdio_dup, &text,
				 &len);
	if (r)
		return r;
	/* a criu gone is EPIPE here, not our death */
	sigaction(SIGPIPE, &ign, &old);
	r = crs_write_all(rs->config_fd, text, len);
	sigaction(SIGPIPE, &old, NULL);
	free(text);
	if (r)
		return r;
	early_fds_close(rs);	/* end of file: criu goes on */
	rs->g.child = rs->early;
	rs->early = 0;
	rs->ahead = true;
	return 0;
}

int crs_criu_restore_start(struct crs_criu_restore *rs, const char *dir, const char *workdir,
			   const struct crs_meta *m, bool lazy, int terminal_fd, char *err,
			   size_t errlen)
{
	char **argv, **inherit;
	size_t nr_inherit, k;
	int i, fixed, *dups;
	pid_t child;

	snprintf(rs->dir, sizeof(rs->dir), "%s", dir);
	if (rs->gated) {
		int r = gate_equip(&rs->g);

		if (r) {
			snprintf(err, errlen, "cannot make crdbg's gate for criu in %s: %s",
				 rs->g.dir, strerror(-r));
			early_drop(rs);
			gate_close(&rs->g);
			return r;
		}
	}
	/* What of the tree's stdio crdbg restart stands in for (tree-stdio.h). */
	if (crs_stdio_inherit_args(m, terminal_fd, &inherit, &nr_inherit)) {
		snprintf(err, errlen, "out of memory");
		early_drop(rs);
		gate_close(&rs->g);
		return -ENOMEM;
	}
	argv = calloc(24 + CRS_MAX_CRIU_OPTS + nr_inherit, sizeof(*argv));
	if (!argv) {
		crs_stdio_args_free(inherit, nr_inherit);
		snprintf(err, errlen, "out of memory");
		early_drop(rs);
		gate_close(&rs->g);
		return -ENOMEM;
	}
	i = fixed = restore_args(argv, rs, dir, workdir);
	if (!rs->gated)
		argv[i++] = "--leave-stopped";	/* released by crdbg (resume.c) */
	if (rs->g.keeper) {
		/* the root becomes the keeper's child: criu's parent's */
		argv[i++] = "--restore-detached";
		argv[i++] = "--restore-sibling";
	}
	if (lazy)
		argv[i++] = "--lazy-pages";
	if (m->shell_job)
		argv[i++] = "--shell-job";
	if (images_need_network(dir)) {
		argv[i++] = "--tcp-established";
		argv[i++] = "--network-lock";
		argv[i++] = (char *)network_lock();
	}
	i = add_recorded(argv, i, m);
	if (rs->early > 0 && !rs->g.keeper && terminal_fd < 0 &&
	    !configure_early(rs, argv + fixed, i - fixed, inherit, nr_inherit)) {
		free(argv);
		crs_stdio_args_free(inherit, nr_inherit);
		return 0;
	}
	early_drop(rs);

	dups = calloc(nr_inherit / 2 + 1, sizeof(*dups));
	if (!dups || inherit_above_stdio(inherit, nr_inherit, dups)) {
		int e = errno ? errno : ENOMEM;

		if (dups)
			close_dups(dups, nr_inherit / 2);
		free(dups);
		free(argv);
		crs_stdio_args_free(inherit, nr_inherit);
		snprintf(err, errlen, "cannot hand the tree's stdio to criu: %s", strerror(e));
		gate_close(&rs->g);
		return -e;
	}
	for (k = 0; k < nr_inherit; k++)
		argv[i++] = inherit[k];
	argv[i] = NULL;
	/* held at the gate, criu finds the tmpfs files back after the go */
	if (!rs->gated && crs_tmpfs_put_back(dir, err, errlen))
		child = -EIO;
	else if (rs->g.keeper && (child = keeper_spawn(rs, argv, inherit, nr_inherit, terminal_fd,
							workdir)) < 0)
		snprintf(err, errlen, "the lineage keeper cannot run criu: %s", strerror(-child));
	else if (!rs->g.keeper && (child = fork()) < 0) {
		child = -errno;
		snprintf(err, errlen, "cannot fork criu: %s", strerror(errno));
	}
	if (child == 0) {
		if (terminal_fd >= 0)
			fcntl(terminal_fd, F_SETFD, 0);
		exec_restore(argv, rs, workdir, dups, nr_inherit / 2, -1);
	}
	close_dups(dups, nr_inherit / 2);
	free(dups);
	free(argv);
	crs_stdio_args_free(inherit, nr_inherit);
	if (child < 0)
		gate_close(&rs->g);
	rs->g.child = child > 0 ? child : 0;
	return child < 0 ? child : 0;
}

int crs_criu_restore_go(struct crs_criu_restore *rs, char *err, size_t errlen)
{
	int r;

	if (!rs->gated)
		return 0;
	if (crs_tmpfs_put_back(rs->dir, err, errlen)) {
		crs_criu_restore_cancel(rs);
		return -EIO;
	}
	r = gate_go(&rs->g);
	if (r) {
		snprintf(err, errlen, "cannot let criu restore go on: %s", strerror(-r));
		crs_criu_restore_cancel(rs);
	}
	return r;
}

/*
 * End of file at the gate: the plugin's init fails and CRIU gives up.
 * The plugin stays where it is until criu has exited: a criu that had
 * not yet listed its plugin directory would otherwise find none and
 * restore unchecked.
 */
void crs_criu_restore_cancel(struct crs_criu_restore *rs)
{
	early_drop(rs);
	if (rs->g.gate_fd >= 0)
		close(rs->g.gate_fd);
	rs->g.gate_fd = -1;
	if (rs->g.child > 0)
		gate_reap(&rs->g, true);
	rs->g.child = 0;
	gate_close(&rs->g);
}

/*
 * The plugin said word within ms (0), or criu exited first (-ECHILD, its
 * wait status in *ret_st: "failed" is not said on a restore, criu
 * exits), or -ETIMEDOUT.
 */
static int restore_said(struct crs_criu_restore *rs, const char *word, int ms, int *ret_st)
{
	int r = gate_wait_for(&rs->g, word, ms);

	if (r == 1)
		return 0;
	if (r == -ETIMEDOUT)
		return r;
	gate_reap(&rs->g, true);
	*ret_st = rs->g.status;
	return -ECHILD;
}

int crs_criu_restore_held(struct crs_criu_restore *rs, int ms, int *ret_st)
{
	return restore_said(rs, CRDBG_GATE_HELD, ms, ret_st);
}

int crs_criu_restore_release(struct crs_criu_restore *rs, const char *orders, size_t len,
			      char *err, size_t errlen)
{
	char path[sizeof(rs->g.dir) + 16];
	int r;

	snprintf(path, sizeof(path), "%s/" CRDBG_GATE_ORDERS, rs->g.dir);
	r = write_file(path, orders, len);
	if (!r)
		r = gate_go(&rs->g);
	if (r)
		snprintf(err, errlen, "cannot hand crdbg's orders to criu restore: %s",
			 strerror(-r));
	return r;
}

int crs_criu_restore_released(struct crs_criu_restore *rs, int ms, int *ret_st)
{
	return restore_said(rs, CRDBG_GATE_RELEASED, ms, ret_st);
}

void crs_criu_restore_report(struct crs_criu_restore *rs, crs_criu_report_fn *fn, void *arg)
{
	char path[sizeof(rs->g.dir) + 16], line[128];
	unsigned long long v;
	int pid, tid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/" CRDBG_GATE_REPORT, rs->g.dir);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, CRDBG_GATE_REPORT_PC, &pid, &tid, &v) == 3)
			fn(arg, pid, tid, v, 0);
		else if (sscanf(line, CRDBG_GATE_REPORT_FAIL, &pid, &tid, &v) == 3)
			fn(arg, pid, tid, 0, v ? (int)v : EIO);
	}
	fclose(f);
}

bool crs_criu_restore_exited(struct crs_criu_restore *rs, int *st)
{
	if (rs->g.child <= 0 || !gate_reap(&rs->g, false))
		return false;
	*st = rs->g.status;
	return true;
}

void crs_criu_restore_close(struct crs_criu_restore *rs)
{
	early_drop(rs);
	gate_close(&rs->g);
}


pid_t crs_criu_lazy_pages_start(const char *dir, const char *workdir, int ps_fd, char *err,
				size_t errlen)
{
	char fdstr[16], psstr[16], log[4200], c;
	char *argv[20];
	int fds[2], i;
	ssize_t n;
	pid_t child;

	if (pipe2(fds, O_CLOEXEC)) {
		snprintf(err, errlen, "cannot make a pipe: %s", strerror(errno));
		return -errno;
	}
	snprintf(fdstr, sizeof(fdstr), "%d", fds[1]);
	i = workdir_args(argv, "lazy-pages", dir, workdir, CRS_CRIU_LAZY_LOG);
	argv[i++] = "--status-fd";
	argv[i++] = fdstr;
	if (ps_fd >= 0) {
		snprintf(psstr, sizeof(psstr), "%d", ps_fd);
		argv[i++] = "--page-server";
		argv[i++] = "--ps-socket";
		argv[i++] = psstr;
	}
	argv[i] = NULL;
	child = fork();
	if (child < 0) {
		snprintf(err, errlen, "cannot fork criu: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (child == 0) {
		int null = open("/dev/null", O_RDWR);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		fcntl(fds[1], F_SETFD, 0);	/* the status fd goes to criu */
		if (ps_fd >= 0)
			fcntl(ps_fd, F_SETFD, 0);	/* and the page server's socket */
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	/* one byte once it listens; end of file if it failed */
	do
		n = read(fds[0], &c, 1);
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == 1)
		return child;
	waitpid(child, NULL, 0);
	snprintf(log, sizeof(log), "%s/%s", workdir, CRS_CRIU_LAZY_LOG);
	crs_criu_log_error(log, err, errlen);
	return -EIO;
}
