// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg restart: start CRIU held at crdbg's plugin (criu.h), verify the
 * checkpoint meanwhile, let CRIU restore the tree (under the node's
 * lineage keeper, which has the root's old parent's pid and session,
 * lineage.h; else criu stays its parent, crdbg the subreaper above) up
 * to where every restored thread is stopped under CRIU's ptrace, and
 * once the memory pages are known good (and a job's parts all restored),
 * have the plugin push the CRS hook on every thread there, so that
 * CRIU's own detach releases the tree as after a raw restore
 * (release_by_criu()). Without the plugin (lazy restores, a noexec
 * $TMPDIR) CRIU leaves the tree stopped and crdbg pushes the hook with
 * its freeze backend and releases it (resume.h). Then wait for the
 * program like a shell would. With --debug the hook parks every thread
 * and each designated thread prints "MPIR debug info) <host>:<pid>" on
 * the program's stderr; crdbg prints the same line on its own
 * (announce_parked()).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "ghost-lock.h"
#include "held.h"
#include "lineage.h"
#include "listen-ports.h"
#include "page-check.h"
#include "page-server.h"
#include "resume.h"
#include "criu.h"
#include "criu-creds.h"
#include "proc.h"
#include "restart-check.h"
#include "stages.h"
#include "store.h"
#include "tree-stdio.h"
#include "shell-job.h"
#include "tty-relay.h"
#include "wfiles.h"
#include <crdbg/job.h>
#include <crdbg/mpir-checkpoint.h>

#define RESTORE_TIMEOUT_S 120
/* How long a released process may take to park every thread (TCG, load). */
#define PARK_TIMEOUT_S 120

static int criu_failed(int st, int *ret_st, const char *log, char *err, size_t errlen)
{
	char why[512];

	*ret_st = st;
	if (WIFEXITED(st) && WEXITSTATUS(st) == CRS_LINEAGE_NO_GROUP)
		return crs_fail(err, errlen, -ESRCH,
				"criu restore did not start: the tree's process group did not come back on this node in %d s (its leader's part did not restore it)",
				CRS_LINEAGE_GROUP_WAIT_S);
	crs_criu_log_error(log, why, sizeof(why));
	return crs_fail(err, errlen, -EIO, "criu restore failed: %s", why);
}

/*
 * Until CRIU has left the restored tree stopped (--leave-stopped: a
 * restore without crdbg's plugin), looked at every 20 ms (each look reads
 * /proc files of every thread while criu restore and the page check share
 * the CPUs).
 */
static int wait_restored(const struct crs_meta *m, struct crs_criu_restore *rs,
			 const char *log, time_t deadline, int *ret_st, char *err, size_t errlen)
{
	struct timespec nap = { .tv_nsec = 20 * 1000 * 1000 };
	pid_t criu = rs->g.child;
	int st;

	for (;;) {
		/* a keeper's criu is detached: it ends, with 0, once it let go */
		if (crs_criu_restore_exited(rs, &st) && (!rs->g.keeper || st))
			return criu_failed(st, ret_st, log, err, errlen);
		if (crs_tree_held(m, NULL, CRS_HELD_AFTER_RESTORE))
			return 0;
		if (time(NULL) > deadline) {
			kill(criu, SIGKILL);
			return crs_fail(err, errlen, -ETIMEDOUT,
				    "the restored tree did not come up in %d s (see %s)",
				    RESTORE_TIMEOUT_S, log);
		}
		nanosleep(&nap, NULL);
	}
}

/*
 * Each of o->agents ("PID,PID", crs_restart_opts) in turn: its index in
 * m's processes, -1 for a pid that is none of them (or the root, which
 * cannot be one), -2 at the end; *pos walks the list.
 */
static long next_agent(const char *agents, const char **pos, const struct crs_meta *m)
{
	const char *at = *pos ? *pos : agents;
	char *end;
	long pid;

	if (!agents || !*at)
		return -2;
	pid = strtol(at, &end, 10);
	*pos = *end == ',' ? end + 1 : end;
	for (size_t i = 0; pid > 0 && pid != m->root && i < m->nr_procs; i++)
		if (m->procs[i].pid == pid)
			return (long)i;
	return -1;
}

static int agents_check(const struct crs_restart_opts *o, const struct crs_meta *m, char *err,
			size_t errlen)
{
	const char *pos = NULL, *before;
	long i;

	for (before = o->agents; (i = next_agent(o->agents, &pos, m)) != -2; before = pos)
		if (i < 0)
			return crs_fail(err, errlen, -EINVAL,
					"checkpoint %s: agent %.*s is no process of its tree but the root",
					o->handle, (int)strcspn(before, ","), before);
	return 0;
}

/* The agents stay in a group stop at the release: whoever asked ends them. */
static void keep_agents_stopped(const struct crs_restart_opts *o, struct crs_meta *m)
{
	const char *pos = NULL;
	long i;

	while ((i = next_agent(o->agents, &pos, m)) != -2)
		if (i >= 0)
			m->procs[i].stopped = true;
}

/* Kill every process of the restored tree (a lazy restore lost its pages). */
static void kill_tree(const struct crs_meta *m)
{
	for (size_t i = 0; i < m->nr_procs; i++)
		kill(m->procs[i].pid, SIGKILL);
}

static bool failed(int st)
{
	return !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

/*
 * The reason crdbg's page server killed the tree (a chunk of a pages
 * image did not match, or could not be read), when it did: on a lazy
 * restart it serves, it is the one error to report.
 */
static int served_failure(struct crs_page_server *ps, char *err, size_t errlen)
{
	return ps->m ? crs_page_server_failed(ps, err, errlen) : 0;
}

/*
 * The lazy-pages server (wait status st) failed while the tree lived:
 * kill the tree, say so in one line.
 */
static int lazy_lost(const struct crs_meta *m, struct crs_page_server *ps, int st,
		     const char *work, char *err, size_t errlen)
{
	char log[PATH_MAX + 32], why[512];
	int r;

	kill_tree(m);
	r = served_failure(ps, err, errlen);
	if (r)
		return r;
	snprintf(log, sizeof(log), "%s/%s", work, CRS_CRIU_LAZY_LOG);
	crs_criu_log_error(log, why, sizeof(why));
	if (WIFSIGNALED(st))
		snprintf(why, sizeof(why), "killed by signal %d", WTERMSIG(st));
	return crs_fail(err, errlen, -EIO,
			"lazy restore: criu lazy-pages failed (%s); the restored processes were killed so that none runs on without its memory",
			why);
}

/*
 * The release failed (a process vanished under it) on a lazy restore:
 * if the server died, that is why (a thread ran on a page it could no
 * longer serve), and it is the one error to report. Returns 1 then.
 */
static int lazy_lost_at_release(const struct crs_meta *m, struct crs_page_server *ps,
				pid_t *lazy, const char *work, char *err, size_t errlen)
{
	int st;

	if (served_failure(ps, err, errlen))
		return 1;
	if (*lazy <= 0 || waitpid(*lazy, &st, WNOHANG) != *lazy)
		return 0;
	*lazy = 0;
	if (!failed(st))
		return 0;
	lazy_lost(m, ps, st, work, err, errlen);
	return 1;
}

/*
 * Wait for criu restore (which waits for the root) and, on a lazy
 * restore, for the lazy-pages server. If the server fails while the tree
 * lives, some page of it can no longer be served: the tree is killed
 * rather than let run on (the kernel hands a faulting thread a zero page
 * once the server's userfaultfd is gone).
 */
static int wait_done(const struct crs_meta *m, struct crs_page_server *ps, pid_t criu,
		     pid_t lazy, const char *work, struct crs_lineage *lin, int *ret_st, char *err,
		     size_t errlen)
{
	int st, r = 0;
	pid_t p;

	/* with a keeper (never lazy), the root is its child: it reports the end */
	if (lin->fd >= 0) {
		r = crs_lineage_wait(lin, m->root, ret_st, -1);
		return r == 1 ? 0 : crs_fail(err, errlen, r ? r : -EIO,
					     "lost the lineage keeper of pid %d's parent", m->root);
	}

	while (criu > 0 || lazy > 0) {
		p = waitpid(-1, &st, 0);
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0)
			break;
		if (p == criu) {
			*ret_st = st;
			criu = 0;
		} else if (p == lazy) {
			lazy = 0;
			if (failed(st) && criu > 0)
				r = lazy_lost(m, ps, st, work, err, errlen);
		}
	}
	/* lazy-pages may end well once every process it served is gone */
	return r ? r : served_failure(ps, err, errlen);
}

/*
 * What a restart checks before CRIU starts. Always: the metadata, every
 * file's presence and size (a truncated or missing image), the chain's
 * links, and the digest of every file that says what CRIU does on the
 * system (files, sockets, mappings, pids, tmpfs copies). The memory pages
 * (pages-*.img, most of the bytes) only ever land in the restored tree's
 * own memory, which does not run before crdbg releases it: their digests
 * are checked beside `criu restore` (start_page_check()) and the release
 * waits for them (check_pages_before_release()). Not when a kill of the
 * restored tree would be seen outside it (a TCP peer, an external
 * socket: crs_criu_restore_reaches_out()), nor with CRDBG_VERIFY=first:
 * then every digest is checked here. *pages_later says which.
 */
static int verify_before_restore(const char *root, const char *handle, const char *dir,
				 const struct crs_meta *m, bool *pages_later, char *err,
				 size_t errlen)
{
	const char *env = getenv("CRDBG_VERIFY");

	int r;

	*pages_later = !(env && !strcmp(env, "first")) && !crs_criu_restore_reaches_out(dir, m);
	r = crs_store_verify_chain_part(root, handle, m,
					*pages_later ? CRS_VERIFY_STRUCTURE : CRS_VERIFY_ALL,
					err, errlen);
	/* the images verified: now whether they give the owner's tree back as theirs */
	return r ? r : crs_criu_creds_owner_check(dir, m, err, errlen);
}

/*
 * Check the pages' digests on a thread of their own (the children crdbg
 * forks from now on only exec). Without a thread, check them now.
 */
static int start_page_check(struct crs_page_check *pc, bool pages_later, const char *root,
			    const char *handle, const struct crs_meta *m, char *err,
			    size_t errlen)
{
	if (!pages_later || crs_page_check_start(pc, root, handle, m) == 0)
		return 0;
	return crs_store_verify_chain_part(root, handle, m, CRS_VERIFY_PAGES, err, errlen);
}

/* Reap whatever of the killed tree (and criu) comes back to us, for a while. */
static void reap_killed(const struct crs_meta *m, pid_t criu)
{
	struct timespec nap = { .tv_nsec = 10 * 1000 * 1000 };
	time_t deadline = time(NULL) + 10;
	bool alive;
	size_t i;

	do {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		alive = criu > 0 && kill(criu, 0) == 0;
		for (i = 0; i < m->nr_procs && !alive; i++)
			alive = crs_task_state(m->procs[i].pid, m->procs[i].pid) &&
				crs_task_state(m->procs[i].pid, m->procs[i].pid) != 'Z';
		if (alive)
			nanosleep(&nap, NULL);
	} while (alive && time(NULL) < deadline);
}

/*
 * The restored tree is held (frozen or stopped): it may run only once
 * its pages are known good. On a mismatch it is killed, with criu, before
 * any of its own instructions ran, and the restart fails in one line
 * naming the file.
 */
static int check_pages_before_release(struct crs_page_check *pc, struct crs_page_server *ps,
				      const struct crs_meta *m, pid_t criu, pid_t lazy, char *err,
				      size_t errlen)
{
	char why[1024];
	int r = ps->m ? crs_page_server_wait_eager(ps, why, sizeof(why)) :
			crs_page_check_join(pc, why, sizeof(why));

	if (!r)
		return 0;
	kill_tree(m);
	kill(criu, SIGKILL);
	if (lazy > 0)
		kill(lazy, SIGKILL);
	reap_killed(m, criu);
	if (ps->m)	/* its line says when it was found */
		return crs_fail(err, errlen, r, "%s", why);
	return crs_fail(err, errlen, r,
			"%s (found while criu restored it: the restored processes were killed before running any instruction)",
			why);
}

/*
 * Close the gate before criu holds the tree and wait for criu to end: the
 * plugin kills every restored process where it would hold them (or CRIU,
 * failing first, kills what it restored). No pid is signalled by crdbg,
 * which may not be the tree's yet.
 */
static void refuse_before_hold(struct crs_criu_restore *rs, const struct crs_meta *m)
{
	crs_criu_restore_cancel(rs);
	reap_killed(m, 0);
}

/*
 * The same before criu holds the tree, for a restart that hands the
 * plugin its orders ahead (release_ahead()): a mismatch refuses the tree
 * before any of it ran an instruction of its own (refuse_before_hold()).
 */
static int check_pages_ahead(struct crs_page_check *pc, struct crs_criu_restore *rs,
			     const struct crs_meta *m, char *err, size_t errlen)
{
	char why[1024];
	int r = crs_page_check_join(pc, why, sizeof(why));

	if (!r)
		return 0;
	refuse_before_hold(rs, m);
	return crs_fail(err, errlen, r,
			"%s (found while criu restored it: the restored processes were killed before running any instruction)",
			why);
}

/*
 * Nothing but the pages' digests stands between a lone gated restore and
 * its release (no job's coordinator holds it): the orders go to the
 * plugin as soon as the pages passed, before criu holds the tree, which
 * then goes on with no round trip through crdbg.
 */
static bool release_ahead(const struct crs_restart_opts *o, const struct crs_criu_restore *rs)
{
	return rs->gated && !o->hold && !o->lazy;
}

/*
 * The restart failed on its way: the page check still reads m, wait for
 * it. A corrupt page explains a failure best (CRIU may have choked on it):
 * its line replaces the failure's.
 */
static void page_check_after_failure(struct crs_page_check *pc, int r, char *err,
				     size_t errlen)
{
	char why[1024];

	if (crs_page_check_join(pc, why, sizeof(why)) && r)
		snprintf(err, errlen, "%s", why);
}

/* A process of the tree uses libcrdbg (a job's ranks, not its mpirun). */
static bool any_mpir(const struct crs_meta *m)
{
	for (size_t i = 0; i < m->nr_procs; i++)
		if (m->procs[i].mpir)
			return true;
	return false;
}

/* fd 2 of pid is the file our stderr is (a reader would see its line twice). */
static bool same_stderr(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/fd/2", (int)pid);
	return !stat(path, &a) && !fstat(STDERR_FILENO, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* Every thread of p waits in the waitpoint (libcrdbg counts them). */
static bool all_parked(const struct crs_proc *p)
{
	struct crdbg_rt_info info;
	pid_t *tids;
	size_t n;

	if (crs_proc_tids(p->pid, &tids, &n))
		return false;
	free(tids);
	return !crs_proc_read(p->pid, p->rt_info, &info, sizeof(info)) &&
	       info.magic == CRDBG_RT_MAGIC && info.parked >= 0 && (size_t)info.parked >= n;
}

/*
 * --debug: tell whoever runs crdbg where to attach, as each restored
 * libcrdbg process is ready (every thread parked: the moment the process
 * prints its own line). Its own line goes to its restored stderr, which
 * may be a file or a terminal nobody reads any more; a job-wide restart
 * collects ours. A process whose stderr is ours is not announced twice.
 */
static void announce_parked(const struct crs_meta *m, FILE *out, FILE *log)
{
	struct timespec nap = { .tv_nsec = 20 * 1000 * 1000 };
	time_t deadline = time(NULL) + PARK_TIMEOUT_S;
	bool *done = calloc(m->nr_procs, sizeof(*done));
	char host[256] = "";
	size_t i, left = 0;

	if (!done)
		return;
	gethostname(host, sizeof(host) - 1);
	for (i = 0; i < m->nr_procs; i++) {
		done[i] = !m->procs[i].mpir || !m->procs[i].rt_info || same_stderr(m->procs[i].pid) ||
			  crs_hook_arg_of(m, i, CRDBG_HOOK_DEBUG_SET) != CRDBG_HOOK_DEBUG_SET;
		left += !done[i];
	}
	while (left) {
		for (i = 0; i < m->nr_procs; i++) {
			if (!done[i] && kill(m->procs[i].pid, 0) && errno == ESRCH) {
				done[i] = true;		/* gone (killed): nothing to announce */
				left--;
				continue;
			}
			if (done[i] || !all_parked(&m->procs[i]))
				continue;
			fprintf(out, CRS_DEBUG_INFO_PREFIX "%s:%d\n", host, (int)m->procs[i].pid);
			fflush(out);
			done[i] = true;
			left--;
		}
		if (!left)
			break;
		if (time(NULL) > deadline) {
			for (i = 0; i < m->nr_procs; i++)
				if (!done[i] && log)
					fprintf(log, "crdbg: pid %d: its threads did not all reach the waitpoint in %d s: no \"" CRS_DEBUG_INFO_PREFIX "\" line\n",
						(int)m->procs[i].pid, PARK_TIMEOUT_S);
			break;
		}
		nanosleep(&nap, NULL);
	}
	free(done);
}

struct report_ctx {
	const struct crs_meta *m;
	const struct crs_restart_opts *o;
};

/* A line of the plugin's report: a hooked thread's pc (-v), or a warning. */
static void report_line(void *arg, pid_t pid, pid_t tid, uint64_t pc, int err)
{
	struct report_ctx *c = arg;

	if (!err && c->o->verbose && c->o->log)
		crs_show_pc(c->m, pid, tid, pc, "restart", c->o->log);
	if (err && c->o->log)
		fprintf(c->o->log, "crdbg: pid %d tid %d: released without the CRS hook: %s\n",
			(int)pid, (int)tid, strerror(err));
}

/*
 * A gated restore: crdbg's plugin pushes the hook and CRIU's own detach
 * lets the tree go (criu.h). Hand it crdbg's orders: it carries them out
 * once it holds the tree, now or when it comes to it.
 */
static int hand_orders(const struct crs_meta *m, struct crs_criu_restore *rs, uint64_t arg,
		       const struct crs_restart_opts *o, char *err, size_t errlen)
{
	char *orders = NULL;
	size_t len = 0;
	int r;

	r = crs_release_orders(m, arg, o->log, &orders, &len);
	if (r)
		return crs_fail(err, errlen, r, "out of memory");
	r = crs_criu_restore_release(rs, orders, len, err, errlen);
	free(orders);
	return r;
}

/*
 * The orders handed: 0 once CRIU let the tree go (a thread an order
 * failed on runs on without the hook: a warning, as crs_resume() gives),
 * or a negative errno when it did not.
 */
static int await_release(const struct crs_meta *m, struct crs_criu_restore *rs,
			 const struct crs_restart_opts *o, const char *log, int *ret_st, char *err,
			 size_t errlen)
{
	struct report_ctx c = { .m = m, .o = o };
	int r = crs_criu_restore_released(rs, RESTORE_TIMEOUT_S * 1000, ret_st);

	if (r == -ECHILD)
		return criu_failed(*ret_st, ret_st, log, err, errlen);
	if (r)
		return crs_fail(err, errlen, r, "criu restore did not let the tree go in %d s",
				RESTORE_TIMEOUT_S);
	crs_criu_restore_report(rs, report_line, &c);
	return 0;
}

/*
 * The checks of crs_restart() that need no image: 0, or the one error.
 * Every pid of the tree must be free, or criu restore could not give it back.
 */
static int restart_allowed(const struct crs_restart_opts *o, const struct crs_meta *m,
			   enum freeze_backend_kind *kind, char *err, size_t errlen)
{
	time_t deadline = time(NULL) + CRS_RESTART_PID_WAIT_S;
	struct freeze_backend *b;
	char msg[512];
	size_t i;
	int r;

	r = freeze_backend_open(o->backend, &b, msg, sizeof(msg));
	if (r)
		return crs_fail(err, errlen, r, "cannot open the freeze backend: %s", msg);
	*kind = freeze_backend_kind(b);
	freeze_backend_close(b);
	for (i = 0; i < m->nr_procs; i++) {
		r = crs_pid_wait_free(m->procs[i].pid, deadline, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

/*
 * Everything that must hold before CRIU may restore a task: the images
 * verified (verify_before_restore()), the pages' check started, the
 * program usable with --debug, the job's go-ahead for a part. A gated
 * criu (crs_criu_restore_start()) starts up meanwhile.
 */
static int verify_while_criu_starts(const struct crs_restart_opts *o, const char *root,
				    const char *dir, struct crs_meta *m,
				    struct crs_page_check *pc, struct crs_page_server *ps,
				    bool *pages_later, bool *served, char *err, size_t errlen)
{
	int r = verify_before_restore(root, o->handle, dir, m, pages_later, err, errlen);

	/* A lazy restart checks its pages chunk by chunk as they are served. */
	*served = o->lazy && *pages_later && crs_page_server_applies(m);
	if (!r && *served)
		r = crs_page_server_start(ps, dir, m, err, errlen);
	else if (!r)
		r = start_page_check(pc, *pages_later, root, o->handle, m, err, errlen);
	if (r)
		return r;
	if (o->debug && !any_mpir(m))
		return crs_fail(err, errlen, -EOPNOTSUPP,
				"checkpoint %s was taken from a program without libcrdbg: --debug needs the MPIR protocol",
				o->handle);
	/* every file the program wrote can be put back, or nothing goes on */
	r = crs_wfiles_check(dir, o->handle, m, err, errlen);
	/* and every address its sockets are bound to is this host's */
	if (!r)
		r = crs_listen_addrs_check(dir, o->handle, err, errlen);
	if (r)
		return r;
	if (o->hold && o->hold(o->hold_arg, m, CRS_HOLD_VERIFIED))
		return crs_fail(err, errlen, -ECANCELED, "the job's restart was called off");
	/* the tree's pids are free: its sockets are closing, its files no longer written */
	r = crs_listen_ports_wait(dir, o->handle, time(NULL) + CRS_RESTART_PORT_WAIT_S, err,
				  errlen);
	return r ? r : crs_wfiles_restore(dir, o->handle, m, o->log, err, errlen);
}

/*
 * The root's parent, session and group outside the tree (lineage.h):
 * criu runs under the node's keeper, which has them. Where they cannot
 * be had (the parent's pid in use, ...) criu is the root's parent as
 * before, and -v says why. Lazy restarts keep the old way: their page
 * server and criu lazy-pages are ours. Before any thread starts: the
 * keeper is a fork of this process.
 */
static void keep_lineage(const struct crs_restart_opts *o, const struct crs_meta *m,
			 struct crs_lineage *lin)
{
	struct crs_lineage_want w;
	char why[256];

	if (!crs_lineage_want(m, o->node_roots, &w, why, sizeof(why)) ||
	    crs_lineage_open(lin, &w, why, sizeof(why))) {
		if (o->verbose && o->log)
			fprintf(o->log, "crdbg: restart: pid %d's parent, group and session outside the tree are not kept (%s): criu is its parent\n",
				m->root, why);
		return;
	}
	if (o->verbose && o->log && w.lost_pgid)
		fprintf(o->log, "crdbg: restart: pid %d comes back as a child of pid %d, in session %d; its group %d is led by no tree restored on this node: it comes back in one criu leads\n",
			m->root, w.ppid, w.sid ? w.sid : m->root, w.lost_pgid);
	else if (o->verbose && o->log)
		fprintf(o->log, "crdbg: restart: pid %d comes back as a child of pid %d, in session %d and group %d\n",
			m->root, w.ppid, w.sid ? w.sid : m->root, w.pgid ? w.pgid : m->root);
}

/* A new work directory for criu under $TMPDIR (or /tmp): 0, or a negative errno and err. */
static int make_work_dir(char *work, size_t len, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	const char *base = tmp && *tmp ? tmp : "/tmp";
	int r;

	/* mkdtemp(3) replaces the six X with random characters */
	snprintf(work, len, "%s/crdbg-restore-XXXXXX", base);
	if (mkdtemp(work))
		return 0;
	r = crs_fail(err, errlen, -errno, "cannot create a work directory in %s: %s", base,
		     strerror(errno));
	work[0] = '\0';
	return r;
}

/*
 * A lone restart starts criu before it reads the checkpoint: criu's exec
 * and its libraries (90-130 ms in the test guest) overlap crdbg's reading
 * of the metadata, its checks and the lineage; criu takes the options
 * these give once they are known (criu.h). A job's part does not: it runs
 * criu under its node's keeper as a rule, which only the metadata tells.
 * Where criu cannot start ahead, it starts as before.
 */
static void start_criu_early(struct crs_criu_restore *rs, const char *dir, char *work,
			     size_t len)
{
	char msg[256];

	if (make_work_dir(work, len, msg, sizeof(msg)))
		return;
	if (!crs_criu_restore_gate(rs, work, msg, sizeof(msg)))
		crs_criu_restore_prestart(rs, dir, work);
}

/* ---- the pipeline ---- */

/* A restart's stages up to the release, in their order (rst_stages[]). */
enum rst_stage {
	RST_READ,		/* the metadata read, its pids free, the lineage and gate ready */
	RST_VERIFY_FIRST,	/* without the gate: verified before criu starts */
	RST_CRIU_START,		/* criu (and criu lazy-pages) started */
	RST_VERIFY,		/* with the gate: verified while criu starts, criu let go */
	RST_RESTORE,		/* the tree restored, held (frozen or stopped) */
	RST_PAGES,		/* the pages' digests known good */
	RST_RELEASE,		/* the job's go-ahead, the CRS hook pushed, the tree released */
	RST_NR_STAGES,
};

/*
 * A restart on its way. Each stage adds to it what it did; the undo
 * (rst_undo()) and the clean-up after every restart (rst_free()) read
 * it.
 */
struct rst {
	const struct crs_restart_opts *o;
	const char *root;		/* the store's */
	char *err;
	size_t errlen;
	char msg[512];
	struct crs_meta m;
	enum freeze_backend_kind kind;
	char dir[PATH_MAX];		/* the checkpoint's */
	char work[PATH_MAX];		/* criu's work directory, "" until made */
	char log[PATH_MAX + 32];	/* criu restore's log in it */
	struct crs_criu_restore rs;
	struct crs_page_check pc;
	struct crs_page_server ps;
	struct crs_tty_relay tty;
	struct crs_lineage lin;
	pid_t criu;
	pid_t lazy;			/* criu lazy-pages, until reaped or given up */
	uint64_t arg;			/* the CRS hook's */
	bool refused;			/* the checkpoint refused: nothing restored */
	bool pages_later;		/* the pages' digests checked beside criu restore */
	bool served;			/* a lazy restart's pages served by crdbg */
	bool ahead;			/* the orders handed before criu held the tree */
	bool released;
	bool terminal_stdin;		/* a shell job's terminal put on our fd 0 */
	double t_pages;			/* the pages' digests known good, ahead */
	int st;				/* criu's (or the root's) wait status */
	int ghost_lock;			/* the host's turn for ghost files (ghost-lock.h), or -1 */
	struct crs_timing t;
};

/*
 * The checkpoint read and what needs no image checked. A lone restart
 * starts criu before it reads the checkpoint (start_criu_early()); a
 * job's part once its lineage is known.
 */
static int rst_read(void *state)
{
	struct rst *s = state;
	const struct crs_restart_opts *o = s->o;
	int r;

	if (o->expect_meta_sha) {
		uint8_t sha[32];

		r = crs_store_meta_digest(s->root, o->handle, sha, s->err, s->errlen);
		if (r)
			return r;
		if (memcmp(sha, o->expect_meta_sha, sizeof(sha)))
			return crs_fail(s->err, s->errlen, -EBADMSG,
					"checkpoint %s is not the part its job recorded: its metadata changed",
					o->handle);
	}
	if (!crs_store_path(s->root, o->handle, s->dir, sizeof(s->dir)) && !o->node_roots &&
	    !o->lazy)
		start_criu_early(&s->rs, s->dir, s->work, sizeof(s->work));
	r = crs_store_load(s->root, o->handle, &s->m, s->err, s->errlen);
	if (!r && o->for_owner && (!s->m.has_owner || s->m.owner_uid != o->owner_uid))
		r = crs_fail(s->err, s->errlen, -EPERM, "checkpoint %s is not yours (uid %u): refused",
			     o->handle, (unsigned int)o->owner_uid);
	if (!r)
		r = restart_allowed(o, &s->m, &s->kind, s->err, s->errlen);
	if (!r)
		r = agents_check(o, &s->m, s->err, s->errlen);
	if (!r)
		r = crs_shell_job_terminal(o, &s->m, &s->terminal_stdin, s->err, s->errlen);
	if (r) {
		s->refused = true;
		return r;
	}
	if (!s->work[0]) {
		r = make_work_dir(s->work, sizeof(s->work), s->err, s->errlen);
		if (r)
			return r;
	}
	snprintf(s->log, sizeof(s->log), "%s/%s", s->work, CRS_CRIU_RESTORE_LOG);
	/*
	 * Not lazy: criu starts up now, held at crdbg's plugin until the
	 * checkpoint is verified; with crdbg.ko the plugin also holds the
	 * restored tree before CRIU lets it go, for the freeze. A lazy
	 * restart starts criu once verified (its lazy-pages server needs the
	 * pages' check), and without the plugin (noexec $TMPDIR) so does
	 * every restart; the tree is then restored stopped, as with ptrace.
	 */
	/* the stand-ins it forks close what they inherit (a criu started ahead's gate) */
	if (!o->lazy)
		keep_lineage(o, &s->m, &s->lin);
	if (!o->lazy && !s->rs.gated &&
	    crs_criu_restore_gate(&s->rs, s->work, s->msg, sizeof(s->msg)) && o->log)
		fprintf(o->log, "crdbg: %s: criu starts once the checkpoint is verified and restores the tree stopped\n",
			s->msg);
	if (s->lin.fd >= 0)
		s->rs.g.keeper = &s->lin;	/* criu.h: criu runs under the keeper */
	return 0;
}

/* Without the gate, criu starts only once the checkpoint is verified. */
static int rst_verify_first(void *state)
{
	struct rst *s = state;
	int r;

	if (s->rs.gated)
		return 0;
	r = verify_while_criu_starts(s->o, s->root, s->dir, &s->m, &s->pc, &s->ps,
				     &s->pages_later, &s->served, s->err, s->errlen);
	s->refused = r != 0;
	return r;
}

static int rst_criu_start(void *state)
{
	struct rst *s = state;
	const struct crs_restart_opts *o = s->o;
	int terminal = -1, r;

	/* Orphans of the restored tree come to us (or the keeper), not to init. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (o->lazy) {
		s->lazy = crs_criu_lazy_pages_start(s->dir, s->work,
						    s->served ? crs_page_server_peer(&s->ps) : -1,
						    s->msg, sizeof(s->msg));
		crs_page_server_peer_close(&s->ps);
		if (s->lazy < 0) {
			r = crs_fail(s->err, s->errlen, s->lazy, "cannot start criu lazy-pages: %s",
				     s->msg);
			s->lazy = 0;
			return r;
		}
	}
	if (s->lazy > 0 && o->verbose && o->log)
		fprintf(o->log, "crdbg: lazy restore: pages on demand from criu lazy-pages (pid %d)%s\n",
			(int)s->lazy,
			s->served ? ", served by crdbg, each chunk checked before its pages go" : "");
	/* A terminal of its own for a tree that had one (tty-relay.h). */
	if (crs_stdio_needs_terminal(&s->m) && o->has_terminal) {
		terminal = o->terminal_fd;
	} else if (crs_stdio_needs_terminal(&s->m)) {
		r = crs_tty_relay_open(&s->tty, o->relay_stdin ? 0 : -1, 1, s->err, s->errlen);
		if (r)
			return r;
		/* the owner's tree gets a terminal of the owner's, never one of root's */
		if (s->m.has_owner && s->m.owner_uid && !geteuid() &&
		    fchown(s->tty.slave, s->m.owner_uid, (gid_t)-1))
			return crs_fail(s->err, s->errlen, -errno,
					"cannot give the restored processes their terminal: %s",
					strerror(errno));
		terminal = s->tty.slave;
	} else if (s->terminal_stdin) {
		terminal = 0;	/* not the stdin a criu started ahead has */
	}
	/* past the job's barrier: a gated criu takes its turn at its go */
	r = s->rs.gated ? 0 : crs_ghost_lock(s->dir, &s->ghost_lock, s->err, s->errlen);
	if (r)
		return r;
	r = crs_criu_restore_start(&s->rs, s->dir, s->work, &s->m, o->lazy, terminal, s->err,
				   s->errlen);
	if (r)
		return r;
	s->criu = s->rs.g.child;
	if (o->verbose && o->log && s->rs.ahead)
		fprintf(o->log, "crdbg: restart: criu (pid %d) started before the checkpoint was read, its options given once known\n",
			(int)s->criu);
	return 0;
}

/* With the gate, the checkpoint is verified while criu starts up, then criu goes on. */
static int rst_verify(void *state)
{
	struct rst *s = state;
	int r;

	if (!s->rs.gated)
		return 0;
	r = verify_while_criu_starts(s->o, s->root, s->dir, &s->m, &s->pc, &s->ps,
				     &s->pages_later, &s->served, s->err, s->errlen);
	/* every part of a job verified (the barrier is behind us): the turn, then go */
	if (!r)
		r = crs_ghost_lock(s->dir, &s->ghost_lock, s->err, s->errlen);
	if (r) {
		crs_criu_restore_cancel(&s->rs);	/* it gives up: nothing restored */
		s->refused = true;
		return r;
	}
	return crs_criu_restore_go(&s->rs, s->err, s->errlen);	/* cancels it on failure */
}

/* Until the restored tree is held: the orders handed first when nothing else waits. */
static int rst_restore(void *state)
{
	struct rst *s = state;
	const struct crs_restart_opts *o = s->o;
	time_t deadline;
	int r;

	s->arg = CRDBG_CRS_STATE_RESTART | (o->debug ? CRDBG_HOOK_DEBUG_SET : CRDBG_HOOK_DEBUG_CLEAR);
	if (release_ahead(o, &s->rs)) {
		r = check_pages_ahead(&s->pc, &s->rs, &s->m, s->err, s->errlen);
		if (r)
			return r;
		s->t_pages = crs_clock_ms();
		r = hand_orders(&s->m, &s->rs, s->arg, o, s->err, s->errlen);
		if (r) {
			refuse_before_hold(&s->rs, &s->m);
			return r;
		}
		s->ahead = true;
	}
	deadline = time(NULL) + RESTORE_TIMEOUT_S;
	if (!s->rs.gated) {
		r = wait_restored(&s->m, &s->rs, s->log, deadline, &s->st, s->err, s->errlen);
		crs_ghost_unlock(&s->ghost_lock);	/* held: every ghost opened and gone */
		return r;
	}
	r = crs_criu_restore_held(&s->rs, RESTORE_TIMEOUT_S * 1000, &s->st);
	crs_ghost_unlock(&s->ghost_lock);
	if (r == -ECHILD)
		return criu_failed(s->st, &s->st, s->log, s->err, s->errlen);
	if (r) {
		kill(s->criu, SIGKILL);
		return crs_fail(s->err, s->errlen, r,
				"criu restore did not finish restoring in %d s (see %s)",
				RESTORE_TIMEOUT_S, s->log);
	}
	return 0;
}

/* The pages are checked before the job's part says it is restored. */
static int rst_pages(void *state)
{
	struct rst *s = state;
	int r;

	if (s->ahead)
		return 0;
	r = check_pages_before_release(&s->pc, &s->ps, &s->m, s->criu, s->lazy, s->err,
				       s->errlen);
	if (r)
		s->lazy = 0;	/* killed with the tree and criu */
	return r;
}

/* The job's go-ahead, then the tree runs, each thread through the CRS hook. */
static int rst_release(void *state)
{
	struct rst *s = state;
	const struct crs_restart_opts *o = s->o;
	int r = 0;

	if (o->hold && o->hold(o->hold_arg, &s->m, CRS_HOLD_RESTORED)) {
		r = crs_fail(s->err, s->errlen, -ECANCELED,
			     "the job's restart was called off: the restored processes were killed before they ran");
		kill_tree(&s->m);
		if (s->rs.gated)
			crs_criu_restore_cancel(&s->rs);	/* the plugin kills what is left */
		wait_done(&s->m, &s->ps, s->criu, s->lazy, s->work, &s->lin, &s->st, s->msg,
			  sizeof(s->msg));
		s->lazy = 0;
		return r;
	}

	s->released = true;
	keep_agents_stopped(o, &s->m);
	if (s->rs.gated) {
		if (!s->ahead)
			r = hand_orders(&s->m, &s->rs, s->arg, o, s->err, s->errlen);
		if (!r)
			r = await_release(&s->m, &s->rs, o, s->log, &s->st, s->err, s->errlen);
		if (r) {
			kill_tree(&s->m);
			return r;
		}
	} else {
		r = crs_resume(&s->m, s->kind, s->arg, "restart", o->log, o->verbose, s->msg,
			       sizeof(s->msg));
		if (r && lazy_lost_at_release(&s->m, &s->ps, &s->lazy, s->work, s->err, s->errlen)) {
			kill_tree(&s->m);
			wait_done(&s->m, &s->ps, s->criu, 0, s->work, &s->lin, &s->st, s->msg,
				  sizeof(s->msg));
			s->lazy = 0;
			return -EIO;
		}
		if (r && o->log)
			fprintf(o->log, "crdbg: warning: %s\n", s->msg);
	}
	if (o->debug)
		announce_parked(&s->m, stderr, o->log);
	return 0;
}

static const struct crs_stage rst_stages[RST_NR_STAGES] = {
	[RST_READ]		= { "read and checks", rst_read },
	[RST_VERIFY_FIRST]	= { "verify before criu", rst_verify_first },
	[RST_CRIU_START]	= { "criu start", rst_criu_start },
	[RST_VERIFY]		= { "verify while criu starts", rst_verify },
	[RST_RESTORE]		= { "criu restore", rst_restore },
	[RST_PAGES]		= { "wait for the page digests", rst_pages },
	[RST_RELEASE]		= { "hook and release", rst_release },
};

/* -v: where the restart's time went, up to the release. */
static void rst_print_timing(struct rst *s)
{
	const struct crs_restart_opts *o = s->o;
	const struct crs_timing *t = &s->t;
	struct timespec now;
	double ago;

	if (s->pages_later)
		fprintf(o->log, "crdbg: restart: the memory pages' digests were checked beside criu restore, done %.0f ms after the start\n",
			s->pc.done_ms ? s->pc.done_ms - t->start :
			s->ps.eager_ms ? s->ps.eager_ms - t->start :
			t->end[RST_VERIFY] - t->start);
	/* ahead, the pages usually passed before criu held the tree */
	if (s->ahead)
		fprintf(o->log, "crdbg: restart: crdbg's orders handed to criu %.0f ms after the start, before it held the tree\n",
			s->t_pages - t->start);
	crs_timing_print(t, o->log, "restart released after");
	/* For a benchmark's own clock: what lies before and after these. */
	clock_gettime(CLOCK_REALTIME, &now);
	ago = (crs_clock_ms() - t->start) / 1e3;
	fprintf(o->log, "crdbg: restart began at %.6f, released at %.6f (CLOCK_REALTIME)\n",
		now.tv_sec + now.tv_nsec / 1e9 - ago, now.tv_sec + now.tv_nsec / 1e9);
}

/* criu waits for the root and exits with its status: the program's, for us. */
static int rst_wait(struct rst *s, int *ret_status)
{
	int r;

	crs_criu_restore_close(&s->rs);
	r = wait_done(&s->m, &s->ps, s->criu, s->lazy, s->work, &s->lin, &s->st, s->err,
		      s->errlen);
	s->lazy = 0;
	crs_page_server_stop(&s->ps);	/* lazy-pages is gone: so is its session */
	if (s->o->verbose && s->o->log && s->served)
		fprintf(s->o->log, "crdbg: lazy restore: crdbg served %" PRIu64 " pages and checked %" PRIu64 " chunks\n",
			s->ps.served_pages, s->ps.chunks_checked);
	if (r)
		return r;
	*ret_status = s->st;
	if (WIFEXITED(s->st) && WEXITSTATUS(s->st) == 0)
		crs_rmtree(AT_FDCWD, s->work);
	return 0;
}

/* What a failure leaves that the clean-up (rst_free()) does not take back. */
static void rst_undo(struct rst *s)
{
	if (s->lazy > 0) {
		kill(s->lazy, SIGKILL);
		waitpid(s->lazy, NULL, 0);
	}
	s->lazy = 0;
	if (s->refused) {
		/* refused before anything was restored: nothing of this restart stays */
		crs_criu_restore_close(&s->rs);	/* a criu started ahead is killed first */
		if (s->work[0])
			crs_rmtree(AT_FDCWD, s->work);
	}
}

/* After every restart, r its result. */
static void rst_free(struct rst *s, int r)
{
	/* everything the tree wrote on its terminal is out before we end */
	crs_tty_relay_finish(&s->tty);
	page_check_after_failure(&s->pc, r, s->err, s->errlen);
	/*
	 * A chunk the page server refused explains a failure best too: when
	 * the copy behind reaches it before the release, the tree it killed
	 * fails criu restore.
	 */
	if (r && s->served)
		served_failure(&s->ps, s->err, s->errlen);
	crs_page_server_stop(&s->ps);
	crs_criu_restore_close(&s->rs);
	/*
	 * Made by us: a job's part waits until the node's trees end (a Slurm
	 * step's processes go with its first task); a lone restart ends with
	 * its root, the keeper reaping what the tree left running.
	 */
	crs_lineage_close(&s->lin, s->released && s->o->node_roots);
	crs_ghost_unlock(&s->ghost_lock);
	crs_meta_free(&s->m);
}

int crs_restart(const struct crs_restart_opts *o, int *ret_status, char *err, size_t errlen)
{
	struct rst s = {
		.o = o, .root = crs_store_root(o->store), .err = err, .errlen = errlen,
		.kind = FREEZE_BACKEND_AUTO, .rs = CRS_CRIU_RESTORE_INIT,
		.tty = CRS_TTY_RELAY_INIT, .lin = CRS_LINEAGE_INIT, .ghost_lock = -1,
	};
	int r;

	crs_meta_init(&s.m);
	crs_timing_start(&s.t, rst_stages, RST_NR_STAGES);
	r = crs_stages_run(&s.t, &s);
	if (!r && o->verbose && o->log)
		rst_print_timing(&s);
	if (!r)
		r = rst_wait(&s, ret_status);
	if (r)
		rst_undo(&s);
	if (r && !s.refused && s.work[0])
		crs_criu_keep_restore_log(s.root, o->handle, s.work, err, errlen);
	rst_free(&s, r);
	return r;
}
