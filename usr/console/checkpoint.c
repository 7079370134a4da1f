// SPDX-License-Identifier: GPL-2.0
/*
 * Console commands "checkpoint" and "restart [HANDLE]": the MPIR
 * checkpoint protocol (Documentation/checkpoint.md) for a job whose ranks
 * run with libcrdbg. Every rank's gdb stays; only its inferior changes.
 * All ranks go through each step together.
 *
 * Every checkpoint is a job checkpoint (<crdbg/job.h>) taken through the
 * job API over the session's servers (parts-sdm.h): the console runs the
 * job-level sequence, each part runs on the server of its first rank.
 * The parts are one per rank (crdbg debug -n N jobs, and MPIR jobs whose
 * ranks are not in the launcher's tree: srun, or ranks on other nodes),
 * or one for the whole job: mpirun's tree when every rank runs under it
 * on this host. Nothing here runs crdbg or reads what a program printed
 * but the ranks' own "MPIR debug info)" markers (<crdbg/mpir-checkpoint.h>).
 *
 * checkpoint
 *  1. park: in every rank, the server pushes the UAPI hook frame (return_via USER,
 *     state CRDBG_CRS_STATE_PARK) on every thread but the designated one,
 *     closes MPIR_checkpoint_debug_gate, sets MPIR_debug_with_checkpoint
 *     and detaches. Each thread enters libcrdbg's trampoline, which keeps
 *     every register (x87/SSE/AVX included) on its own stack, and waits
 *     in MPIR_checkpoint_debugger_breakpoint(). Nothing about the parked
 *     threads lives in gdb or here: the image is self-contained.
 *  2. the job checkpoint, --debug (continue path): the CRS hook pushed on
 *     top of a parked thread returns at once; the designated thread
 *     prints "MPIR debug info) host:pid" on the rank's stderr when every
 *     thread waits, which reaches us as the rank's output (or mpirun's).
 *  3. on that line, the rank's gdb attaches to the pid it names and
 *     releases: opens the gate and runs each thread alone (scheduler
 *     locking) to a temporary breakpoint at the pc under its outermost
 *     hook frame, where the trampoline returns with every register.
 *
 * restart: the ranks' processes are killed and the job restart restores
 * every part on its node, on its server, which keeps it (and relays what
 * the restored ranks write where a launcher's pipes were). Each part
 * says "MPIR debug info)" for every process it parked; one wait per part
 * on its server (dbg_parts_wait_parked()) answers when all of them are,
 * and the same attach and release as step 3 follows.
 *
 * For mpirun's tree our gdb lets go of mpirun (mpir.c) after step 1 and
 * takes it again before step 3; its ranks' lines come through mpirun's
 * output and are matched to ranks by pid. restart kills mpirun, then the
 * ranks, and attaches to the restored mpirun the same way.
 *
 * Step 1, and finding each thread's pc for step 3, are the "hook"
 * command of each rank's server (usr/server/hook-park.c, in C over
 * GDB/MI): one command for the whole set of ranks, and the frame is the
 * UAPI's, the one crdbg.ko and the ptrace backend push.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <crdbg/crs.h>
#include <crdbg/dbgproto.h>
#include <crdbg/job.h>
#include <crdbg/mpir-checkpoint.h>
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "checkpoint.h"
#include "mpir.h"
#include "parts-sdm.h"
#include "session.h"

#define CK_WAIT_S	180

/* Per-rank state; the "MPIR debug info)" pid comes from the rank's output or its part. */
struct ck_rank {
	int pid;
	pid_t info_pid;		/* parked there, for its gdb to attach to */
	bool attached;		/* its gdb attached at the last restart */
};

struct dbg_ckpt {
	struct dbg_session *s;
	struct dbg_mpir *mpir;	/* an MPIR job, or NULL */
	bool parts;		/* a part per rank; else one part, mpirun's tree */
	const char *launch;	/* starts a part on another node, or NULL */
	char *adopted;		/* crdbg debug --restart: its launch template */
	bool adopt;		/* ...and the job is ours to end */
	bool first_attach;	/* the ranks' gdbs have no program yet */
	struct ck_rank *rank;
	uint32_t n;
	struct dbg_parts *sdm_parts;	/* the job's parts, on the servers */
	char last[4096];	/* handle of the last checkpoint */
};

/* Whether rank id runs on this host (its pid is one of ours). */
static bool rank_here(const struct dbg_ckpt *ck, sdm_id id)
{
	const char *node = ck->s->host ? ck->s->host[id] : NULL;
	char here[256] = "";

	if (!node || !*node || !strcmp(node, "localhost"))
		return true;
	gethostname(here, sizeof(here) - 1);
	return !strcmp(node, here);
}

/*
 * How the job is checkpointed: a part per rank (crdbg debug -n N jobs;
 * MPIR jobs whose ranks are not in the launcher's tree: srun, or ranks
 * on other nodes), or one part, the launcher's tree (mpirun or hydra
 * with every rank on this host).
 */
static void choose_mode(struct dbg_ckpt *ck)
{
	ck->launch = ck->adopted;
	ck->parts = !ck->mpir || dbg_mpir_ranks_apart(ck->mpir, &ck->launch);
}

/*
 * Whether a rank's "MPIR debug info)" line naming pid is the rank's own:
 * the rank's children that have libcrdbg too (an MPI singleton's orted)
 * print theirs on the rank's stdout. A pid other than the rank's is the
 * rank only when the rank's pid is unknown or, on this node, gone.
 */
static bool rank_line_is_ranks(const struct dbg_ckpt *ck, sdm_id id, pid_t pid)
{
	pid_t was = ck->rank[id].pid;

	if (pid == was || was <= 0)
		return true;
	return rank_here(ck, id) && kill(was, 0) && errno == ESRCH;
}

/*
 * Every complete output line of a rank, or of mpirun (the ranks of an
 * MPIR job write through it): note the pids of "MPIR debug info)" lines,
 * which are ours (one per rank; the console says it per node).
 */
static bool on_line(void *priv, uint32_t id, const char *line, size_t len)
{
	struct dbg_ckpt *ck = priv;
	char buf[512], host[256];
	pid_t pid;

	if ((id >= ck->n && id != DBG_MPIRUN) || len >= sizeof(buf))
		return false;
	memcpy(buf, line, len);
	buf[len] = 0;
	if (crs_parse_debug_info(buf, host, sizeof(host), &pid))
		return false;
	if (id != DBG_MPIRUN) {
		if (rank_line_is_ranks(ck, id, pid))
			ck->rank[id].info_pid = pid;
		return true;
	}
	/*
	 * Through mpirun, unlabelled: the rank whose process this is
	 * (restored: same pid), on that node (pids are the node's own).
	 */
	for (uint32_t i = 0; i < ck->n; i++)
		if (ck->rank[i].pid == pid &&
		    (!ck->s->host || !ck->s->host[i] || !strcmp(ck->s->host[i], host)))
			ck->rank[i].info_pid = pid;
	return true;
}

/*
 * One command to a set of ranks. Every rank must answer without an
 * error; the first reply text (malloc'd) goes to *text when text is set.
 */
static int ranks_cmd(struct dbg_session *s, const struct sdm_idset *set, char **text,
		     const struct dbgp_cmd *cmd)
{
	struct sdm_fe_result r = { 0 };
	char what[DBGP_CMD_MAX + 1];
	size_t got = 0;
	int rc = -EIO;

	if (dbgp_encode(what, sizeof(what), cmd) < 0)
		return -EINVAL;
	if (dbg_send(s, set, cmd, dbg_load_timeout(s), &r) == 0) {
		rc = 0;
		for (unsigned int i = 0; i < r.nev; i++) {
			bool error;
			const char *t = dbg_event_text(s, r.ev[i].type, r.ev[i].src,
						       (const char *)r.ev[i].payload, &error);
			char *ranks = sdm_set_to_string(r.ev[i].src);

			got += sdm_set_size(r.ev[i].src);
			if (error) {
				dbg_error(s, "[%s] %.40s: %s", ranks ? ranks : "?", what, t);
				rc = -EIO;
			} else if (text && !*text) {
				*text = strdup(t);
			}
			free(ranks);
		}
		if (got < sdm_set_size(set))
			rc = -EIO;
	}
	sdm_fe_result_free(&r);
	return rc;
}

/* A gdb console command (printf-like) to a set of ranks, as ranks_cmd. */
static int ranks_cli(struct dbg_session *s, const struct sdm_idset *set, char **text,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int ranks_cli(struct dbg_session *s, const struct sdm_idset *set, char **text,
		     const char *fmt, ...)
{
	struct dbgp_cmd cmd = { .verb = DBGP_CLI };
	char *cli;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&cli, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -ENOMEM;
	cmd.arg = cli;
	rc = ranks_cmd(s, set, text, &cmd);
	free(cli);
	return rc;
}

static struct sdm_idset *one_rank(sdm_id id)
{
	struct sdm_idset *set = sdm_set_new();

	if (set && sdm_set_add_element(set, id) < 0) {
		sdm_set_free(set);
		return NULL;
	}
	return set;
}

/* The server's "hook" command (park ARG, unpark, plan, release), as ranks_cmd. */
static int ranks_hook(struct dbg_session *s, const struct sdm_idset *set, char **text,
		      enum dbgp_hook_op op, uint64_t park_arg)
{
	struct dbgp_hook_cmd hook = { .op = op, .arg = park_arg };
	char arg[64];
	struct dbgp_cmd cmd = { .verb = DBGP_HOOK, .arg = arg };

	if (dbgp_hook_format(arg, sizeof(arg), &hook) < 0)
		return -EINVAL;
	return ranks_cmd(s, set, text, &cmd);
}

static int rank_pid(struct dbg_session *s, sdm_id id)
{
	struct dbgp_cmd status = { .verb = DBGP_STATUS };
	struct sdm_idset *set = one_rank(id);
	struct dbgp_status st;
	char *t = NULL;
	int pid = 0;

	if (set && !ranks_cmd(s, set, &t, &status) && t && !dbgp_parse_status(t, &st))
		pid = st.pid;
	free(t);
	sdm_set_free(set);
	return pid;
}

static bool all_stopped(struct dbg_session *s, struct sdm_idset *live)
{
	sdm_id id;

	sdm_set_for_each(id, live) {
		if (s->state[id] != DBG_STOPPED) {
			dbg_error(s, "rank %u is not stopped: interrupt it first", id);
			return false;
		}
	}
	return true;
}

/* ---- waiting for parked ranks ---- */

/* The ranks of set with no process parked for them yet (NULL: none, or ENOMEM). */
static struct sdm_idset *unparked(const struct dbg_ckpt *ck, const struct sdm_idset *set)
{
	struct sdm_idset *left = sdm_set_new();
	sdm_id id;

	sdm_set_for_each(id, set)
		if (left && !ck->rank[id].info_pid && sdm_set_add_element(left, id) < 0) {
			sdm_set_free(left);
			return NULL;
		}
	if (left && sdm_set_is_empty(left)) {
		sdm_set_free(left);
		return NULL;
	}
	return left;
}

/* One line for the ranks of set still not parked, "" or why. */
static void say_unparked(struct dbg_ckpt *ck, const struct sdm_idset *set, const char *what,
			 const char *why)
{
	struct sdm_idset *left = unparked(ck, set);
	char *l = left ? sdm_set_to_string(left) : NULL;

	if (left)
		dbg_error(ck->s, "%s: rank [%s]: no \"" CRS_DEBUG_INFO_PREFIX "\" line in %d s%s%s",
			  what, l ? l : "?", CK_WAIT_S, *why ? ": " : "", why);
	free(l);
	sdm_set_free(left);
}

/*
 * The parked ranks of set, one line per node: their markers are not
 * shown (one a rank is a thousand lines at a thousand ranks).
 */
static void say_parked(struct dbg_ckpt *ck, const struct sdm_idset *set, const char *what)
{
	struct dbg_session *s = ck->s;
	struct sdm_idset *todo = sdm_set_copy(set);
	sdm_id id, first;

	while (todo && sdm_set_find_next(todo, 0, &first)) {
		const char *node = s->host && s->host[first] ? s->host[first] : "this host";
		struct sdm_idset *here = sdm_set_new();
		char *l;

		sdm_set_for_each(id, todo) {
			const char *n = s->host && s->host[id] ? s->host[id] : "this host";

			if (here && !strcmp(n, node) && ck->rank[id].info_pid)
				sdm_set_add_element(here, id);
		}
		sdm_set_for_each(id, todo)
			if (!strcmp(s->host && s->host[id] ? s->host[id] : "this host", node))
				sdm_set_remove_element(todo, id);
		l = here && !sdm_set_is_empty(here) ? sdm_set_to_string(here) : NULL;
		if (l)
			dbg_info(s, "%s: [%s] parked for their debuggers on %s", what, l, node);
		free(l);
		sdm_set_free(here);
	}
	sdm_set_free(todo);
}

/*
 * Until every rank of set has said on its output that it is parked
 * ("MPIR debug info)", on_line), or CK_WAIT_S: the checkpoint's continue
 * path, whose markers only the ranks print. The wait is on output.
 */
static void wait_output_markers(struct dbg_ckpt *ck, const struct sdm_idset *set,
				const char *what)
{
	time_t end = time(NULL) + CK_WAIT_S;
	struct sdm_idset *left;

	while ((left = unparked(ck, set)) && time(NULL) < end) {
		sdm_set_free(left);
		dbg_pump_output(ck->s, 1000);
	}
	sdm_set_free(left);
	say_unparked(ck, set, what, "");
}

/*
 * Attached and parked: every rank's server opens the gate and runs each
 * thread alone to the pc under its outermost hook frame, where the
 * trampoline hands it back with every register as it was (the server's
 * "hook release"): one command for the whole set, each server releasing
 * its ranks at the same time. A rank that fails says why.
 */
static void release(struct dbg_session *s, const struct sdm_idset *set)
{
	if (sdm_set_size(set))
		ranks_hook(s, set, NULL, DBGP_HOOK_RELEASE, 0);
}

/*
 * Up to 10 s for every thread of pid to have no tracer: a restored
 * rank's own "MPIR debug info)" line can come while crdbg restart (the
 * ptrace backend) still has a thread of it, and gdb cannot attach then
 * ("already traced"). Seen in the guest on the ptrace backend.
 */
static void wait_untraced(pid_t pid)
{
	char path[64], line[256];

	for (int i = 0; i < 200; i++) {
		bool traced = false;
		struct dirent *d;
		DIR *dp;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		dp = opendir(path);
		if (!dp)
			return;
		while (!traced && (d = readdir(dp))) {
			char status[sizeof(path) + 300];
			FILE *f;

			if (d->d_name[0] == '.')
				continue;
			snprintf(status, sizeof(status), "%s/%s/status", path, d->d_name);
			f = fopen(status, "re");
			while (f && fgets(line, sizeof(line), f))
				if (!strncmp(line, "TracerPid:", 10) && atoi(line + 10))
					traced = true;
			if (f)
				fclose(f);
		}
		closedir(dp);
		if (!traced)
			return;
		usleep(50 * 1000);
	}
}

/*
 * gdb attaches the rank's gdb to pid: a gdb that has the program already
 * (any restart inside a session), or the server's first attach (a
 * session adopting a restarted job), which starts gdb on the program the
 * process runs, as its node sees it.
 */
static int attach_rank(struct dbg_ckpt *ck, const struct sdm_idset *one, pid_t pid)
{
	char exe[64];
	struct dbgp_cmd c = { .verb = DBGP_ATTACH, .pid = pid, .arg = exe };

	if (!ck->first_attach)
		return ranks_cli(ck->s, one, NULL, "attach %d", (int)pid);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	return ranks_cmd(ck->s, one, NULL, &c);
}

/*
 * Each rank of set: attach its gdb to the pid of its info line; then, with
 * launcher (mpirun's tree was checkpointed or restored with the ranks),
 * our gdb takes mpirun again while the ranks' gdbs read their symbols;
 * then release every rank.
 */
static void attach_and_release(struct dbg_ckpt *ck, struct sdm_idset *set, const char *what,
			       bool launcher)
{
	struct dbg_session *s = ck->s;
	struct sdm_idset *ok = sdm_set_new();
	sdm_id id;

	if (!ok)
		return;
	sdm_set_for_each(id, set) {
		struct sdm_idset *one = one_rank(id);

		ck->rank[id].attached = false;
		if (!ck->rank[id].info_pid)
			goto next;
		if (ck->rank[id].info_pid != ck->rank[id].pid)
			dbg_info(s, "%s: rank %u is now pid %d", what, id, ck->rank[id].info_pid);
		if (rank_here(ck, id))
			wait_untraced(ck->rank[id].info_pid);
		if (one && !attach_rank(ck, one, ck->rank[id].info_pid)) {
			sdm_set_add_element(ok, id);
			ck->rank[id].attached = true;
		}
		else
			dbg_error(s, "%s: rank %u: gdb cannot attach to pid %d", what, id,
				  ck->rank[id].info_pid);
		ck->rank[id].pid = ck->rank[id].info_pid;
next:
		sdm_set_free(one);
	}
	if (launcher) {
		char err[256];

		if (dbg_mpir_reattach(ck->mpir, err, sizeof(err)))
			dbg_error(s, "%s: %s", what, err);
	}
	release(s, ok);
	sdm_set_free(ok);
	dbg_pump_output(s, 100);
}

/* ---- the commands ---- */

static struct sdm_idset *checkable_ranks(struct dbg_ckpt *ck)
{
	struct dbg_session *s = ck->s;
	struct sdm_idset *all = sdm_set_new(), *live = NULL;

	if (ck->mpir && !ck->parts && !dbg_mpir_launched(ck->mpir)) {
		dbg_error(s, "a job joined with crdbg attach cannot be checkpointed from the console: its ranks announce themselves on mpirun's output, which does not come here (start it with crdbg debug --preload LIB -- mpirun ...)");
		sdm_set_free(all);
		return NULL;
	}
	if (all && sdm_set_add_range(all, 0, s->n - 1) == 0)
		live = dbg_live(s, all);
	sdm_set_free(all);
	if (!live || !sdm_set_size(live)) {
		dbg_error(s, "no live rank");
		goto fail;
	}
	if (!all_stopped(s, live))
		goto fail;
	return live;
fail:
	sdm_set_free(live);
	return NULL;
}

/*
 * The ranks a restart brings back: the stopped ones, and those that have
 * exited since (their gdbs stay; their pids are free again) when the job
 * checkpoint has a part per rank. An mpirun tree's image needs mpirun's
 * own gdb, gone with the job. NULL (said) if a rank runs or none is left.
 */
static struct sdm_idset *restartable_ranks(struct dbg_ckpt *ck)
{
	struct dbg_session *s = ck->s;
	struct sdm_idset *set = sdm_set_new();
	bool exited = false;

	for (uint32_t id = 0; set && id < s->n; id++) {
		if (s->state[id] == DBG_LOST || s->state[id] == DBG_NONE)
			continue;
		if (s->state[id] == DBG_RUNNING) {
			dbg_error(s, "rank %u is not stopped: interrupt it first", id);
			goto fail;
		}
		/* A rank held in its exit has not ended, nor has its job. */
		exited |= s->state[id] == DBG_EXITED && !sdm_set_contains(s->exit_held, id);
		if (sdm_set_add_element(set, id) < 0)
			goto fail;
	}
	if (!set || !sdm_set_size(set)) {
		dbg_error(s, "no rank to restart");
		goto fail;
	}
	if (exited && ck->mpir && !ck->parts) {
		dbg_error(s, "restart: the job has ended, and mpirun's tree cannot be brought back without mpirun's debugger: restart it from a shell (crdbg restart H)");
		goto fail;
	}
	return set;
fail:
	sdm_set_free(set);
	return NULL;
}
/*
 * A job checkpoint operation the console runs itself, over its servers:
 * each rank's server runs that rank's part on the rank's node
 * (parts-sdm.h), the console the job-level sequence (<crdbg/job.h>).
 */
static void parts_opts(struct dbg_ckpt *ck, struct crs_job_opts *o)
{
	const char *b = getenv("CRDBG_BACKEND");

	*o = (struct crs_job_opts){
		.transport = dbg_parts_transport(ck->sdm_parts),
		/* the servers' environment is not ours on other nodes: say it */
		.backend = !b ? FREEZE_BACKEND_AUTO :
			   !strcmp(b, "kmod") ? FREEZE_BACKEND_KMOD :
			   !strcmp(b, "ptrace") ? FREEZE_BACKEND_PTRACE : FREEZE_BACKEND_AUTO,
	};
}

/* The part of the job a target is: a rank, or (ranks NULL) mpirun's tree. */
static void set_target(struct dbg_ckpt *ck, struct crs_job_target *t, sdm_id id, const char *ranks,
		       FILE *what)
{
	struct dbg_session *s = ck->s;
	char here[CRS_NODE_MAX] = "localhost";
	const char *node = s->host && s->host[id] ? s->host[id] : NULL;

	if (!node) {
		gethostname(here, sizeof(here) - 1);
		node = here;
	}
	snprintf(t->node, sizeof(t->node), "%s", node);
	if (ranks)
		snprintf(t->ranks, sizeof(t->ranks), "%s", ranks);
	else
		snprintf(t->ranks, sizeof(t->ranks), "%u", id);
	t->pid = ranks ? dbg_mpir_pid(ck->mpir) : ck->rank[id].pid;
	fprintf(what, "%s:%d:%s", node, t->pid, t->ranks);
}

/*
 * The job checkpoint's targets: a part per rank of live, or one part
 * holding every rank, mpirun's tree. NULL (said) when it cannot be.
 */
static struct crs_job_target *job_targets(struct dbg_ckpt *ck, const struct sdm_idset *live,
					  size_t *ret_n, char **ret_what)
{
	size_t n = ck->parts ? sdm_set_size(live) : 1, i = 0, len = 0;
	struct crs_job_target *t = calloc(n, sizeof(*t));
	char *ranks = ck->parts ? NULL : sdm_set_to_string(live);
	FILE *f = open_memstream(ret_what, &len);
	sdm_id id;

	*ret_n = n;
	if (!t || !f || (!ck->parts && (!ranks || strlen(ranks) >= CRS_RANKS_MAX))) {
		dbg_error(ck->s, "checkpoint: %s", t && f && ranks ?
			  "the ranks of mpirun's tree are too many runs to name in a manifest" :
			  "out of memory");
		goto fail;
	}
	sdm_set_for_each(id, live) {
		if (i == n)
			break;
		if (i)
			fputc(',', f);
		set_target(ck, &t[i++], id, ranks, f);
	}
	if (fclose(f)) {
		f = NULL;
		dbg_error(ck->s, "checkpoint: out of memory");
		goto fail;
	}
	free(ranks);
	return t;
fail:
	if (f)
		fclose(f);
	free(*ret_what);
	*ret_what = NULL;
	free(ranks);
	free(t);
	return NULL;
}

/*
 * The ranks' checkpoint is one job checkpoint (<crdbg/job.h>), taken at
 * one cut, each part on its node, under one handle (into handle, "" if
 * it failed); a part that fails calls off every part (no handle is left
 * anywhere) and says which. Every rank stays parked.
 */
static void checkpoint_parts(struct dbg_ckpt *ck, const struct sdm_idset *live,
			     unsigned int flags, char *handle, size_t hlen)
{
	struct dbg_session *s = ck->s;
	char err[1024], *what = NULL;
	struct crs_job_target *t;
	struct crs_job_opts o;
	size_t n;
	sdm_id id;

	handle[0] = 0;
	t = job_targets(ck, live, &n, &what);
	if (t) {
		parts_opts(ck, &o);
		o.debug = true;		/* the ranks stay parked for their gdbs */
		o.what = what;
		o.full = flags & DBG_CKPT_FULL;
		if (crs_job_checkpoint(&o, t, n, handle, hlen, err, sizeof(err))) {
			handle[0] = 0;
			dbg_error(s, "checkpoint: %s; nothing was kept, the job goes on", err);
		}
	}
	if (handle[0]) {
		wait_output_markers(ck, live, "checkpoint");
	} else {
		/* thawed where they were parked: the debugger takes them back */
		sdm_set_for_each(id, live)
			ck->rank[id].info_pid = ck->rank[id].pid;
	}
	free(what);
	free(t);
}

/*
 * Part i of manifest j: its ranks (of the session) into r, and its
 * server's rank (the first; a job taken outside a session names no
 * ranks: rank i is part i). false if it holds no rank of the session.
 */
static bool part_ranks(const struct dbg_ckpt *ck, const struct crs_job *j, size_t i,
		       struct sdm_idset *r, sdm_id *server)
{
	if (!strcmp(j->parts[i].ranks, "-")) {
		if (i >= ck->n || sdm_set_add_element(r, (sdm_id)i) < 0)
			return false;
	} else if (sdm_set_parse(r, j->parts[i].ranks, NULL) < 0) {
		return false;
	}
	return sdm_set_find_next(r, 0, server) && *server < ck->n;
}

/*
 * Every part's processes parked: one wait per part on its server, all
 * at once. A part of one rank parked its root (the manifest's pid: CRIU
 * gives it back); mpirun's tree parked every rank's process.
 */
static void parked_parts(struct dbg_ckpt *ck, const struct crs_job *j,
			 const struct sdm_idset *live)
{
	size_t np = j->nr_parts ? j->nr_parts : 1;
	struct dbg_parked *w = calloc(np, sizeof(*w));
	struct sdm_idset **r = calloc(np, sizeof(*r));
	pid_t **pid = calloc(np, sizeof(*pid));
	char why[512] = "";
	sdm_id id;

	for (size_t i = 0; w && r && pid && i < j->nr_parts; i++) {
		r[i] = sdm_set_new();
		if (!r[i] || !part_ranks(ck, j, i, r[i], &w[i].server) ||
		    sdm_set_intersect(r[i], live) ||
		    !(pid[i] = calloc(sdm_set_size(r[i]) + 1, sizeof(**pid))))
			continue;
		sdm_set_for_each(id, r[i])
			pid[i][w[i].n++] = sdm_set_size(r[i]) == 1 ? j->parts[i].pid :
					   ck->rank[id].pid;
		w[i].pid = pid[i];
		for (size_t q = 0; q < w[i].n; q++)
			if (pid[i][q] <= 0)
				w[i].n = 0;	/* its pids unknown: only the ranks' lines say it */
	}
	if (w && r && pid) {
		dbg_parts_wait_parked(ck->sdm_parts, w, j->nr_parts, CK_WAIT_S * 1000u);
		for (size_t i = 0; i < j->nr_parts; i++) {
			size_t q = 0;

			if (!pid[i])
				continue;
			sdm_set_for_each(id, r[i]) {
				if (!w[i].rc && w[i].n)
					ck->rank[id].info_pid = pid[i][q];
				q++;
			}
			if (w[i].rc && !why[0])
				snprintf(why, sizeof(why), "%s", w[i].why);
		}
	}
	dbg_pump_output(ck->s, 100);	/* the ranks' own lines, mpirun's */
	say_unparked(ck, live, "restart", why);
	for (size_t i = 0; r && pid && i < j->nr_parts; i++) {
		sdm_set_free(r[i]);
		free(pid[i]);
	}
	free(r);
	free(pid);
	free(w);
}

/*
 * Restart the job checkpoint handle over the servers: every part is
 * restored on its rank's node and released at the barrier, its
 * processes parked for the debugger; the ranks whose part said so get
 * their info pid.
 */
static void restart_parts(struct dbg_ckpt *ck, const char *handle, const struct sdm_idset *live)
{
	struct dbg_session *s = ck->s;
	struct crs_job_opts o;
	struct crs_job j;
	char err[1024];
	int status;

	parts_opts(ck, &o);
	o.handle = handle;
	o.debug = true;
	if (crs_job_restart(&o, &status, err, sizeof(err))) {
		dbg_error(s, "restart: %s", err);
		return;
	}
	if (crs_job_load(crs_store_root(NULL), handle, &j, err, sizeof(err))) {
		dbg_error(s, "restart: %s", err);
		return;
	}
	parked_parts(ck, &j, live);
	crs_job_free(&j);
}

/* A rank held in its exit (commands.c): its job is about to end. */
static bool job_ending(struct dbg_session *s)
{
	char *held;

	if (sdm_set_is_empty(s->exit_held))
		return false;
	held = sdm_set_to_string(s->exit_held);
	dbg_error(s, "rank [%s] is held in its exit (code not 0): no checkpoint of an ending job; restart an earlier one, or continue to let it end",
		  held ? held : "?");
	free(held);
	return true;
}

int dbg_ckpt_take(struct dbg_ckpt *ck, unsigned int flags, char *out, size_t outlen)
{
	/* the park hook needs the runtime's crdbg_runtime_info */
	static const struct dbgp_cmd has_libcrdbg = {
		.verb = DBGP_CLI, .arg = "info address crdbg_runtime_info" };
	struct dbg_session *s = ck->s;
	struct sdm_idset *live, *lacking;
	char h[CRS_HANDLE_MAX] = "", err[256];
	bool mpirun_detached = false;
	sdm_id id;

	if (out && outlen)
		out[0] = 0;
	choose_mode(ck);
	if (job_ending(s))
		return -1;
	live = checkable_ranks(ck);
	if (!live)
		return -1;
	sdm_set_for_each(id, live) {
		ck->rank[id].pid = rank_pid(s, id);
		ck->rank[id].info_pid = 0;
		if (ck->rank[id].pid <= 0) {
			dbg_error(s, "checkpoint: rank %u has no process", id);
			goto out;
		}
	}
	/* One line before anything is touched, not gdb's errors from the park. */
	lacking = dbg_ranks_replying(s, live, &has_libcrdbg, dbg_load_timeout(s), "No symbol");
	if (lacking && !sdm_set_is_empty(lacking)) {
		char *l = sdm_set_to_string(lacking);

		dbg_error(s, "checkpoint: rank [%s] runs without libcrdbg, which parks the ranks for their image: start crdbg debug with --preload PATH/libcrdbg.so",
			  l ? l : "?");
		free(l);
		sdm_set_free(lacking);
		goto out;
	}
	sdm_set_free(lacking);
	if (ranks_hook(s, live, NULL, DBGP_HOOK_PARK,
		       CRDBG_HOOK_DEBUG_SET | CRDBG_CRS_STATE_PARK) ||
	    ranks_cli(s, live, NULL, "set var MPIR_checkpoint_debug_gate = 0") ||
	    ranks_cli(s, live, NULL, "set var MPIR_debug_with_checkpoint = 1")) {
		ranks_hook(s, live, NULL, DBGP_HOOK_UNPARK, 0);
		dbg_error(s, "checkpoint: the ranks cannot be parked (is libcrdbg preloaded?)");
		goto out;
	}
	if (ranks_cli(s, live, NULL, "detach")) {
		dbg_error(s, "checkpoint: a rank's gdb cannot detach");
		goto out;
	}
	/* mpirun's tree is one image: our gdb lets go of mpirun first */
	if (!ck->parts && dbg_mpir_detach(ck->mpir, err, sizeof(err))) {
		dbg_error(s, "checkpoint: %s", err);
		sdm_set_for_each(id, live)
			ck->rank[id].info_pid = ck->rank[id].pid;	/* parked, still there */
	} else {
		mpirun_detached = !ck->parts;
		checkpoint_parts(ck, live, flags, h, sizeof(h));
	}
	if (h[0] && !(flags & DBG_CKPT_QUIET))
		say_parked(ck, live, "checkpoint");
	attach_and_release(ck, live, "checkpoint", mpirun_detached);
	if (h[0]) {
		if (!(flags & DBG_CKPT_QUIET))
			dbg_info(s, CRS_HANDLE_PREFIX "%s", h);
		snprintf(ck->last, sizeof(ck->last), "%s", h);
		if (out && outlen)
			snprintf(out, outlen, "%s", h);
	}
out:
	sdm_set_free(live);
	return h[0] ? 0 : -1;
}

void dbg_ckpt_checkpoint(struct dbg_ckpt *ck)
{
	dbg_ckpt_take(ck, 0, NULL, 0);
}

int dbg_ckpt_remove_job(struct dbg_ckpt *ck, const char *handle, char *err, size_t errlen)
{
	const char *root = crs_store_root(NULL);
	struct crs_job_opts o;
	int r;

	/* a job checkpoint: its parts are on their nodes */
	if (crs_job_exists(root, handle)) {
		parts_opts(ck, &o);
		o.handle = handle;
		return crs_job_remove(&o, err, errlen);
	}
	/* a checkpoint of one process tree, in this node's store */
	r = crs_store_remove(root, handle);
	if (r)
		crs_store_remove_why(root, handle, r, err, errlen);
	return r;
}
/*
 * Kill the ranks of stopped, and those of live held in their exit
 * (commands.c): the job goes back, the exit never happened.
 */
static void kill_job_ranks(struct dbg_session *s, const struct sdm_idset *stopped,
			   const struct sdm_idset *live)
{
	struct sdm_idset *doomed = sdm_set_copy(stopped), *held = sdm_set_copy(s->exit_held);

	if (doomed && held && !sdm_set_intersect(held, live) && !sdm_set_union(doomed, held)) {
		ranks_cli(s, doomed, NULL, "kill");
		sdm_set_diff(s->exit_held, held);
	} else {
		ranks_cli(s, stopped, NULL, "kill");
	}
	sdm_set_free(doomed);
	sdm_set_free(held);
}

/*
 * The processes below the ranks of set on this node (malloc'd, *nr of
 * them; NULL when none): what a checkpoint of a rank took with it and a
 * restart must find gone, though they may have left the rank's session
 * and group (an MPI singleton's orted runs with --set-sid).
 */
static pid_t *ranks_children(struct dbg_ckpt *ck, const struct sdm_idset *set, size_t *nr)
{
	pid_t *all = NULL;
	sdm_id id;

	*nr = 0;
	sdm_set_for_each(id, set) {
		pid_t *tree, *more;
		size_t n;

		if (!rank_here(ck, id) || ck->rank[id].pid <= 0 ||
		    crs_proc_tree(ck->rank[id].pid, true, &tree, &n))
			continue;
		more = n > 1 ? realloc(all, (*nr + n - 1) * sizeof(*all)) : NULL;
		if (more) {
			memcpy(more + *nr, tree + 1, (n - 1) * sizeof(*tree));
			all = more;
			*nr += n - 1;
		}
		free(tree);
	}
	return all;
}

/*
 * Up to CRS_RESTART_PID_WAIT_S for a killed process to be gone (its pid
 * free for CRIU); crdbg restart waits as long again for one still dying.
 */
static void wait_gone(pid_t pid)
{
	for (int i = 0; i < CRS_RESTART_PID_WAIT_S * 20 && pid > 0 && !kill(pid, 0); i++)
		usleep(50 * 1000);
}

/* As long again for a killed process to have exited (gone, or a zombie). */
static void wait_dead(pid_t pid)
{
	for (int i = 0; i < CRS_RESTART_PID_WAIT_S * 20 && pid > 0 && !kill(pid, 0); i++) {
		char path[32], buf[256], *end;
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			return;
		buf[n] = 0;
		/* "PID (COMM) S ...": the state after the last ')' */
		end = strrchr(buf, ')');
		if (end && end[1] == ' ' && end[2] == 'Z')
			return;
		usleep(50 * 1000);
	}
}

/*
 * Every part of the job's checkpoint is whole (crdbg-part verify on its
 * node), checked before anything is killed or restored: a missing or
 * damaged part refuses the restart, naming its rank, and the session is
 * untouched.
 */
static bool parts_intact(struct dbg_ckpt *ck, const char *handle)
{
	struct crs_job_opts o;
	char line[512];

	parts_opts(ck, &o);
	o.handle = handle;
	if (!crs_job_verify(&o, line, sizeof(line)))
		return true;
	dbg_error(ck->s, "restart: refused, nothing was changed: %s", line);
	return false;
}

/* The one job handle of list (strtok'd); NULL (said) if it is not one. */
static const char *job_handle(struct dbg_ckpt *ck, char *list)
{
	char *save = NULL, *h = strtok_r(list, ", \t", &save);

	if (!h || !crs_job_exists(crs_store_root(NULL), h)) {
		dbg_error(ck->s, "restart: %s is not a job checkpoint: the console restarts the job checkpoints it takes (one of a single process tree: crdbg restart %s from a shell)",
			  h ? h : "-", h ? h : "HANDLE");
		return NULL;
	}
	if (strtok_r(NULL, ", \t", &save)) {
		dbg_error(ck->s, "restart: a job checkpoint has one handle, not one per rank");
		return NULL;
	}
	return h;
}
/* Every rank of an mpirun job exited (none held in its exit) or lost. */
static bool mpirun_job_ended(struct dbg_session *s)
{
	for (uint32_t id = 0; id < s->n; id++)
		if (s->state[id] == DBG_STOPPED || s->state[id] == DBG_RUNNING ||
		    sdm_set_contains(s->exit_held, id))
			return false;
	return true;
}

void dbg_ckpt_restart(struct dbg_ckpt *ck, const char *arg)
{
	struct dbg_session *s = ck->s;
	struct sdm_idset *live = NULL, *stopped = NULL;
	char *list = strdup(*arg ? arg : ck->last);
	const char *why, *h;
	pid_t mpirun, *below;
	size_t nr_below;
	bool held;
	sdm_id id;

	choose_mode(ck);
	if (ck->mpir && !ck->parts && mpirun_job_ended(s)) {
		dbg_error(s, "restart: the job has ended, and mpirun's tree cannot be brought back without mpirun's debugger: restart it from a shell (crdbg restart %s)",
			  *arg ? arg : *ck->last ? ck->last : "HANDLE");
		goto out;
	}
	if (ck->mpir && !ck->parts) {
		live = checkable_ranks(ck);	/* mpirun's tree: the job still runs */
		/* ...with its ranks held in their exit, which come back too */
		if (live)
			sdm_set_union(live, s->exit_held);
	} else {
		live = restartable_ranks(ck);
		stopped = live ? dbg_live(s, live) : NULL;
	}
	if (!live || !list)
		goto out;
	if (!*list) {
		dbg_error(s, "restart: no handle given and no checkpoint taken yet");
		goto out;
	}
	h = job_handle(ck, list);
	if (!h)
		goto out;
	if (ck->parts && ck->mpir && (why = dbg_mpir_restart_problem(ck->mpir))) {
		dbg_error(s, "restart: refused, nothing was changed: %s", why);
		goto out;
	}
	sdm_set_for_each(id, live) {
		ck->rank[id].pid = rank_pid(s, id);
		ck->rank[id].info_pid = 0;
	}
	if (!parts_intact(ck, h))
		goto out;
	/*
	 * mpirun stopped first: it must not see its ranks die and end the
	 * job. It dies once they have, so that the connections between
	 * them are closed from the ranks' side first: a connection closes
	 * into TIME_WAIT on the side that closed it, and one on the port
	 * mpirun listens on would keep its restored listener from binding
	 * it again (in the network namespace the job shares with others).
	 */
	mpirun = ck->mpir ? dbg_mpir_pid(ck->mpir) : 0;
	held = mpirun > 0 && dbg_mpir_hold(ck->mpir);
	if (mpirun > 0 && !held)
		kill(mpirun, SIGKILL);	/* not ours to hold: first, as it must */
	if (ck->mpir && ck->parts)
		dbg_mpir_launcher_gone(ck->mpir);
	/* The ranks' children here (an MPI singleton's orted) go with them. */
	below = ranks_children(ck, live, &nr_below);
	/* Those that exited have nothing to kill (gdb would say so as an error). */
	kill_job_ranks(s, stopped ? stopped : live, live);
	for (size_t i = 0; i < nr_below; i++)
		kill(below[i], SIGKILL);
	/* dead first (a child of the stopped mpirun stays a zombie), then gone */
	sdm_set_for_each(id, live)
		if (rank_here(ck, id))
			wait_dead(ck->rank[id].pid);
	for (size_t i = 0; i < nr_below; i++)
		wait_dead(below[i]);
	if (held)
		dbg_mpir_kill(ck->mpir);
	sdm_set_for_each(id, live)
		if (rank_here(ck, id))
			wait_gone(ck->rank[id].pid);
	for (size_t i = 0; i < nr_below; i++)
		wait_gone(below[i]);
	free(below);
	if (!ck->parts)
		wait_gone(mpirun);	/* its tree comes back with its pid */
	/* We restore every part on its node and release them together. */
	restart_parts(ck, h, live);
	say_parked(ck, live, "restart");
	/* mpirun's tree came back with the ranks: our gdb takes it again. */
	attach_and_release(ck, live, "restart",
			   !ck->parts && mpirun > 0 && !kill(mpirun, 0));
	/* Ranks that had exited are stopped again where the checkpoint was. */
	sdm_set_for_each(id, live) {
		struct sdm_idset *one = one_rank(id);

		if (one && ck->rank[id].attached && s->state[id] == DBG_EXITED)
			dbg_set_state(s, one, DBG_STOPPED);
		sdm_set_free(one);
	}
	snprintf(ck->last, sizeof(ck->last), "%s", h);
out:
	free(list);
	sdm_set_free(stopped);
	sdm_set_free(live);
}

int dbg_ckpt_adopt(struct dbg_ckpt *ck, const char *handle, char *launch)
{
	struct dbg_session *s = ck->s;
	struct sdm_idset *all = sdm_set_new();
	struct crs_job j;
	char err[512];
	int rc = -1;

	ck->adopted = launch;
	ck->adopt = true;
	choose_mode(ck);
	if (!all || sdm_set_add_range(all, 0, s->n - 1) ||
	    crs_job_load(crs_store_root(NULL), handle, &j, err, sizeof(err))) {
		dbg_error(s, "restart: %s", all ? err : "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < ck->n && i < j.nr_parts; i++)
		ck->rank[i].pid = j.parts[i].pid;
	crs_job_free(&j);
	/* the servers are there, on the parts' nodes: they restore them */
	restart_parts(ck, handle, all);
	ck->first_attach = true;
	attach_and_release(ck, all, "restart", false);
	ck->first_attach = false;
	snprintf(ck->last, sizeof(ck->last), "%s", handle);
	rc = 0;
	for (uint32_t i = 0; i < ck->n; i++) {
		struct sdm_idset *one = one_rank(i);

		/* A rank that did not come back is said so, then taken as lost. */
		if (one)
			dbg_set_state(s, one, ck->rank[i].attached ? DBG_STOPPED : DBG_LOST);
		if (!ck->rank[i].attached)
			rc = -1;
		sdm_set_free(one);
	}
	if (!rc)
		dbg_info(s, "restart: job %s: ranks 0-%u are where the checkpoint left them",
			 handle, s->n - 1);
out:
	sdm_set_free(all);
	return rc;
}

/* A job the session restarted for itself ends with it. */
static void on_stop(void *priv)
{
	struct dbgp_cmd kill_cmd = { .verb = DBGP_CLI, .arg = "kill" };
	struct dbg_ckpt *ck = priv;
	struct sdm_idset *all, *live;
	struct sdm_fe_result r;

	if (!ck->adopt || !ck->s->fe)
		return;
	all = sdm_set_new();
	if (all && sdm_set_add_range(all, 0, ck->s->n - 1) == 0) {
		live = dbg_live(ck->s, all);
		if (live && sdm_set_size(live) &&
		    dbg_send(ck->s, live, &kill_cmd, DBG_CMD_TIMEOUT, &r) == 0)
			sdm_fe_result_free(&r);
		sdm_set_free(live);
	}
	sdm_set_free(all);
}

static const struct dbg_listener ckpt_listener = {
	.line = on_line,
	.stop = on_stop,
};

struct dbg_ckpt *dbg_ckpt_new(struct dbg_session *s, struct dbg_mpir *mpir)
{
	struct dbg_ckpt *ck = calloc(1, sizeof(*ck));

	if (!ck)
		return NULL;
	ck->rank = calloc(s->n, sizeof(*ck->rank));
	if (!ck->rank)
		goto fail;
	ck->s = s;
	ck->mpir = mpir;
	ck->n = s->n;
	ck->sdm_parts = dbg_parts_new(s);
	if (!ck->sdm_parts || dbg_session_listen(s, &ckpt_listener, ck) < 0)
		goto fail;
	return ck;
fail:
	dbg_parts_free(ck->sdm_parts);
	free(ck->rank);
	free(ck);
	return NULL;
}

void dbg_ckpt_drain(struct dbg_ckpt *ck, int max_s)
{
	if (!ck)
		return;
	for (uint32_t i = 0; i < ck->n; i++)
		if (ck->s->state[i] != DBG_EXITED)
			return;
	/* the servers forward what restored ranks wrote through their parts */
	dbg_parts_drain(ck->sdm_parts, (uint32_t)max_s * 1000u);
	dbg_pump_output(ck->s, 100);
	dbg_flush_lines(ck->s);
}

void dbg_ckpt_free(struct dbg_ckpt *ck)
{
	if (!ck)
		return;
	free(ck->adopted);
	dbg_parts_free(ck->sdm_parts);
	free(ck->rank);
	free(ck);
}
