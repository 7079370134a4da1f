// SPDX-License-Identifier: GPL-2.0
/*
 * Console commands "checkpoint" and "restart [HANDLE,...]": the MPIR
 * checkpoint protocol (Documentation/checkpoint.md) for a single-node job whose ranks run with libcrdbg. Every
 * rank's gdb stays; only its inferior changes. All ranks go through each
 * step together.
 *
 * checkpoint
 *  1. park: in every rank, the server pushes the UAPI hook frame (return_via USER,
 *     state CRDBG_CRS_STATE_PARK) on every thread but the designated one,
 *     closes MPIR_checkpoint_debug_gate, sets MPIR_debug_with_checkpoint
 *     and detaches. Each thread enters libcrdbg's trampoline, which keeps
 *     every register (x87/SSE/AVX included) on its own stack, and waits
 *     in MPIR_checkpoint_debugger_breakpoint(). Nothing about the parked
 *     threads lives in gdb or here: the image is self-contained.
 *  2. `crdbg checkpoint PID --debug` for every rank at once (continue
 *     path). The CRS hook pushed on top of a parked thread returns at
 *     once; the designated thread prints "MPIR debug info) host:pid" on
 *     the rank's stderr when every thread waits.
 *  3. on that line, the rank's gdb attaches to the pid it names and
 *     releases: opens the gate and runs each thread alone (scheduler
 *     locking) to a temporary breakpoint at the pc under its outermost
 *     hook frame, where the trampoline returns with every register.
 *
 * restart: the ranks' processes are killed and `crdbg restart H --debug`
 * runs for every rank at once, each on a pty of ours. CRIU restores the
 * same pids with their stdio on the ranks' gdb terminals, the hook parks
 * every thread again and the designated thread's "MPIR debug info)" line
 * triggers the same attach and release as step 3.
 *
 * An MPIR job (ck->mpir) is one image rooted at mpirun: after step 1
 * our gdb lets go of mpirun (mpir.c), one `crdbg checkpoint MPIRUN --debug`
 * takes the whole tree, the info lines come through mpirun's output and
 * are matched to ranks by pid, and our gdb attaches to mpirun again before
 * step 3. restart kills mpirun, then the ranks, runs one `crdbg restart`,
 * and attaches to the restored mpirun the same way.
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
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

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
#define CK_OUT_MAX	8192

/* A crdbg child (checkpoint or restart of one rank) and what it printed. */
struct ck_child {
	pid_t pid;
	int fd;			/* its stdout+stderr: a pipe or a pty master */
	bool forward;		/* the restored rank's output too: its pty */
	bool reported;		/* its failure was shown */
	int status;		/* exit status once reaped, else -1 */
	char out[CK_OUT_MAX];
	size_t len;
};

/* Per-rank state; the "MPIR debug info)" pid comes from the rank's output. */
struct ck_rank {
	int pid;
	pid_t info_pid;		/* from the last "MPIR debug info)" line */
	char handle[256];	/* of its part of the checkpoint being taken */
	bool attached;		/* its gdb attached at the last restart */
	struct ck_child child;
};

struct dbg_ckpt {
	struct dbg_session *s;
	struct dbg_mpir *mpir;	/* an MPIR job: one child (job) for all ranks */
	bool parts;		/* a job checkpoint of the ranks: one child too */
	const char *launch;	/* starts a part on another node, or NULL */
	char *adopted;		/* crdbg debug --restart: its launch template */
	bool adopt;		/* ...and the job is ours to end */
	bool first_attach;	/* the ranks' gdbs have no program yet */
	struct ck_rank *rank;
	uint32_t n;
	struct ck_child job;
	struct dbg_parts *sdm_parts;	/* a job checkpoint's parts, on the servers */
	char last[4096];	/* handles of the last checkpoint */
};

static struct ck_child *child_of(struct dbg_ckpt *ck, sdm_id id)
{
	return ck->mpir || ck->parts ? &ck->job : &ck->rank[id].child;
}

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
 * How the job is checkpointed: one job checkpoint with a part per rank
 * (crdbg debug -n N jobs; MPIR jobs whose ranks are not in the
 * launcher's tree: srun, or ranks on other nodes), or one image of the
 * launcher's tree (mpirun or hydra with every rank on this host).
 */
static void choose_mode(struct dbg_ckpt *ck)
{
	ck->launch = ck->adopted;
	ck->parts = !ck->mpir || dbg_mpir_ranks_apart(ck->mpir, &ck->launch);
}

/*
 * Every complete output line of a rank, or of mpirun (the ranks of an
 * MPIR job write through it): note the pids of "MPIR debug info)" lines.
 */
static void on_line(void *priv, uint32_t id, const char *line, size_t len)
{
	struct dbg_ckpt *ck = priv;
	char buf[512], host[256];
	pid_t pid;

	if ((id >= ck->n && id != DBG_MPIRUN) || len >= sizeof(buf))
		return;
	memcpy(buf, line, len);
	buf[len] = 0;
	if (crs_parse_debug_info(buf, host, sizeof(host), &pid))
		return;
	if (id != DBG_MPIRUN) {
		ck->rank[id].info_pid = pid;
		return;
	}
	/*
	 * Through mpirun, unlabelled: the rank whose process this is
	 * (restored: same pid), on that node (pids are the node's own).
	 */
	for (uint32_t i = 0; i < ck->n; i++)
		if (ck->rank[i].pid == pid &&
		    (!ck->s->host || !ck->s->host[i] || !strcmp(ck->s->host[i], host)))
			ck->rank[i].info_pid = pid;
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

/* The server's "hook" command (park ARG, unpark, plan), as ranks_cmd. */
static int ranks_hook(struct dbg_session *s, const struct sdm_idset *set, char **text,
		      const char *arg)
{
	struct dbgp_cmd cmd = { .verb = DBGP_HOOK, .arg = arg };

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

/* ---- crdbg children ---- */

static int self_exe(char *buf, size_t len)
{
	ssize_t l = readlink("/proc/self/exe", buf, len - 1);

	if (l <= 0)
		return -1;
	buf[l] = 0;
	return 0;
}

/*
 * Run crdbg ARGS... [--launch LAUNCH] with its output on a pipe (or a new
 * pty when pty).
 */
static int child_start(struct ck_child *c, bool pty, char *const args[], const char *launch)
{
	char self[4096];
	int fds[2] = { -1, -1 };

	if (self_exe(self, sizeof(self)))
		return -errno;
	if (c->fd >= 0)
		close(c->fd);	/* what is left of the previous command's child */
	c->fd = -1;
	if (pty) {
		fds[0] = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fds[0] < 0 || grantpt(fds[0]) || unlockpt(fds[0]))
			goto fail;
	} else if (pipe2(fds, O_CLOEXEC)) {
		return -errno;
	}
	c->len = 0;
	c->status = -1;
	c->reported = false;
	c->forward = pty;
	c->pid = fork();
	if (c->pid < 0)
		goto fail;
	if (!c->pid) {
		char *argv[16] = { "crdbg" };
		int out = fds[1], i;

		if (pty) {
			struct termios t;

			setsid();
			out = open(ptsname(fds[0]), O_RDWR);
			if (out < 0)
				_exit(127);
			ioctl(out, TIOCSCTTY, 0);
			if (!tcgetattr(out, &t)) {
				t.c_oflag &= ~ONLCR;
				t.c_lflag &= ~ECHO;
				tcsetattr(out, TCSANOW, &t);
			}
			dup2(out, 0);
		}
		dup2(out, 1);
		dup2(out, 2);
		for (i = 0; args[i] && i < 12; i++)
			argv[i + 1] = args[i];
		if (launch) {	/* the job's parts on its other nodes */
			argv[++i] = "--launch";
			argv[++i] = (char *)launch;
		}
		argv[i + 1] = NULL;
		execv(self, argv);
		_exit(127);
	}
	if (fds[1] >= 0)
		close(fds[1]);
	c->fd = fds[0];
	return 0;
fail:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	return -errno;
}

/* c did not run: it failed with msg as its output. */
static void child_failed(struct ck_child *c, const char *msg)
{
	c->len = snprintf(c->out, sizeof(c->out), "%s\n", msg);
	c->status = 1;
	c->reported = false;
	c->pid = 0;
}

/* Read what c printed (forwarding a restart's to the rank); reap it. */
static void child_poll(struct dbg_session *s, uint32_t id, struct ck_child *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	char buf[4096];
	ssize_t n;
	int st;

	while (c->fd >= 0 && poll(&p, 1, 0) > 0) {
		n = read(c->fd, buf, sizeof(buf));
		if (n <= 0) {
			close(c->fd);
			c->fd = -1;
			break;
		}
		if (c->len + n >= CK_OUT_MAX) {
			/* keep the tail: the last line is what matters */
			size_t keep = CK_OUT_MAX / 2;

			memmove(c->out, c->out + c->len - (c->len < keep ? c->len : keep),
				c->len < keep ? c->len : keep);
			c->len = c->len < keep ? c->len : keep;
		}
		memcpy(c->out + c->len, buf, n < CK_OUT_MAX / 2 ? n : CK_OUT_MAX / 2);
		c->len += n < CK_OUT_MAX / 2 ? n : CK_OUT_MAX / 2;
		c->out[c->len] = 0;
		if (c->forward)
			dbg_rank_output(s, id, buf, n);
	}
	if (c->pid > 0 && c->status < 0 && waitpid(c->pid, &st, WNOHANG) == c->pid) {
		c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		c->pid = 0;
	}
}

/* Read what c prints until it exits (a short command: verify, rm). */
static void child_wait(struct dbg_session *s, uint32_t id, struct ck_child *c)
{
	while (c->status < 0) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };

		poll(&p, 1, 100);
		child_poll(s, id, c);
	}
}

/* The last non-empty line c printed. */
static void child_last_line(const struct ck_child *c, char *buf, size_t len)
{
	size_t end = c->len, start;

	while (end && (c->out[end - 1] == '\n' || c->out[end - 1] == '\r'))
		end--;
	start = end;
	while (start && c->out[start - 1] != '\n')
		start--;
	snprintf(buf, len, "%.*s", (int)(end - start < 400 ? end - start : 400), c->out + start);
	if (!buf[0])
		snprintf(buf, len, "crdbg exited with status %d", c->status);
}

/* The child's last line without crdbg's "crdbg: COMMAND: " in front. */
static void child_reason(const struct ck_child *c, char *buf, size_t len)
{
	static const char *const cmds[] = { "checkpoint: ", "restart: ", "verify: ", "rm: " };
	char line[512], *p = line;

	child_last_line(c, line, sizeof(line));
	if (!strncmp(p, "crdbg: ", 7))
		p += 7;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strncmp(p, cmds[i], strlen(cmds[i])))
			p += strlen(cmds[i]);
	snprintf(buf, len, "%s", p);
}

/*
 * Wait until every rank of set has printed its "MPIR debug info)" line.
 * A rank whose child fails first, or that is silent for CK_WAIT_S, is
 * reported and dropped from set. For checkpoint children (pipes) the
 * child is also waited for, to get its handle.
 */
static void wait_info_lines(struct dbg_ckpt *ck, struct sdm_idset *set, bool want_exit,
			    bool keep_failed, const char *what)
{
	struct dbg_session *s = ck->s;
	time_t end = time(NULL) + CK_WAIT_S;
	char line[512];
	sdm_id id;

	for (;;) {
		bool pending = false;
		struct sdm_idset *failed = sdm_set_new();

		dbg_pump_output(s, 100);
		sdm_set_for_each(id, set) {
			struct ck_child *c = child_of(ck, id);

			child_poll(s, id, c);
			if (c->status > 0) {
				if (!c->reported && ck->mpir) {
					child_reason(c, line, sizeof(line));
					dbg_error(s, "%s: %s", what, line);
				} else if (!c->reported) {
					child_last_line(c, line, sizeof(line));
					dbg_error(s, "%s: rank %u: %s", what, id, line);
				}
				c->reported = true;
				if (keep_failed && !ck->rank[id].info_pid)
					ck->rank[id].info_pid = ck->rank[id].pid;	/* still there, parked */
				else if (!keep_failed && failed)
					sdm_set_add_element(failed, id);
				continue;
			}
			if (!ck->rank[id].info_pid || (want_exit && c->status < 0))
				pending = true;
		}
		if (failed) {
			sdm_set_for_each(id, failed)
				sdm_set_remove_element(set, id);
			sdm_set_free(failed);
		}
		if (!pending)
			return;
		if (time(NULL) > end) {
			sdm_set_for_each(id, set) {
				if (ck->rank[id].info_pid)
					continue;
				dbg_error(s, "%s: rank %u: no \"" CRS_DEBUG_INFO_PREFIX
					  "\" line in %d s", what, id, CK_WAIT_S);
				if (keep_failed)
					ck->rank[id].info_pid = ck->rank[id].pid;
			}
			return;
		}
	}
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
		ranks_hook(s, set, NULL, "release");
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

/* The handle a checkpoint child printed, or "" (reported) if it failed. */
static void child_handle(struct dbg_session *s, struct ck_child *c, const char *who,
			 char *h, size_t len)
{
	char line[512];

	h[0] = 0;
	for (char *p = strtok(c->out, "\n"); p; p = strtok(NULL, "\n"))
		if (!crs_parse_checkpoint_handle(p, h, len))
			break;
	if (c->reported)
		return;		/* failed, said so while waiting */
	if (c->status || !h[0]) {
		child_last_line(c, line, sizeof(line));
		dbg_error(s, "checkpoint: %s%s", who, line);
		c->reported = true;
		h[0] = 0;
	}
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

/*
 * Wait until every rank of set has a process parked for the debugger:
 * its own "MPIR debug info)" line came through its output (on_line), or
 * its part saw the line (a restart's part prints one per process, and a
 * rank's own stderr may go where nobody reads). pid: per rank, the
 * process to wait for (NULL or 0: the rank's).
 */
static void parked_ranks(struct dbg_ckpt *ck, const struct sdm_idset *set, const pid_t *pid,
			 const char *what)
{
	struct sdm_idset *ask = sdm_set_copy(set);	/* their part may still say it */
	time_t end = time(NULL) + CK_WAIT_S;
	char err[512];
	bool pending;
	sdm_id id;

	do {
		pending = false;
		dbg_pump_output(ck->s, 100);
		sdm_set_for_each(id, set) {
			pid_t p = pid && pid[id] > 0 ? pid[id] : ck->rank[id].pid;
			int r;

			if (ck->rank[id].info_pid || p <= 0)
				continue;
			if (ask && sdm_set_contains(ask, id)) {
				r = dbg_parts_wait_debug(ck->sdm_parts, id, p, 0, err, sizeof(err));
				if (!r)
					ck->rank[id].info_pid = p;
				else if (r != -ETIMEDOUT)
					sdm_set_remove_element(ask, id);
			}
			pending |= !ck->rank[id].info_pid;
		}
	} while (pending && time(NULL) < end);
	sdm_set_for_each(id, set)
		if (!ck->rank[id].info_pid)
			dbg_error(ck->s, "%s: rank %u: no \"" CRS_DEBUG_INFO_PREFIX "\" line in %d s",
				  what, id, CK_WAIT_S);
	sdm_set_free(ask);
}

/*
 * The ranks' checkpoint is one job checkpoint (<crdbg/job.h>) with a part
 * per rank, taken at one cut, each on its node, under one handle (into
 * handle, "" if it failed); a part that fails calls off every part (no
 * handle is left anywhere) and says which. Every rank stays parked.
 */
static void checkpoint_parts(struct dbg_ckpt *ck, const struct sdm_idset *live,
			     unsigned int flags, char *handle, size_t hlen)
{
	struct dbg_session *s = ck->s;
	size_t n = sdm_set_size(live), i = 0, len = 0;
	struct crs_job_target *t = calloc(n, sizeof(*t));
	char here[CRS_NODE_MAX] = "localhost", err[1024], *what = NULL;
	FILE *f = open_memstream(&what, &len);
	struct crs_job_opts o;
	sdm_id id;

	handle[0] = 0;
	gethostname(here, sizeof(here) - 1);
	if (!t || !f) {
		dbg_error(s, "checkpoint: out of memory");
		goto out;
	}
	sdm_set_for_each(id, live) {
		const char *node = s->host && s->host[id] ? s->host[id] : here;

		snprintf(t[i].node, sizeof(t[i].node), "%s", node);
		snprintf(t[i].ranks, sizeof(t[i].ranks), "%u", id);
		t[i].pid = ck->rank[id].pid;
		fprintf(f, "%s%s:%d:%u", i ? "," : "", node, ck->rank[id].pid, id);
		i++;
	}
	if (fclose(f) || !what) {
		f = NULL;
		dbg_error(s, "checkpoint: out of memory");
		goto out;
	}
	f = NULL;
	parts_opts(ck, &o);
	o.debug = true;		/* the ranks stay parked for their gdbs */
	o.what = what;
	o.full = flags & DBG_CKPT_FULL;
	if (crs_job_checkpoint(&o, t, n, handle, hlen, err, sizeof(err))) {
		handle[0] = 0;
		dbg_error(s, "checkpoint: %s; nothing was kept, the job goes on", err);
	}
out:
	if (f)
		fclose(f);
	if (handle[0]) {
		parked_ranks(ck, live, NULL, "checkpoint");
	} else {
		/* thawed where they were parked: the debugger takes them back */
		sdm_set_for_each(id, live)
			ck->rank[id].info_pid = ck->rank[id].pid;
	}
	free(what);
	free(t);
}

/*
 * Restart the job checkpoint handle over the servers: every part is
 * restored on its rank's node and released at the barrier, its
 * processes parked for the debugger; the ranks whose part said so get
 * their info pid (the manifest's pid: CRIU gives it back).
 */
static void restart_parts(struct dbg_ckpt *ck, const char *handle, const struct sdm_idset *live)
{
	struct dbg_session *s = ck->s;
	pid_t *pid = calloc(s->n, sizeof(*pid));
	struct crs_job_opts o;
	struct crs_job j;
	char err[1024];
	int status;

	parts_opts(ck, &o);
	o.handle = handle;
	o.debug = true;
	if (!pid) {
		dbg_error(s, "restart: out of memory");
		return;
	}
	if (crs_job_restart(&o, &status, err, sizeof(err))) {
		dbg_error(s, "restart: %s", err);
		free(pid);
		return;
	}
	if (!crs_job_load(crs_store_root(NULL), handle, &j, err, sizeof(err))) {
		for (size_t i = 0; i < j.nr_parts; i++) {
			struct sdm_idset *r = sdm_set_new();
			sdm_id id;

			if (!strcmp(j.parts[i].ranks, "-") && i < s->n)
				pid[i] = j.parts[i].pid;	/* rank i is part i */
			else if (r && sdm_set_parse(r, j.parts[i].ranks, NULL) >= 0)
				sdm_set_for_each(id, r)
					if (id < s->n)
						pid[id] = j.parts[i].pid;
			sdm_set_free(r);
		}
		crs_job_free(&j);
	}
	parked_ranks(ck, live, pid, "restart");
	free(pid);
}

/*
 * An MPIR job: one `crdbg checkpoint MPIRUN --debug` takes mpirun and all
 * its ranks, once our gdb has let go of mpirun; the ranks' info lines
 * come through mpirun's output. Returns whether mpirun was detached.
 */
static bool checkpoint_job(struct dbg_ckpt *ck, unsigned int flags)
{
	char pid[16], err[256], *args[] = { "checkpoint", pid, "--debug", NULL, NULL };

	if (flags & DBG_CKPT_FULL)
		args[3] = "--full";

	if (dbg_mpir_detach(ck->mpir, err, sizeof(err))) {
		child_failed(&ck->job, err);
		return false;
	}
	snprintf(pid, sizeof(pid), "%d", dbg_mpir_pid(ck->mpir));
	if (child_start(&ck->job, false, args, ck->launch)) {
		snprintf(err, sizeof(err), "cannot run crdbg: %s", strerror(errno));
		child_failed(&ck->job, err);
	}
	return true;
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
	char handles[4096] = "", h[256];
	char park[64];
	bool mpirun_detached = false;
	size_t hl = 0;
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
	snprintf(park, sizeof(park), "park %llu",
		 (unsigned long long)(CRDBG_HOOK_DEBUG_SET | CRDBG_CRS_STATE_PARK));
	if (ranks_hook(s, live, NULL, park) ||
	    ranks_cli(s, live, NULL, "set var MPIR_checkpoint_debug_gate = 0") ||
	    ranks_cli(s, live, NULL, "set var MPIR_debug_with_checkpoint = 1")) {
		ranks_hook(s, live, NULL, "unpark");
		dbg_error(s, "checkpoint: the ranks cannot be parked (is libcrdbg preloaded?)");
		goto out;
	}
	if (ranks_cli(s, live, NULL, "detach")) {
		dbg_error(s, "checkpoint: a rank's gdb cannot detach");
		goto out;
	}
	if (!ck->parts) {
		mpirun_detached = checkpoint_job(ck, flags);
		wait_info_lines(ck, live, true, true, "checkpoint");
		child_handle(s, &ck->job, "", h, sizeof(h));
	} else {
		checkpoint_parts(ck, live, flags, h, sizeof(h));
	}
	hl = snprintf(handles, sizeof(handles), "%s", h);
	attach_and_release(ck, live, "checkpoint", mpirun_detached);
	if (hl) {
		if (!(flags & DBG_CKPT_QUIET))
			dbg_info(s, CRS_HANDLE_PREFIX "%s", handles);
		snprintf(ck->last, sizeof(ck->last), "%s", handles);
		if (out && outlen)
			snprintf(out, outlen, "%s", handles);
	}
out:
	sdm_set_free(live);
	return hl ? 0 : -1;
}

void dbg_ckpt_checkpoint(struct dbg_ckpt *ck)
{
	dbg_ckpt_take(ck, 0, NULL, 0);
}

int dbg_ckpt_remove_job(struct dbg_ckpt *ck, const char *handle, char *err, size_t errlen)
{
	struct ck_child c = { .fd = -1, .status = -1 };
	char *args[] = { "rm", (char *)handle, NULL };

	/* a job checkpoint of this session's ranks: its parts are on their nodes */
	if (ck->parts && crs_job_exists(crs_store_root(NULL), handle)) {
		struct crs_job_opts o;

		parts_opts(ck, &o);
		o.handle = handle;
		return crs_job_remove(&o, err, errlen);
	}
	if (child_start(&c, false, args, ck->launch)) {
		snprintf(err, errlen, "cannot run crdbg rm: %s", strerror(errno));
		return -errno;
	}
	child_wait(ck->s, 0, &c);
	if (c.fd >= 0)
		close(c.fd);
	if (!c.status)
		return 0;
	child_reason(&c, err, errlen);
	return -EIO;
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

/* Up to 5 s for a killed process to be gone (its pid free for CRIU). */
static void wait_gone(pid_t pid)
{
	for (int i = 0; i < 100 && pid > 0 && !kill(pid, 0); i++)
		usleep(50 * 1000);
}

/*
 * Every part of the job's checkpoint is whole (crdbg verify), checked
 * before anything is killed or restored: a missing or damaged part
 * refuses the restart, naming its rank, and the session is untouched.
 */
static bool parts_intact(struct dbg_ckpt *ck, const struct sdm_idset *set, char **handle)
{
	struct dbg_session *s = ck->s;
	struct ck_child *c = &ck->job;
	bool once = false;
	char line[512];
	sdm_id id;

	if (ck->parts) {
		struct crs_job_opts o;

		sdm_set_for_each(id, set) {
			parts_opts(ck, &o);
			o.handle = handle[id];	/* one handle for the whole job */
			if (!crs_job_verify(&o, line, sizeof(line)))
				return true;
			dbg_error(s, "restart: refused, nothing was changed: %s", line);
			return false;
		}
		return true;
	}
	sdm_set_for_each(id, set) {
		char *args[] = { "verify", handle[id], NULL };

		if (ck->mpir && once)
			continue;	/* one handle for the whole job */
		once = true;
		if (child_start(c, false, args, ck->launch)) {
			dbg_error(s, "restart: cannot run crdbg verify: %s", strerror(errno));
			return false;
		}
		child_wait(s, id, c);
		if (c->status) {
			child_last_line(c, line, sizeof(line));
			if (ck->parts)
				child_reason(c, line, sizeof(line));
			if (ck->mpir || ck->parts)
				dbg_error(s, "restart: refused, nothing was changed: %s", line);
			else
				dbg_error(s, "restart: refused, nothing was changed: rank %u: %s", id,
					  line);
			return false;
		}
	}
	return true;
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
	char *list = strdup(*arg ? arg : ck->last), *save = NULL, **handle = NULL, *h;
	const char *why;
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
	handle = calloc(s->n, sizeof(*handle));
	if (!handle)
		goto out;
	h = strtok_r(list, ", \t", &save);
	/*
	 * One job handle for every rank, or one image of mpirun's tree, or
	 * (older) one handle per rank.
	 */
	if (ck->parts && ck->mpir && !(h && crs_job_exists(crs_store_root(NULL), h))) {
		dbg_error(s, "restart: %s is not a job checkpoint: this job's ranks come back as the parts of one",
			  h ? h : "-");
		goto out;
	}
	if (ck->parts && ck->mpir && (why = dbg_mpir_restart_problem(ck->mpir))) {
		dbg_error(s, "restart: refused, nothing was changed: %s", why);
		goto out;
	}
	ck->parts = h && crs_job_exists(crs_store_root(NULL), h);
	sdm_set_for_each(id, live) {
		if (!h) {
			dbg_error(s, "restart: no handle for rank %u (one per rank, in rank order)", id);
			goto out;
		}
		handle[id] = h;
		ck->rank[id].pid = rank_pid(s, id);
		ck->rank[id].info_pid = 0;
		if (!ck->mpir && !ck->parts)
			h = strtok_r(NULL, ", \t", &save);
	}
	if ((ck->mpir || ck->parts) && strtok_r(NULL, ", \t", &save)) {
		dbg_error(s, "restart: a job checkpoint has one handle, not one per rank");
		goto out;
	}
	if (!parts_intact(ck, live, handle))
		goto out;
	/* mpirun first: it must not see its ranks die and end the job. */
	if (ck->mpir && dbg_mpir_pid(ck->mpir) > 0)
		kill(dbg_mpir_pid(ck->mpir), SIGKILL);
	if (ck->mpir && ck->parts)
		dbg_mpir_launcher_gone(ck->mpir);
	/* Those that exited have nothing to kill (gdb would say so as an error). */
	kill_job_ranks(s, stopped ? stopped : live, live);
	sdm_set_for_each(id, live)
		if (rank_here(ck, id))
			wait_gone(ck->rank[id].pid);
	if (ck->parts) {
		/* We restore every part on its node and release them together. */
		restart_parts(ck, h, live);
	} else if (ck->mpir) {
		char *args[] = { "restart", h, "--debug", NULL };

		/*
		 * A pipe, not a pty: mpirun's output comes back through our
		 * gdb's FIFOs, and the ranks' stdout ptys mpirun made must get
		 * their old indexes back.
		 */
		wait_gone(dbg_mpir_pid(ck->mpir));
		if (child_start(&ck->job, false, args, ck->launch))
			dbg_error(s, "restart: cannot run crdbg restart: %s", strerror(errno));
	} else {
		sdm_set_for_each(id, live) {
			char *args[] = { "restart", handle[id], "--debug", NULL };

			if (child_start(&ck->rank[id].child, true, args, NULL))
				dbg_error(s, "restart: rank %u: cannot run crdbg restart: %s", id,
					  strerror(errno));
		}
	}
	if (!ck->parts)
		wait_info_lines(ck, live, false, false, "restart");
	/* mpirun's tree came back with the ranks: our gdb takes it again. */
	attach_and_release(ck, live, "restart",
			   ck->mpir && !ck->parts && dbg_mpir_pid(ck->mpir) > 0 &&
			   !kill(dbg_mpir_pid(ck->mpir), 0));
	/* Ranks that had exited are stopped again where the checkpoint was. */
	sdm_set_for_each(id, live) {
		struct sdm_idset *one = one_rank(id);

		if (one && ck->rank[id].attached && s->state[id] == DBG_EXITED)
			dbg_set_state(s, one, DBG_STOPPED);
		sdm_set_free(one);
	}
out:
	free(handle);
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

/* Forward what restarted ranks write on the terminals CRIU gave them. */
static void on_pump(void *priv)
{
	struct dbg_ckpt *ck = priv;

	for (uint32_t i = 0; i < ck->n; i++)
		if (ck->rank[i].child.forward)
			child_poll(ck->s, i, &ck->rank[i].child);
}

static const struct dbg_listener ckpt_listener = {
	.pump = on_pump,
	.line = on_line,
	.stop = on_stop,
};

static void child_init(struct ck_child *c)
{
	c->fd = -1;
	c->status = -1;
}

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
	child_init(&ck->job);
	for (uint32_t i = 0; i < ck->n; i++)
		child_init(&ck->rank[i].child);
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
	for (uint32_t i = 0; i < ck->n; i++)
		if (ck->rank[i].child.fd >= 0)
			close(ck->rank[i].child.fd);
	if (ck->job.fd >= 0)
		close(ck->job.fd);
	free(ck->adopted);
	dbg_parts_free(ck->sdm_parts);
	free(ck->rank);
	free(ck);
}
