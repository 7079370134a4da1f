// SPDX-License-Identifier: GPL-2.0
/*
 * The crdbg console: start the session (every rank stopped at main), run
 * the -ex commands and the --batch file, then read commands with
 * readline (history, command completion) or, without a terminal, from
 * stdin line by line. While it waits for a line it watches the session:
 * program output and the ranks that stop, exit or die are printed at
 * once (above the prompt and the line being typed, at a terminal).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "crdbg/console.h"
#include "crdbg/dbgproto.h"
#include "sdm/frontend.h"
#include "sdm/idset.h"
#include "sdm/message.h"
#include "breakpoints.h"
#include "checkpoint.h"
#include "commands.h"
#include "adopt.h"
#include "mpir.h"
#include "mpir-probe.h"
#include "gate.h"
#include "pstep.h"
#include "session.h"
#include "timeline.h"

#define DBG_BATCH_WAIT_S	120	/* batch: a run command waits at most this */
#define DBG_LINE_BYTES		4096
#define DBG_WATCH_MS		500	/* running ranks are asked this often */
#define DBG_WATCH_QUIET_MS	20	/* output is taken in at most this often */

static volatile int interrupted, terminate;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* SIGTERM, SIGHUP: end the session cleanly (programs killed, gdbs reaped). */
static void on_sigterm(int sig)
{
	(void)sig;
	terminate = 1;
	interrupted = 1;
}

static void echo_command(struct dbg_session *s, const char *line)
{
	if (s->json) {
		fputs("{\"type\":\"command\",\"text\":", s->out);
		dbg_json_str(s->out, line);
		fputs("}\n", s->out);
	} else {
		fprintf(s->out, "(crdbg) %s\n", line);
	}
	fflush(s->out);
}

static char *complete_command(const char *text, int state)
{
	static size_t i, len;
	const char *name;

	if (!state) {
		i = 0;
		len = strlen(text);
	}
	while ((name = dbg_command_word(i))) {
		i++;
		if (!strncmp(name, text, len))
			return strdup(name);
	}
	return NULL;
}

/* The console whose prompt is up (completion asks one of its gdbs). */
static struct dbg_console *prompt_console;
static char **gdb_matches;	/* complete_gdb's candidates, NULL-terminated */

/*
 * Candidates for the word at start of the line (without its [ranks]
 * prefix, which is skip bytes long) from the program's debug info: the
 * lowest live rank's gdb runs "complete LINE" and answers with whole
 * lines, the candidate at the same offset in each.
 */
static void ask_gdb(const char *line, int skip, int start)
{
	struct dbg_session *s = prompt_console->s;
	struct sdm_idset *all = sdm_set_new(), *live = NULL, *one = sdm_set_new();
	char cmd[DBG_LINE_BYTES + 16];
	struct dbgp_cmd c = { .verb = DBGP_CLI, .arg = cmd };
	struct sdm_fe_result r = { 0 };
	size_t n = 0, off = start - skip;
	sdm_id id;

	if (all && one && sdm_set_add_range(all, 0, s->n - 1) == 0)
		live = dbg_live(s, all);
	if (!live || !sdm_set_find_next(live, 0, &id) || sdm_set_add_element(one, id))
		goto out;
	snprintf(cmd, sizeof(cmd), "complete %.*s", (int)(rl_point - skip), line + skip);
	if (dbg_send(s, one, &c, DBG_CMD_TIMEOUT, &r) || !r.nev ||
	    r.ev[0].type != SDM_MSG_REPLY)
		goto out;
	for (char *p = (char *)r.ev[0].payload; *p; n++)
		p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n');
	gdb_matches = calloc(n + 1, sizeof(*gdb_matches));
	n = 0;
	for (char *p = strtok((char *)r.ev[0].payload, "\n"); p && gdb_matches;
	     p = strtok(NULL, "\n"))
		if (strlen(p) > off && !strstr(p, "*** List may be truncated"))
			gdb_matches[n++] = strdup(p + off);
out:
	sdm_fe_result_free(&r);
	sdm_set_free(all);
	sdm_set_free(live);
	sdm_set_free(one);
}

static char *complete_gdb(const char *text, int state)
{
	static size_t i;

	(void)text;
	if (!state)
		i = 0;
	if (gdb_matches && gdb_matches[i])
		return strdup(gdb_matches[i++]);
	return NULL;
}

static void free_matches(void)
{
	for (size_t i = 0; gdb_matches && gdb_matches[i]; i++)
		free(gdb_matches[i]);
	free(gdb_matches);
	gdb_matches = NULL;
}

static char **complete(const char *text, int start, int end)
{
	const char *line = rl_line_buffer;
	char **found;
	int i = 0, skip;

	(void)end;
	/* The command word: first on the line, or right after "[ranks]". */
	while (i < start && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i < start && line[i] == '[') {
		while (i < start && line[i] != ']')
			i++;
		i++;
		while (i < start && line[i] == ' ')
			i++;
	}
	skip = i;	/* the command word: gdb gets the line from here */
	if (i == start) {
		rl_attempted_completion_over = 1;
		return rl_completion_matches(text, complete_command);
	}
	/* Arguments: symbols, files and locations from gdb, else file names. */
	free_matches();
	if (prompt_console)
		ask_gdb(line, skip, start);
	found = gdb_matches && gdb_matches[0] ?
		rl_completion_matches(text, complete_gdb) : NULL;
	free_matches();
	if (found)
		rl_attempted_completion_over = 1;
	return found;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Wait until fd can be read, watching the session meanwhile: output as
 * it arrives, and every DBG_WATCH_MS the ranks that run (dbg_watch()).
 * show() prints what the watch produced (NULL: it went to the session's
 * stream directly). false on ^C (interrupted set) or SIGTERM.
 */
static bool wait_input(struct dbg_console *c, int fd,
		       void (*show)(const char *text, size_t len))
{
	struct dbg_session *s = c->s;
	uint64_t next = now_ms() + DBG_WATCH_MS, quiet = 0;

	for (;;) {
		uint64_t now = now_ms(), until = quiet > now && quiet < next ? quiet : next;
		struct pollfd p[2] = {
			{ .fd = fd, .events = POLLIN },
			/* Not again at once: no busy loop on a socket left ready. */
			{ .fd = s->fe && quiet <= now ? sdm_fe_poll_fd(s->fe) : -1,
			  .events = POLLIN },
		};
		FILE *real = s->out, *mem = NULL;
		char *text = NULL;
		size_t len = 0;
		int n;

		n = poll(p, 2, now < until ? (int)(until - now) : 0);
		if (interrupted || terminate)
			return false;
		if (n > 0 && p[0].revents)
			return true;
		if (n > 0 && p[1].revents)
			quiet = now_ms() + DBG_WATCH_QUIET_MS;
		/* The session's news, printed in one piece above the prompt. */
		if (show)
			mem = open_memstream(&text, &len);
		if (mem)
			s->out = mem;
		dbg_pump_output(s, 0);
		if (now_ms() >= next) {
			dbg_watch(c);
			next = now_ms() + DBG_WATCH_MS;
		}
		s->out = real;
		if (mem) {
			fclose(mem);
			if (len)
				show(text, len);
			free(text);
		}
	}
}

/*
 * The next line of f, without its end; false at its end. Commands piped
 * in (not a file) are awaited watching the session (wait_input()).
 */
static bool next_line(struct dbg_console *c, FILE *f, char *line, size_t size,
		      bool watch)
{
	static char buf[DBG_LINE_BYTES];
	static size_t have;
	char *nl;
	ssize_t n;

	if (!watch) {
		if (!fgets(line, size, f))
			return false;
		line[strcspn(line, "\r\n")] = 0;
		return true;
	}
	/* Our own buffer: stdio's would hide a line poll() cannot see. */
	while (!(nl = memchr(buf, '\n', have)) && have < sizeof(buf) - 1) {
		if (!wait_input(c, fileno(f), NULL)) {
			if (terminate)
				return false;
			interrupted = 0;
			continue;
		}
		n = read(fileno(f), buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += n;
	}
	if (!have)
		return false;
	n = nl ? nl - buf + 1 : (ssize_t)have;
	snprintf(line, size, "%.*s", (int)(nl ? n - 1 : n), buf);
	line[strcspn(line, "\r")] = 0;
	memmove(buf, buf + n, have - n);
	have -= n;
	return true;
}

/* Run the lines of f; 1 if one of them was quit. */
static int run_file(struct dbg_console *c, FILE *f)
{
	struct dbg_session *s = c->s;
	char line[DBG_LINE_BYTES];
	struct stat st;
	bool watch = fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode);

	while (!terminate && next_line(c, f, line, sizeof(line), watch)) {
		/* Blank lines and comments: skipped, not even echoed. */
		if (!line[strspn(line, " \t")] || line[strspn(line, " \t")] == '#')
			continue;
		echo_command(s, line);
		if (dbg_execute(c, line))
			return 1;
	}
	return 0;
}

/* ^C at the prompt: the line typed so far is dropped, a fresh prompt. */
static int clear_line_on_sigint(void)
{
	if (!interrupted)
		return 0;
	interrupted = 0;
	rl_replace_line("", 0);
	rl_crlf();
	rl_on_new_line();
	rl_redisplay();
	return 0;
}

/* A yes/no question at the prompt (like gdb's query). */
static bool ask(const char *question)
{
	char *answer;
	bool yes;

	for (;;) {
		interrupted = 0;
		answer = readline(question);
		if (!answer || terminate)
			return false;
		yes = answer[0] == 'y' || answer[0] == 'Y';
		if (yes || answer[0] == 'n' || answer[0] == 'N') {
			free(answer);
			return yes;
		}
		free(answer);
		printf("Please answer y or n.\n");
	}
}

/* The line readline handed over (rl_callback_handler_install()). */
static char *typed;
static bool typed_done;

static void take_line(char *line)
{
	typed = line;
	typed_done = true;
	rl_callback_handler_remove();
}

/* What the session said while the prompt was up: above it, then redrawn. */
static void show_above_prompt(const char *text, size_t len)
{
	rl_clear_visible_line();
	fwrite(text, 1, len, stdout);
	fflush(stdout);
	rl_on_new_line();
	rl_redisplay();
}

/*
 * readline(prompt), watching the session while the user types or
 * thinks (wait_input()): events are printed above the prompt and the
 * partly typed line is redrawn under them. ^C drops the line.
 */
static char *read_watching(struct dbg_console *c, const char *prompt)
{
	typed = NULL;
	typed_done = false;
	rl_callback_handler_install(prompt, take_line);
	while (!typed_done && !terminate) {
		if (wait_input(c, STDIN_FILENO, show_above_prompt)) {
			rl_callback_read_char();
			continue;
		}
		if (interrupted && !terminate)
			clear_line_on_sigint();
	}
	if (!typed_done)
		rl_callback_handler_remove();
	return typed;
}

static void history_path(char *buf, size_t size)
{
	const char *home = getenv("HOME");

	snprintf(buf, size, "%s/.crdbg_history", home ? home : ".");
}

static void interactive(struct dbg_console *c)
{
	struct dbg_session *s = c->s;
	char hist[512], prompt[96];
	char *line;

	c->confirm = ask;
	prompt_console = c;
	rl_signal_event_hook = clear_line_on_sigint;
	rl_readline_name = "crdbg";
	rl_attempted_completion_function = complete;
	history_path(hist, sizeof(hist));
	using_history();
	read_history(hist);
	for (;;) {
		char *focus = sdm_set_to_string(s->focus);
		bool all = sdm_set_size(s->focus) == s->n;

		if (all || !focus)
			snprintf(prompt, sizeof(prompt), "(crdbg) ");
		else
			snprintf(prompt, sizeof(prompt), "(crdbg [%.64s]) ", focus);
		free(focus);
		dbg_pump_output(s, 0);
		interrupted = 0;
		line = read_watching(c, prompt);
		if (!line || terminate) {
			free(line);
			break;
		}
		if (line[strspn(line, " \t")])
			add_history(line);
		if (dbg_execute(c, line)) {
			free(line);
			break;
		}
		free(line);
	}
	write_history(hist);
	history_truncate_file(hist, 1000);
}

/* Every gdb loads the program; then all run to main. */
static int load_and_start(struct dbg_console *c)
{
	struct dbg_session *s = c->s;
	struct sdm_idset *all = sdm_set_new();
	struct dbgp_cmd load = { .verb = DBGP_LOAD };
	struct sdm_fe_result r = { 0 };
	char spec[DBGP_CMD_MAX + 1];
	bool failed = false;
	int rc = -ENOMEM;

	if (!all || sdm_set_add_range(all, 0, s->n - 1) < 0)
		goto out;
	rc = dbgp_load_spec(spec, sizeof(spec), s->argv);
	if (rc < 0)
		goto out;
	load.arg = spec;
	load.preload = s->preload;
	rc = dbg_send(s, all, &load, dbg_load_timeout(s), &r);
	if (rc < 0)
		goto out;
	for (unsigned int i = 0; i < r.nev; i++)
		failed |= r.ev[i].type != SDM_MSG_REPLY;
	if (failed)
		dbg_print_result(s, "load", &r);
	sdm_fe_result_free(&r);
	dbg_execute(c, "start");
	rc = 0;
out:
	sdm_set_free(all);
	return rc;
}

/* A launcher is whatever implements MPIR, whatever its name. */
static bool is_launcher(const char *prog)
{
	struct mpir_probe p;

	return mpir_probe_program(prog, &p) == 0 && p.found;
}

/*
 * Named like an MPI launcher: mpirun, mpiexec, orterun, prterun or srun,
 * or one of them with a suffix after a dot (mpiexec.hydra). One that
 * implements no MPIR would otherwise be debugged as one process, its
 * ranks left alone: a session that cannot be what the user meant.
 */
static bool named_like_launcher(const char *prog)
{
	static const char *const names[] = { "mpirun", "mpiexec", "orterun", "prterun", "srun" };
	const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);

		if (!strncmp(base, names[i], n) && (!base[n] || base[n] == '.'))
			return true;
	}
	return false;
}

/*
 * The job's ranks under their gdbs, stopped (direct launch: at main), and
 * the parts that follow the session registered. 0, or -1 after a message.
 */
static int start_job(struct dbg_console *c, const struct dbg_opts *o)
{
	char err[512] = "", *launch = NULL;
	int rc;

	if (o->restart_job) {
		rc = dbg_adopt_start(c->s, o->restart_job, o->bindir, &launch, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "crdbg: debug --restart %s: %s\n", o->restart_job,
				err[0] ? err : strerror(-rc));
			return -1;
		}
		c->ckpt = dbg_ckpt_new(c->s, NULL);
		c->bp = dbg_bp_new(c->s);
		if (!c->ckpt) {
			free(launch);
			fprintf(stderr, "crdbg: debug --restart: out of memory\n");
			return -1;
		}
		/* The ranks as they were (or lost, said); the session goes on. */
		dbg_ckpt_adopt(c->ckpt, o->restart_job, launch);
		return 0;
	}
	if (o->mpi_hold && !o->attach_pid) {
		c->gate = dbg_gate_new(c->s);
		rc = c->gate ? dbg_gate_start(c->gate, o->argv, o->bindir, err, sizeof(err))
			     : -ENOMEM;
		if (rc < 0) {
			fprintf(stderr, "crdbg: acquisition through libcrdbg-mpi's hold failed: %s\n",
				err[0] ? err : strerror(-rc));
			return -1;
		}
		c->ckpt = dbg_ckpt_new(c->s, NULL);
		c->bp = dbg_bp_new(c->s);
		return 0;
	}
	/*
	 * -n N names copies of the program: an MPI program (Open MPI's
	 * libopen-rte defines MPIR's symbols) is then no launcher.
	 */
	if (o->attach_pid || ((!o->nranks || named_like_launcher(o->argv[0])) &&
			      is_launcher(o->argv[0]))) {
		c->mpir = dbg_mpir_new(c->s);
		rc = c->mpir ? dbg_mpir_start(c->mpir, o->attach_pid ? NULL : o->argv,
					      o->attach_pid, o->bindir, err, sizeof(err))
			     : -ENOMEM;
		if (rc < 0) {
			fprintf(stderr, "crdbg: MPIR process acquisition failed: %s\n",
				err[0] ? err : strerror(-rc));
			return -1;
		}
	} else if (named_like_launcher(o->argv[0])) {
		fprintf(stderr, "crdbg: %s implements no MPIR (a stripped launcher?): its ranks "
			"cannot be acquired through it; use --mpi-hold with libcrdbg-mpi "
			"preloaded into the ranks\n", o->argv[0]);
		return -1;
	} else {
		rc = dbg_session_start(c->s, o->nranks ? o->nranks : 1, o->bindir, NULL, err,
				       sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "crdbg: cannot start the debug session: %s\n",
				err[0] ? err : strerror(-rc));
			return -1;
		}
	}
	/* Without it (ENOMEM) checkpoint and restart say so; the rest works. */
	c->ckpt = dbg_ckpt_new(c->s, c->mpir);
	c->bp = dbg_bp_new(c->s);
	if (c->mpir)
		return 0;
	rc = load_and_start(c);
	if (rc < 0) {
		fprintf(stderr, "crdbg: cannot load %s: %s\n", o->argv[0],
			strerror(-rc));
		return -1;
	}
	return 0;
}

/* The -ex commands, the --batch file, then the prompt or stdin. */
static void run_commands(struct dbg_console *c, const struct dbg_opts *o)
{
	struct dbg_session *s = c->s;
	int quit = 0;

	for (unsigned int i = 0; i < o->nex && !quit && !terminate; i++) {
		echo_command(s, o->ex[i]);
		quit = dbg_execute(c, o->ex[i]);
	}
	if (!quit && o->batch) {
		FILE *f = strcmp(o->batch, "-") ? fopen(o->batch, "r") : stdin;

		if (!f) {
			fprintf(stderr, "crdbg: cannot read %s: %s\n", o->batch,
				strerror(errno));
			s->errors++;
		} else {
			run_file(c, f);
			if (f != stdin)
				fclose(f);
		}
		quit = 1;
	}
	if (!quit && o->nex && !isatty(STDIN_FILENO))
		quit = 1;	/* like gdb -batch -ex ... with no terminal */
	if (quit || terminate)
		return;
	/* Like gdb: a session ended at the prompt exits 0. */
	if (isatty(STDIN_FILENO)) {
		interactive(c);
		s->errors = 0;
		return;
	}
	run_file(c, stdin);
}

int dbg_main(const struct dbg_opts *o)
{
	struct dbg_session s = { 0 };
	struct dbg_console c = { .s = &s, .stopall = true };
	struct sigaction sa = { 0 };
	bool started = false;

	if (!o->attach_pid && !o->restart_job && strchr(o->argv[0], '/') &&
	    access(o->argv[0], X_OK) < 0) {
		fprintf(stderr, "crdbg: cannot run %s: %s\n", o->argv[0],
			strerror(errno));
		return 1;
	}
	s.out = stdout;
	s.json = o->json;
	s.interrupted = &interrupted;
	s.argv = o->argv;
	s.preload = o->preload && *o->preload ? o->preload : NULL;
	s.attach_timeout_s = o->attach_timeout_s;
	s.wait_s = o->batch || o->nex || !isatty(STDIN_FILENO) ?
		   DBG_BATCH_WAIT_S : 0;
	/*
	 * The SDM daemons share our process group: ^C at the terminal must
	 * interrupt the programs, not kill the daemons. They inherit the
	 * ignored SIGINT; our handler comes once they are started.
	 */
	signal(SIGINT, SIG_IGN);
	sa.sa_handler = on_sigterm;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	s.terminate = &terminate;
	if (start_job(&c, o) < 0)
		goto out;
	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, NULL);
	if (c.ckpt)
		c.tl = dbg_tl_new(&s, c.ckpt);
	c.pstep = dbg_pstep_new(&s);
	if (c.pstep) {
		c.pstep->bp = c.bp;
		dbg_pstep_refresh(c.pstep);
	}
	run_commands(&c, o);
	dbg_pump_output(&s, 0);
	dbg_ckpt_drain(c.ckpt, 10);
	dbg_flush_lines(&s);
	started = true;
out:
	dbg_session_stop(&s);
	dbg_pstep_free(c.pstep);
	dbg_gate_free(c.gate);
	dbg_tl_free(c.tl);
	dbg_ckpt_free(c.ckpt);
	dbg_bp_free(c.bp);
	for (unsigned int i = 0; i < c.ndisplay; i++)
		free(c.display[i].expr);
	dbg_mpir_free(c.mpir);
	return started && !s.errors ? 0 : 1;
}
