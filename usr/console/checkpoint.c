// SPDX-License-Identifier: GPL-2.0
/*
 * Console commands "checkpoint" and "restart HANDLE[,HANDLE...]": seed
 * 000's protocol for a single-node job whose ranks run with libcrdbg
 * (crdbg.ko needed). Each rank's gdb stays; only its inferior changes.
 *
 * checkpoint, per rank: every thread but the designated one (crdbg-ckpt)
 * has its registers saved in gdb convenience variables ($crdbg_<lwp>_<reg>)
 * and is forced into MPIR_checkpoint_debugger_waitpoint() (a call frame
 * pushed below the red zone, returning to its PC); MPIR_debug_with_checkpoint
 * is set and gdb detaches: the threads park with the gate closed. Then
 * `crdbg checkpoint PID --debug --backend kmod` (continue path), gdb
 * re-attaches, opens the gate and runs each thread to a temporary
 * breakpoint at its saved PC, where the saved registers are written back.
 * gdb keeps its breakpoints across detach and attach.
 *
 * restart: each rank's process is killed and `crdbg restart H --debug`
 * runs (its own output on a pty of ours); CRIU restores the same pid, with
 * its stdio on the FIFO of the rank's gdb (crdbg debug --preload), so its
 * "MPIR debug info) host:pid" line and later output come through the
 * rank's server. Once every thread runs the hook, gdb attaches and the
 * same release as above brings every thread back to the saved position.
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

#include "../crs/marker.h"
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "session.h"

#define CK_MAX_THREADS	64
#define CK_WAIT_S	120

static const char *const ck_regs[] = {
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r8", "r9", "r10",
	"r11", "r12", "r13", "r14", "r15", "eflags", "rsp",
};

struct ck_thread {
	int num;	/* gdb thread number */
	int lwp;
	bool designated;
	bool selected;
};

/* Per-rank state that outlives a command. */
struct ck_rank {
	int pid;
	int lwp[CK_MAX_THREADS];	/* the parked (non-designated) threads */
	int nlwp;
	int selected_lwp;
	int pty;			/* master of crdbg restart's terminal */
	pid_t restarter;
};

static struct ck_rank *ck;
static uint32_t ck_n;
static char ck_last[4096];	/* handles of the last checkpoint */

static int ck_init(struct dbg_session *s)
{
	if (ck)
		return 0;
	ck = calloc(s->n, sizeof(*ck));
	if (!ck)
		return -ENOMEM;
	ck_n = s->n;
	for (uint32_t i = 0; i < ck_n; i++)
		ck[i].pty = -1;
	return 0;
}

/* One command to one rank; the reply text (malloc'd), or NULL if it failed. */
static char *rank_cmd(struct dbg_session *s, sdm_id id, bool quiet, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static char *rank_cmd(struct dbg_session *s, sdm_id id, bool quiet, const char *fmt, ...)
{
	struct sdm_idset *set = sdm_set_new();
	struct sdm_fe_result r = { 0 };
	char cmd[4000], *text = NULL;
	bool error = true;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (!set)
		return NULL;
	sdm_set_add_element(set, id);
	if (dbg_send(s, set, cmd, DBG_LOAD_TIMEOUT, &r) == 0 && r.nev) {
		const char *t = dbg_event_text(s, r.ev[0].type, r.ev[0].src,
					       (const char *)r.ev[0].payload, &error);

		if (!error)
			text = strdup(t);
		else if (!quiet)
			dbg_info(s, "rank %u: %.60s: %s", id, cmd, t);
	} else if (!quiet) {
		dbg_info(s, "rank %u: no reply to '%.60s'", id, cmd);
	}
	sdm_fe_result_free(&r);
	sdm_set_free(set);
	return text;
}

static int rank_ok(struct dbg_session *s, sdm_id id, const char *fmt, const char *arg)
{
	char *t = rank_cmd(s, id, false, fmt, arg);

	free(t);
	return t ? 0 : -EIO;
}

/* Threads of the rank from "info threads". */
static int list_threads(struct dbg_session *s, sdm_id id, struct ck_thread *th)
{
	char *text = rank_cmd(s, id, false, "cli info threads"), *line, *save;
	int n = 0;

	if (!text)
		return -EIO;
	for (line = strtok_r(text, "\n", &save); line && n < CK_MAX_THREADS;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *p = line, *l = strstr(line, "(LWP ");
		char *end;

		while (*p == ' ' || *p == '*')
			p++;
		if (!l || *p < '0' || *p > '9')
			continue;
		th[n].num = strtol(p, &end, 10);
		th[n].lwp = atoi(l + 5);
		th[n].selected = line[0] == '*';
		th[n].designated = strstr(l, "\"crdbg-ckpt\"") != NULL;
		n++;
	}
	free(text);
	return n;
}

static int rank_pid(struct dbg_session *s, sdm_id id)
{
	char *t = rank_cmd(s, id, false, "status"), st[16];
	int gdb = 0, pid = 0;

	if (t && sscanf(t, "%15s gdb=%d pid=%d", st, &gdb, &pid) < 3)
		pid = 0;
	free(t);
	return pid;
}

/* Save the registers of every non-designated thread, push the waitpoint. */
static int park(struct dbg_session *s, sdm_id id)
{
	struct ck_thread th[CK_MAX_THREADS];
	struct ck_rank *r = &ck[id];
	int n = list_threads(s, id, th);
	char expr[2048];
	size_t len;

	if (n <= 0)
		return -EIO;
	r->nlwp = 0;
	for (int i = 0; i < n; i++) {
		if (th[i].designated)
			continue;
		if (th[i].selected)
			r->selected_lwp = th[i].lwp;
		if (r->nlwp == CK_MAX_THREADS)
			return -E2BIG;
		r->lwp[r->nlwp++] = th[i].lwp;
		free(rank_cmd(s, id, false, "cli thread %d", th[i].num));
		len = snprintf(expr, sizeof(expr), "cli output $crdbg_%d_rip = $rip", th[i].lwp);
		for (size_t k = 0; k < sizeof(ck_regs) / sizeof(ck_regs[0]); k++)
			len += snprintf(expr + len, sizeof(expr) - len, ", $crdbg_%d_%s = $%s",
					th[i].lwp, ck_regs[k], ck_regs[k]);
		if (rank_ok(s, id, "%s", expr))
			return -EIO;
		snprintf(expr, sizeof(expr),
			 "cli output $sp = (void *)((((unsigned long)$sp - 256) & -16) - 8), *(unsigned long *)$sp = (unsigned long)$crdbg_%d_rip, $pc = &MPIR_checkpoint_debugger_waitpoint",
			 th[i].lwp);
		if (rank_ok(s, id, "%s", expr))
			return -EIO;
	}
	return 0;
}

/* park() failed before the detach: put the saved registers back as they were. */
static void unpark(struct dbg_session *s, sdm_id id)
{
	struct ck_thread th[CK_MAX_THREADS];
	struct ck_rank *r = &ck[id];
	int n = list_threads(s, id, th);
	char expr[2048];
	size_t len;

	for (int k = 0; k < r->nlwp; k++) {
		for (int i = 0; i < n; i++) {
			if (th[i].lwp != r->lwp[k])
				continue;
			free(rank_cmd(s, id, true, "cli thread %d", th[i].num));
			len = snprintf(expr, sizeof(expr), "cli output $pc = $crdbg_%d_rip", th[i].lwp);
			for (size_t j = 0; j < sizeof(ck_regs) / sizeof(ck_regs[0]); j++)
				len += snprintf(expr + len, sizeof(expr) - len, ", $%s = $crdbg_%d_%s",
						ck_regs[j], th[i].lwp, ck_regs[j]);
			free(rank_cmd(s, id, true, "%s", expr));
		}
	}
	r->nlwp = 0;
}

/* Attached and parked: open the gate, run each thread back to its place. */
static int release(struct dbg_session *s, sdm_id id)
{
	struct ck_thread th[CK_MAX_THREADS];
	struct ck_rank *r = &ck[id];
	int n = list_threads(s, id, th), sel = 0;
	char expr[2048], *t;
	size_t len;

	if (n <= 0)
		return -EIO;
	for (int k = 0; k < r->nlwp; k++) {
		for (int i = 0; i < n; i++) {
			if (th[i].lwp != r->lwp[k])
				continue;
			snprintf(expr, sizeof(expr), "cli tbreak *$crdbg_%d_rip thread %d",
				 th[i].lwp, th[i].num);
			if (rank_ok(s, id, "%s", expr))
				return -EIO;
		}
	}
	if (rank_ok(s, id, "%s", "cli output MPIR_checkpoint_debug_gate = 1"))
		return -EIO;
	t = rank_cmd(s, id, false, "exec %d continue", DBG_SLICE_MS);
	for (time_t end = time(NULL) + CK_WAIT_S; t && !strcmp(t, "running");) {
		free(t);
		if (time(NULL) > end) {
			dbg_info(s, "rank %u: the threads did not come back from the waitpoint", id);
			return -ETIMEDOUT;
		}
		t = rank_cmd(s, id, false, "wait %d", DBG_SLICE_MS);
	}
	if (!t)
		return -EIO;
	free(t);
	/* Every thread that stopped at its PC gets its registers back. */
	n = list_threads(s, id, th);
	for (int k = 0; k < r->nlwp; k++) {
		for (int i = 0; i < n; i++) {
			if (th[i].lwp != r->lwp[k])
				continue;
			if (th[i].lwp == r->selected_lwp)
				sel = th[i].num;
			free(rank_cmd(s, id, false, "cli thread %d", th[i].num));
			t = rank_cmd(s, id, false, "cli output $pc == $crdbg_%d_rip", th[i].lwp);
			if (!t || strcmp(t, "1")) {
				dbg_info(s, "rank %u: thread %d is not back at its PC", id, th[i].lwp);
				free(t);
				continue;
			}
			free(t);
			len = snprintf(expr, sizeof(expr), "cli output 0");
			for (size_t j = 0; j < sizeof(ck_regs) / sizeof(ck_regs[0]); j++)
				len += snprintf(expr + len, sizeof(expr) - len, ", $%s = $crdbg_%d_%s",
						ck_regs[j], th[i].lwp, ck_regs[j]);
			rank_ok(s, id, "%s", expr);
		}
	}
	if (sel)
		free(rank_cmd(s, id, false, "cli thread %d", sel));
	free(rank_cmd(s, id, false, "cli output MPIR_debug_with_checkpoint = 0"));
	return 0;
}

/* Run crdbg with args; its stdout+stderr in out (NUL terminated). Exit status. */
static int run_crdbg(char *const args[], char *out, size_t outlen)
{
	char self[4096];
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int pfd[2], status = 0;
	size_t got = 0;
	pid_t pid;

	if (l <= 0 || pipe2(pfd, O_CLOEXEC))
		return -1;
	self[l] = 0;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		char *argv[16] = { "crdbg" };
		int i;

		for (i = 0; args[i] && i < 14; i++)
			argv[i + 1] = args[i];
		argv[i + 1] = NULL;
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		execv(self, argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n = read(pfd[0], out + got, outlen - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
		if (got == outlen - 1)
			break;
	}
	out[got] = 0;
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void last_line(char *out, char *buf, size_t len)
{
	size_t n = strlen(out);

	while (n && out[n - 1] == '\n')
		out[--n] = 0;
	snprintf(buf, len, "%.400s", strrchr(out, '\n') ? strrchr(out, '\n') + 1 : out);
}

static bool all_stopped(struct dbg_session *s, struct sdm_idset *live)
{
	sdm_id id;

	sdm_set_for_each(id, live) {
		if (s->state[id] != DBG_STOPPED) {
			dbg_info(s, "rank %u is not stopped: interrupt it first", id);
			return false;
		}
	}
	return true;
}

void dbg_checkpoint(struct dbg_session *s)
{
	struct sdm_idset *all = sdm_set_new(), *live;
	char handles[4096] = "", out[8192], line[512], h[256];
	size_t hl = 0;
	sdm_id id;

	if (!all)
		return;
	sdm_set_add_range(all, 0, s->n - 1);
	live = dbg_live(s, all);
	sdm_set_free(all);
	if (!live || ck_init(s) || !all_stopped(s, live))
		goto out;
	sdm_set_for_each(id, live) {
		char pid[16], *args[] = { "checkpoint", pid, "--debug", "--backend", "kmod", NULL };
		int rc;

		ck[id].pid = rank_pid(s, id);
		if (ck[id].pid <= 0 || park(s, id) ||
		    rank_ok(s, id, "%s", "cli output MPIR_debug_with_checkpoint = 1") ||
		    rank_ok(s, id, "%s", "cli detach")) {
			dbg_info(s, "checkpoint: rank %u cannot be prepared (is libcrdbg preloaded?)", id);
			unpark(s, id);
			s->errors++;
			goto out;
		}
		usleep(300 * 1000);	/* the threads enter the waitpoint */
		snprintf(pid, sizeof(pid), "%d", ck[id].pid);
		rc = run_crdbg(args, out, sizeof(out));
		h[0] = 0;
		for (char *p = strtok(out, "\n"); p; p = strtok(NULL, "\n"))
			if (!crs_parse_checkpoint_handle(p, h, sizeof(h)))
				break;
		if (rc || !h[0]) {
			last_line(out, line, sizeof(line));
			dbg_info(s, "checkpoint: rank %u: %s", id, line);
			s->errors++;
		} else {
			dbg_info(s, "[%u] " CRS_HANDLE_PREFIX "%s", id, h);
			hl += snprintf(handles + hl, sizeof(handles) - hl, "%s%s",
				       hl ? "," : "", h);
		}
		if (rank_ok(s, id, "cli attach %s", pid) || release(s, id)) {
			dbg_info(s, "checkpoint: rank %u could not be re-attached", id);
			s->errors++;
		}
		dbg_pump_output(s, 100);
	}
	if (hl) {
		dbg_info(s, CRS_HANDLE_PREFIX "%s", handles);
		snprintf(ck_last, sizeof(ck_last), "%s", handles);
	}
out:
	sdm_set_free(live);
}

/* crdbg restart H --debug on a new pty; the master, or -1. */
static int spawn_restart(const char *handle, pid_t *ret_pid)
{
	char self[4096];
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	pid_t pid;

	if (l <= 0 || m < 0)
		return -1;
	self[l] = 0;
	if (grantpt(m) || unlockpt(m)) {
		close(m);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(m);
		return -1;
	}
	if (!pid) {
		struct termios t;
		int sl;

		setsid();
		sl = open(ptsname(m), O_RDWR);
		if (sl < 0)
			_exit(127);
		ioctl(sl, TIOCSCTTY, 0);
		if (!tcgetattr(sl, &t)) {
			t.c_oflag &= ~ONLCR;
			t.c_lflag &= ~ECHO;
			tcsetattr(sl, TCSANOW, &t);
		}
		dup2(sl, 0);
		dup2(sl, 1);
		dup2(sl, 2);
		if (sl > 2)
			close(sl);
		execl(self, "crdbg", "restart", handle, "--debug", (char *)NULL);
		_exit(127);
	}
	*ret_pid = pid;
	return m;
}

/* Are pid's threads all past the restart (none stopped or traced)? */
static bool restored(int pid)
{
	char path[64], buf[512];
	int ntask = 0;
	DIR *d;
	struct dirent *e;
	bool ok = true;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (ok && (e = readdir(d))) {
		FILE *f;
		char *p = NULL;

		if (e->d_name[0] == '.')
			continue;
		snprintf(buf, sizeof(buf), "/proc/%d/task/%.20s/stat", pid, e->d_name);
		f = fopen(buf, "r");
		if (!f || !fgets(buf, sizeof(buf), f) || !(p = strrchr(buf, ')')))
			ok = false;
		else if (p[2] != 'S' && p[2] != 'R')
			ok = false;
		if (f)
			fclose(f);
		ntask++;
	}
	closedir(d);
	return ok && ntask;
}

/*
 * Wait until crdbg restart has restored pid and released it into the hook
 * (its "MPIR debug info)" line goes to the program's stderr, which the
 * rank's server forwards); 0, or -1 with the restarter's last words.
 */
static int wait_restored(int m, pid_t restarter, int pid, char *last, size_t lastlen)
{
	char buf[4096];
	time_t end = time(NULL) + CK_WAIT_S;
	int calm = 0, status;

	last[0] = 0;
	while (time(NULL) < end) {
		struct pollfd p = { .fd = m, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 200) > 0) {
			n = read(m, buf, sizeof(buf) - 1);
			if (n > 0) {
				char *nl;

				buf[n] = 0;
				while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
					buf[--n] = 0;
				nl = strrchr(buf, '\n');
				if (n)
					snprintf(last, lastlen, "%.400s", nl ? nl + 1 : buf);
			}
		}
		if (waitpid(restarter, &status, WNOHANG) == restarter) {
			if (!last[0])
				snprintf(last, lastlen, "crdbg restart exited");
			return -1;
		}
		calm = restored(pid) ? calm + 1 : 0;
		if (calm >= 3)
			return 0;
	}
	snprintf(last, lastlen, "pid %d was not restored in %d s", pid, CK_WAIT_S);
	return -1;
}

void dbg_restart(struct dbg_session *s, const char *arg)
{
	struct sdm_idset *all = sdm_set_new(), *live = NULL;
	char *list = strdup(*arg ? arg : ck_last), *save = NULL, *h, last[512];
	sdm_id id;

	if (!all || !list)
		goto out;
	if (!*list) {
		dbg_info(s, "restart: no handle given and no checkpoint taken yet");
		goto out;
	}
	sdm_set_add_range(all, 0, s->n - 1);
	live = dbg_live(s, all);
	if (!live || ck_init(s) || !all_stopped(s, live))
		goto out;
	h = strtok_r(list, ", \t", &save);
	sdm_set_for_each(id, live) {
		int pid;

		if (!h) {
			dbg_info(s, "restart: no handle for rank %u (one per rank, in rank order)", id);
			s->errors++;
			goto out;
		}
		free(rank_cmd(s, id, true, "cli kill"));
		for (int i = 0; i < 100 && ck[id].pid > 0 && !kill(ck[id].pid, 0); i++)
			usleep(50 * 1000);
		if (ck[id].pty >= 0)
			close(ck[id].pty);
		ck[id].pty = spawn_restart(h, &ck[id].restarter);
		if (ck[id].pty < 0) {
			dbg_info(s, "restart: rank %u: cannot run crdbg restart: %s", id,
				 strerror(errno));
			s->errors++;
			goto out;
		}
		pid = ck[id].pid;
		if (wait_restored(ck[id].pty, ck[id].restarter, pid, last, sizeof(last))) {
			dbg_info(s, "restart: rank %u: %s", id, last);
			s->errors++;
			goto out;
		}
		snprintf(last, sizeof(last), "%d", pid);
		if (rank_ok(s, id, "cli attach %s", last) || release(s, id)) {
			dbg_info(s, "restart: rank %u could not be re-attached", id);
			s->errors++;
		}
		dbg_pump_output(s, 100);
		h = strtok_r(NULL, ", \t", &save);
	}
out:
	free(list);
	sdm_set_free(all);
	sdm_set_free(live);
}

/* Forward what restarted ranks wrote on their terminals. */
void dbg_ckpt_output(struct dbg_session *s)
{
	char buf[4096];

	for (uint32_t i = 0; ck && i < ck_n; i++) {
		struct pollfd p = { .fd = ck[i].pty, .events = POLLIN };
		ssize_t n;

		if (ck[i].restarter > 0 && waitpid(ck[i].restarter, NULL, WNOHANG) == ck[i].restarter)
			ck[i].restarter = 0;

		while (ck[i].pty >= 0 && poll(&p, 1, 0) > 0) {
			n = read(ck[i].pty, buf, sizeof(buf));
			if (n <= 0) {
				close(ck[i].pty);
				ck[i].pty = -1;
				break;
			}
			dbg_rank_output(s, i, buf, n);
		}
	}
}
