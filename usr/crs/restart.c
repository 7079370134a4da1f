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
#include "held.h"
#include "lineage.h"
#include "page-check.h"
#include "page-server.h"
#include "resume.h"
#include "criu.h"
#include "proc.h"
#include "store.h"
#include "tree-stdio.h"
#include "tty-relay.h"
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

	*pages_later = !(env && !strcmp(env, "first")) && !crs_criu_restore_reaches_out(dir, m);
	return crs_store_verify_chain_part(root, handle, m,
					   *pages_later ? CRS_VERIFY_STRUCTURE : CRS_VERIFY_ALL,
					   err, errlen);
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
		done[i] = !m->procs[i].mpir || !m->procs[i].rt_info || same_stderr(m->procs[i].pid);
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
	struct freeze_backend *b;
	char msg[512];
	size_t i;
	int r;

	r = freeze_backend_open(o->backend, &b, msg, sizeof(msg));
	if (r)
		return crs_fail(err, errlen, r, "cannot open the freeze backend: %s", msg);
	*kind = freeze_backend_kind(b);
	freeze_backend_close(b);
	for (i = 0; i < m->nr_procs; i++)
		if (kill(m->procs[i].pid, 0) == 0 || errno == EPERM)
			return crs_fail(err, errlen, -EBUSY,
					"pid %d is in use: the checkpointed process (or another) still runs; stop it first",
					m->procs[i].pid);
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
	if (o->hold && o->hold(o->hold_arg, m, CRS_HOLD_VERIFIED))
		return crs_fail(err, errlen, -ECANCELED, "the job's restart was called off");
	return 0;
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

int crs_restart(const struct crs_restart_opts *o, int *ret_status, char *err, size_t errlen)
{
	const char *root = crs_store_root(o->store);
	struct crs_criu_restore rs = CRS_CRIU_RESTORE_INIT;
	struct crs_page_check pc = { .started = false };
	struct crs_page_server ps = { .m = NULL };
	struct crs_tty_relay tty = CRS_TTY_RELAY_INIT;
	struct crs_lineage lin = CRS_LINEAGE_INIT;
	int terminal = -1;
	time_t deadline;
	enum freeze_backend_kind kind = FREEZE_BACKEND_AUTO;
	char dir[PATH_MAX], work[PATH_MAX] = "", log[PATH_MAX + 32], msg[512];
	struct crs_meta m;
	uint64_t arg;
	pid_t criu = 0, lazy = 0;
	double t0 = crs_clock_ms(), t_forked, t_verified, t_restored, t_pages = 0, t_go;
	bool pages_later = false, served = false, released = false, ahead = false;
	int r, st = 0;

	if (o->expect_meta_sha) {
		uint8_t sha[32];

		crs_meta_init(&m);
		r = crs_job_part_digest(root, o->handle, sha, err, errlen);
		if (r)
			return r;
		if (memcmp(sha, o->expect_meta_sha, sizeof(sha)))
			return crs_fail(err, errlen, -EBADMSG,
					"checkpoint %s is not the part its job recorded: its metadata changed",
					o->handle);
	}
	/*
	 * A lone restart starts criu before it reads the checkpoint
	 * (start_criu_early()); a job's part once its lineage is known.
	 */
	if (!crs_store_path(root, o->handle, dir, sizeof(dir)) && !o->node_roots && !o->lazy)
		start_criu_early(&rs, dir, work, sizeof(work));
	crs_meta_init(&m);
	r = crs_store_load(root, o->handle, &m, err, errlen);
	if (r)
		goto out_refused;
	r = restart_allowed(o, &m, &kind, err, errlen);
	if (r)
		goto out_refused;
	if (!work[0]) {
		r = make_work_dir(work, sizeof(work), err, errlen);
		if (r)
			goto out;
	}
	snprintf(log, sizeof(log), "%s/%s", work, CRS_CRIU_RESTORE_LOG);
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
		keep_lineage(o, &m, &lin);
	if (!o->lazy && !rs.gated && crs_criu_restore_gate(&rs, work, msg, sizeof(msg)) &&
	    o->log)
		fprintf(o->log, "crdbg: %s: criu starts once the checkpoint is verified and restores the tree stopped\n",
			msg);
	if (lin.fd >= 0)
		rs.g.keeper = &lin;	/* criu.h: criu runs under the keeper */
	if (!rs.gated) {
		r = verify_while_criu_starts(o, root, dir, &m, &pc, &ps, &pages_later, &served,
					     err, errlen);
		if (r)
			goto out_refused;
	}
	/* Orphans of the restored tree come to us (or the keeper), not to init. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (o->lazy) {
		lazy = crs_criu_lazy_pages_start(dir, work,
						 served ? crs_page_server_peer(&ps) : -1, msg,
						 sizeof(msg));
		crs_page_server_peer_close(&ps);
		if (lazy < 0) {
			r = crs_fail(err, errlen, lazy, "cannot start criu lazy-pages: %s", msg);
			goto out;
		}
	}
	if (lazy > 0 && o->verbose && o->log)
		fprintf(o->log, "crdbg: lazy restore: pages on demand from criu lazy-pages (pid %d)%s\n",
			(int)lazy, served ? ", served by crdbg, each chunk checked before its pages go" :
			"");
	/* A terminal of its own for a tree that had one (tty-relay.h). */
	if (crs_stdio_needs_terminal(&m) && o->has_terminal) {
		terminal = o->terminal_fd;
	} else if (crs_stdio_needs_terminal(&m)) {
		r = crs_tty_relay_open(&tty, o->relay_stdin ? 0 : -1, 1, err, errlen);
		if (r)
			goto out_lazy;
		terminal = tty.slave;
	}
	r = crs_criu_restore_start(&rs, dir, work, &m, o->lazy, terminal, err, errlen);
	if (r)
		goto out_lazy;
	t_forked = crs_clock_ms();
	criu = rs.g.child;
	if (o->verbose && o->log && rs.ahead)
		fprintf(o->log, "crdbg: restart: criu (pid %d) started before the checkpoint was read, its options given once known\n",
			(int)criu);
	if (rs.gated) {
		r = verify_while_criu_starts(o, root, dir, &m, &pc, &ps, &pages_later, &served,
					     err, errlen);
		if (r) {
			crs_criu_restore_cancel(&rs);	/* it gives up: nothing restored */
			goto out_refused;
		}
		r = crs_criu_restore_go(&rs, err, errlen);	/* cancels it on failure */
		if (r)
			goto out;
	}
	t_verified = crs_clock_ms();
	arg = CRDBG_CRS_STATE_RESTART | (o->debug ? CRDBG_HOOK_DEBUG_SET : CRDBG_HOOK_DEBUG_CLEAR);
	if (release_ahead(o, &rs)) {
		r = check_pages_ahead(&pc, &rs, &m, err, errlen);
		if (r)
			goto out;
		t_pages = crs_clock_ms();
		r = hand_orders(&m, &rs, arg, o, err, errlen);
		if (r) {
			refuse_before_hold(&rs, &m);
			goto out;
		}
		ahead = true;
	}
	deadline = time(NULL) + RESTORE_TIMEOUT_S;
	if (rs.gated) {
		r = crs_criu_restore_held(&rs, RESTORE_TIMEOUT_S * 1000, &st);
		if (r == -ECHILD) {
			r = criu_failed(st, &st, log, err, errlen);
			goto out_lazy;
		}
		if (r) {
			kill(criu, SIGKILL);
			r = crs_fail(err, errlen, r, "criu restore did not finish restoring in %d s (see %s)",
				     RESTORE_TIMEOUT_S, log);
			goto out_lazy;
		}
	} else {
		r = wait_restored(&m, &rs, log, deadline, &st, err, errlen);
		if (r)
			goto out_lazy;
	}
	t_restored = crs_clock_ms();
	/* the pages are checked before the job's part says it is restored */
	r = ahead ? 0 : check_pages_before_release(&pc, &ps, &m, criu, lazy, err, errlen);
	if (r)
		goto out;
	if (!ahead)
		t_pages = crs_clock_ms();
	if (o->hold && o->hold(o->hold_arg, &m, CRS_HOLD_RESTORED)) {
		r = crs_fail(err, errlen, -ECANCELED,
			     "the job's restart was called off: the restored processes were killed before they ran");
		kill_tree(&m);
		if (rs.gated)
			crs_criu_restore_cancel(&rs);	/* the plugin kills what is left */
		wait_done(&m, &ps, criu, lazy, work, &lin, &st, msg, sizeof(msg));
		goto out;
	}

	released = true;
	if (rs.gated) {
		if (!ahead)
			r = hand_orders(&m, &rs, arg, o, err, errlen);
		if (!r)
			r = await_release(&m, &rs, o, log, &st, err, errlen);
		if (r) {
			kill_tree(&m);
			goto out;
		}
	} else {
		r = crs_resume(&m, kind, arg, "restart", o->log, o->verbose, msg, sizeof(msg));
		if (r && lazy_lost_at_release(&m, &ps, &lazy, work, err, errlen)) {
			kill_tree(&m);
			wait_done(&m, &ps, criu, 0, work, &lin, &st, msg, sizeof(msg));
			r = -EIO;
			goto out;
		}
		if (r && o->log)
			fprintf(o->log, "crdbg: warning: %s\n", msg);
	}
	if (o->debug)
		announce_parked(&m, stderr, o->log);
	if (o->verbose && o->log && pages_later)
		fprintf(o->log, "crdbg: restart: the memory pages' digests were checked beside criu restore, done %.0f ms after the start\n",
			pc.done_ms ? pc.done_ms - t0 : ps.eager_ms ? ps.eager_ms - t0 : t_verified - t0);
	/* ahead, the pages usually passed before criu held the tree */
	t_go = t_pages > t_restored ? t_pages : t_restored;
	if (o->verbose && o->log && ahead)
		fprintf(o->log, "crdbg: restart: crdbg's orders handed to criu %.0f ms after the start, before it held the tree\n",
			t_pages - t0);
	if (o->verbose && o->log)
		fprintf(o->log, "crdbg: restart released after %.0f ms: criu started at %.0f, verify %.0f, criu restore %.0f, wait for the page digests %.0f, hook and release %.0f\n",
			crs_clock_ms() - t0, t_forked - t0, t_verified - t0, t_restored - t_verified,
			t_go - t_restored, crs_clock_ms() - t_go);
	if (o->verbose && o->log) {
		struct timespec now;
		double ago;

		/* For a benchmark's own clock: what lies before and after these. */
		clock_gettime(CLOCK_REALTIME, &now);
		ago = (crs_clock_ms() - t0) / 1e3;
		fprintf(o->log, "crdbg: restart began at %.6f, released at %.6f (CLOCK_REALTIME)\n",
			now.tv_sec + now.tv_nsec / 1e9 - ago, now.tv_sec + now.tv_nsec / 1e9);
	}
	crs_criu_restore_close(&rs);

	/* criu waits for the root and exits with its status. */
	r = wait_done(&m, &ps, criu, lazy, work, &lin, &st, err, errlen);
	crs_page_server_stop(&ps);	/* lazy-pages is gone: so is its session */
	if (o->verbose && o->log && served)
		fprintf(o->log, "crdbg: lazy restore: crdbg served %" PRIu64 " pages and checked %" PRIu64 " chunks\n",
			ps.served_pages, ps.chunks_checked);
	if (r)
		goto out;
	*ret_status = st;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		crs_rmtree(AT_FDCWD, work);
	goto out;
out_refused:
	/* refused before anything was restored: nothing of this restart stays */
	crs_criu_restore_close(&rs);	/* a criu started ahead is killed first */
	if (work[0])
		crs_rmtree(AT_FDCWD, work);
	goto out;
out_lazy:
	if (lazy > 0) {
		kill(lazy, SIGKILL);
		waitpid(lazy, NULL, 0);
	}
out:
	/* everything the tree wrote on its terminal is out before we end */
	crs_tty_relay_finish(&tty);
	page_check_after_failure(&pc, r, err, errlen);
	/*
	 * A chunk the page server refused explains a failure best too: when
	 * the copy behind reaches it before the release, the tree it killed
	 * fails criu restore.
	 */
	if (r && served)
		served_failure(&ps, err, errlen);
	crs_page_server_stop(&ps);
	crs_criu_restore_close(&rs);
	crs_lineage_close(&lin, released);	/* made by us: until the node's trees end */
	crs_meta_free(&m);
	return r;
}
