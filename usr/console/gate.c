// SPDX-License-Identifier: GPL-2.0
/*
 * Acquisition of an MPI job through libcrdbg-mpi's hold (gate.h): the
 * launcher is ours, its output comes to the console as the launcher's
 * ([mpirun] lines), and the ranks' hold lines in it say which pid is
 * which rank.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crdbg/dbgproto.h"
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "gate.h"
#include "launcher-env.h"
#include "mpir-probe.h"
#include "session.h"

#define GATE_TIMEOUT_MS	180000	/* every rank held: a bound, the host is busy */
#define GATE_MAX_RANKS	4096
#define GATE_MARK	"crdbg-mpi: hold rank "

struct gate_rank {
	int pid;
	char exe[PATH_MAX];
};

struct dbg_gate {
	struct dbg_session *s;
	pid_t launcher;
	int out;			/* the launcher's stdout and stderr */
	struct gate_rank *rank;
	long n, seen;
	bool bad;			/* a hold line that does not fit */
};

struct dbg_gate *dbg_gate_new(struct dbg_session *s)
{
	struct dbg_gate *g = calloc(1, sizeof(*g));

	if (g) {
		g->s = s;
		g->out = -1;
	}
	return g;
}

/* "crdbg-mpi: hold rank R of N pid P exe PATH" */
static void gate_line(void *priv, uint32_t id, const char *line, size_t len)
{
	struct dbg_gate *g = priv;
	char buf[PATH_MAX + 128];
	long r, n;
	int pid, off = 0;

	if (id != DBG_MPIRUN || len >= sizeof(buf) ||
	    len < sizeof(GATE_MARK) - 1 || memcmp(line, GATE_MARK, sizeof(GATE_MARK) - 1))
		return;
	memcpy(buf, line, len);
	buf[len] = 0;
	if (sscanf(buf, GATE_MARK "%ld of %ld pid %d exe %n", &r, &n, &pid, &off) != 3 ||
	    !off || n <= 0 || n > GATE_MAX_RANKS || r < 0 || r >= n || pid <= 0 ||
	    (g->n && n != g->n)) {
		g->bad = true;
		return;
	}
	if (!g->rank) {
		g->rank = calloc(n, sizeof(*g->rank));
		if (!g->rank) {
			g->bad = true;
			return;
		}
		g->n = n;
	}
	if (!g->rank[r].pid)
		g->seen++;
	g->rank[r].pid = pid;
	snprintf(g->rank[r].exe, sizeof(g->rank[r].exe), "%s", buf + off);
}

/* Every launcher line; the gate's are shown as they are. */
static bool on_line(void *priv, uint32_t id, const char *line, size_t len)
{
	gate_line(priv, id, line, len);
	return false;
}

static void pump(void *priv)
{
	struct dbg_gate *g = priv;
	char buf[4096];
	ssize_t n;

	while (g->out >= 0 && (n = read(g->out, buf, sizeof(buf))) > 0)
		dbg_rank_output(g->s, DBG_MPIRUN, buf, n);
}

/* The session ends: the ranks die through their gdbs, then the launcher. */
static void on_stop(void *priv)
{
	struct dbgp_cmd kill_cmd = { .verb = DBGP_CLI, .arg = "kill" };
	struct dbg_gate *g = priv;
	struct sdm_idset *all = sdm_set_new(), *live;
	struct sdm_fe_result r;

	if (g->s->fe && g->s->n && all &&
	    sdm_set_add_range(all, 0, g->s->n - 1) == 0) {
		live = dbg_live(g->s, all);
		if (live && dbg_send(g->s, live, &kill_cmd, DBG_CMD_TIMEOUT, &r) == 0)
			sdm_fe_result_free(&r);
		sdm_set_free(live);
	}
	sdm_set_free(all);
	pump(g);
	dbg_flush_lines(g->s);
}

static void on_stopped(void *priv)
{
	struct dbg_gate *g = priv;
	struct timespec ts = { 0, 50000000 };

	if (g->launcher <= 0)
		return;
	kill(-g->launcher, SIGTERM);
	for (int i = 0; i < 100 && waitpid(g->launcher, NULL, WNOHANG) == 0; i++)
		nanosleep(&ts, NULL);
	if (waitpid(g->launcher, NULL, WNOHANG) == 0) {
		kill(-g->launcher, SIGKILL);
		waitpid(g->launcher, NULL, 0);
	}
	g->launcher = 0;
}

static const struct dbg_listener gate_listener = {
	.pump = pump,
	.line = on_line,
	.stop = on_stop,
	.stopped = on_stopped,
};

static int spawn(struct dbg_gate *g, char *const *argv)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	g->launcher = fork();
	if (g->launcher < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (g->launcher == 0) {
		int null = open("/dev/null", O_RDONLY);

		setpgid(0, 0);	/* killed as a group, ranks and all */
		dup2(null, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		setenv("CRDBG_MPI_HOLD", "1", 1);
		execvp(argv[0], argv);
		fprintf(stderr, "crdbg: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	g->out = p[0];
	fcntl(g->out, F_SETFL, O_NONBLOCK);
	return 0;
}

/* Until every rank said it is held; -ETIMEDOUT, -ECHILD (launcher gone). */
static int wait_holds(struct dbg_gate *g)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!g->n || g->seen < g->n) {
		struct pollfd pfd = { .fd = g->out, .events = POLLIN };

		if (g->bad)
			return -EPROTO;
		if (waitpid(g->launcher, NULL, WNOHANG) == g->launcher) {
			pump(g);
			g->launcher = 0;
			return -ECHILD;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 > GATE_TIMEOUT_MS)
			return -ETIMEDOUT;
		poll(&pfd, 1, 200);
		pump(g);
	}
	return 0;
}

/* One server's gdb attaches to each rank. */
static int attach(struct dbg_gate *g)
{
	struct sdm_idset *one = sdm_set_new();
	struct sdm_fe_result r;
	int rc = 0;

	for (long i = 0; one && i < g->n && !rc; i++) {
		struct dbgp_cmd c = { .verb = DBGP_ATTACH, .pid = g->rank[i].pid,
				      .arg = g->rank[i].exe };

		sdm_set_clear(one);
		sdm_set_add_element(one, i);
		rc = dbg_send(g->s, one, &c, dbg_load_timeout(g->s), &r);
		if (!rc) {
			for (unsigned int k = 0; k < r.nev; k++)
				if (r.ev[k].type != SDM_MSG_REPLY)
					rc = -EIO;
			sdm_fe_result_free(&r);
		}
	}
	sdm_set_free(one);
	return one ? rc : -ENOMEM;
}

/*
 * argv with --preload's library given to the ranks by the launcher's own
 * option (launcher-env.h) after its name, in *ret (free it and *ret_made);
 * 0, -ENOTSUP (no such option known: err says so), -ENOMEM.
 */
static int preload_argv(char *const *argv, const char *lib, char ***ret, char **ret_made,
			char *err, size_t errlen)
{
	const char *env[DBG_LAUNCHER_ENV_MAX_ARGS];
	struct mpir_probe p = { .family = MPIR_FAMILY_OTHER };
	size_t n = 0;
	char **v;
	int k;

	mpir_probe_program(argv[0], &p);
	k = dbg_launcher_preload_args(p.family, lib, env, ret_made);
	if (k <= 0) {
		if (!k)
			snprintf(err, errlen, "--preload: %s has no option crdbg knows that gives the ranks alone LD_PRELOAD (mpirun, srun and mpiexec.hydra have): preload the library with the launcher's own option instead",
				 argv[0]);
		return k ? k : -ENOTSUP;
	}
	while (argv[n])
		n++;
	v = calloc(n + 1 + (size_t)k, sizeof(*v));
	if (!v) {
		free(*ret_made);
		return -ENOMEM;
	}
	v[0] = argv[0];
	memcpy(v + 1, env, (size_t)k * sizeof(*v));
	memcpy(v + 1 + k, argv + 1, n * sizeof(*v));	/* with the NULL */
	*ret = v;
	return 0;
}

int dbg_gate_start(struct dbg_gate *g, char *const *argv, const char *bindir,
		   char *err, size_t errlen)
{
	struct dbgp_cmd gate = { .verb = DBGP_CLI, .arg = "set var crdbg_mpi_gate = 1" };
	struct dbgp_cmd where = { .verb = DBGP_WAIT };
	struct sdm_idset *all;
	struct sdm_fe_result r;
	int rc;

	/* What the launcher says itself is labelled with its name. */
	snprintf(g->s->launcher_name, sizeof(g->s->launcher_name), "%.31s",
		 strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0]);
	if (g->s->preload) {
		char **v = NULL, *made = NULL;

		rc = preload_argv(argv, g->s->preload, &v, &made, err, errlen);
		if (rc)
			return rc;
		rc = dbg_session_listen(g->s, &gate_listener, g);
		if (!rc)
			rc = spawn(g, v);
		free(v);
		free(made);
	} else {
		rc = dbg_session_listen(g->s, &gate_listener, g);
		if (!rc)
			rc = spawn(g, argv);
	}
	if (!rc)
		rc = wait_holds(g);
	if (rc) {
		snprintf(err, errlen, "%s: %s", argv[0],
			 rc == -ECHILD ? "the launcher exited before every rank was held "
					 "(no libcrdbg-mpi preloaded in the ranks?)" :
			 rc == -ETIMEDOUT ? "not every rank said it is held in MPI_Init" :
			 rc == -EPROTO ? "a rank's hold line does not fit the others" :
			 strerror(-rc));
		return rc;
	}
	rc = dbg_session_start(g->s, g->n, bindir, NULL, err, errlen);
	if (rc < 0)
		return rc;
	rc = attach(g);
	if (rc) {
		snprintf(err, errlen, "cannot attach the ranks: %s", strerror(-rc));
		return rc;
	}
	all = sdm_set_new();
	if (!all || sdm_set_add_range(all, 0, g->n - 1) < 0) {
		sdm_set_free(all);
		return -ENOMEM;
	}
	/* The launcher's SIGCONT and SIGTERM end the ranks of a dead job. */
	dbg_pass_launcher_signals(g->s, all);
	/* Open the gate; gdb keeps them stopped in MPI_Init. */
	if (dbg_send(g->s, all, &gate, DBG_CMD_TIMEOUT, &r) == 0)
		sdm_fe_result_free(&r);
	if (dbg_send(g->s, all, &where, DBG_CMD_TIMEOUT, &r) == 0) {
		dbg_print_result(g->s, "attach", &r);
		sdm_fe_result_free(&r);
	}
	sdm_set_free(all);
	return 0;
}

void dbg_gate_free(struct dbg_gate *g)
{
	if (!g)
		return;
	if (g->out >= 0)
		close(g->out);
	free(g->rank);
	free(g);
}
