/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A debug session as the console sees it: the SDM front end, what each
 * rank is doing, the focus set, and the printing of replies (merged by
 * rank set, or as JSON lines) and of the programs' forwarded output.
 */
#ifndef CRDBG_CONSOLE_SESSION_H
#define CRDBG_CONSOLE_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct sdm_fe;
struct sdm_idset;
struct sdm_fe_result;
struct con_merge;
struct mi_driver;

enum dbg_rank_state {
	DBG_NONE,	/* not started */
	DBG_STOPPED,
	DBG_RUNNING,
	DBG_EXITED,
	DBG_LOST,	/* its gdb or server is gone */
};

struct dbg_linebuf {
	char *buf;
	size_t len;
};

struct dbg_session {
	struct sdm_fe *fe;
	char *const *argv;		/* the program and its arguments */
	uint32_t n;
	enum dbg_rank_state *state;
	struct dbg_linebuf *line;	/* partial output lines, per rank */
	struct sdm_idset *focus;	/* default target of commands */
	bool json;
	FILE *out;
	int wait_s;			/* run commands: 0 waits until they stop */
	volatile int *interrupted;	/* set by SIGINT */
	volatile int *terminate;	/* set by SIGTERM, SIGHUP */
	unsigned int errors;		/* commands that failed somewhere: exit 1 */
	/* MPIR: the gdb holding mpirun, and whether we started the job. */
	struct mi_driver *launcher;
	bool job_launched;
	int mpirun_pid;
	struct dbg_linebuf mpirun_line;	/* a partial line of mpirun's output */
};

/* Timeouts (ms) of the SDM requests. */
#define DBG_CMD_TIMEOUT		60000
#define DBG_LOAD_TIMEOUT	180000
#define DBG_SLICE_MS		500	/* one wait round of a run command */

int dbg_session_start(struct dbg_session *s, uint32_t n, const char *bindir,
		      char *err, size_t errlen);
void dbg_session_stop(struct dbg_session *s);

/* The ranks of set that are not lost (malloc'd; NULL on ENOMEM). */
struct sdm_idset *dbg_live(struct dbg_session *s, const struct sdm_idset *set);

/* Send a backend command to set and collect the replies. 0 or -errno. */
int dbg_send(struct dbg_session *s, const struct sdm_idset *set,
	     const char *cmd, uint32_t timeout_ms, struct sdm_fe_result *ret);

/*
 * Reply text of an event as the console shows it, and whether it is an
 * error. Errors the SDM made (a server that died) come back as "lost: ..."
 * and mark their ranks lost.
 */
const char *dbg_event_text(struct dbg_session *s, uint8_t type,
			   const struct sdm_idset *src, const char *payload,
			   bool *ret_error);

/* Update rank states from a reply ("stopped: ...", "running", ...). */
void dbg_note_state(struct dbg_session *s, const struct sdm_idset *src,
		    const char *text, bool error);

/*
 * Print merged replies of cmd (text or JSON). Stop and exit replies carry
 * their fields after a \x1e (sdm/backend-gdb.c): text mode prints and
 * merges what is before it, JSON prints {"type":"stop"|"exit",...}.
 * dbg_print_result counts a command with an error reply in s->errors.
 */
void dbg_print_merge(struct dbg_session *s, const char *cmd,
		     const struct con_merge *m, const struct sdm_fe_result *r);
void dbg_print_result(struct dbg_session *s, const char *cmd,
		      const struct sdm_fe_result *r);
/* A console message (JSON: {"type":"info"}). */
void dbg_info(struct dbg_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A command refused or failed in the console: counted in s->errors. */
void dbg_error(struct dbg_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print forwarded program output that arrived, waiting at most ms. */
void dbg_pump_output(struct dbg_session *s, int ms);
/* Print what is left in the per-rank line buffers. */
void dbg_flush_lines(struct dbg_session *s);

/* JSON string escaping onto f. */
void dbg_json_str(FILE *f, const char *s);

/*
 * mpir.c: MPIR process acquisition. Run mpirun (argv) under a local gdb,
 * or attach to the running mpirun pid (argv NULL); read MPIR_proctable;
 * start the session with one server per rank and attach each rank's gdb.
 * Prints the attach result. 0 or -errno with err set.
 */
int dbg_mpir_start(struct dbg_session *s, char *const *argv, int mpirun_pid,
		   const char *bindir, char *err, size_t errlen);
/* Before the session stops: kill a launched job, or leave it running. */
void dbg_mpir_stop(struct dbg_session *s);
/* Forward mpirun's output (the ranks' stdout passes through it). */
void dbg_mpir_output(struct dbg_session *s);
/*
 * input TEXT in an MPIR session: to mpirun's stdin, which it forwards to
 * rank 0 (set: the ranks named, or NULL). Refused for an attached job.
 */
void dbg_mpir_input(struct dbg_session *s, const struct sdm_idset *set, const char *text);
/*
 * For a checkpoint of the whole job: stop mpirun in our gdb and detach
 * (CRIU cannot take a traced process), and attach again afterwards, to
 * the same pid (the original, or its restored copy). 0 or -errno, err set.
 */
int dbg_mpir_detach(struct dbg_session *s, char *err, size_t errlen);
int dbg_mpir_reattach(struct dbg_session *s, char *err, size_t errlen);

/*
 * checkpoint.c: "checkpoint" and "restart HANDLE[,HANDLE...]" of the whole
 * job (libcrdbg preloaded, crdbg.ko loaded); output of restarted ranks.
 */
void dbg_checkpoint(struct dbg_session *s);
void dbg_restart(struct dbg_session *s, const char *handles);
void dbg_ckpt_output(struct dbg_session *s);
/*
 * Every complete output line of a rank, or of mpirun (id DBG_MPIRUN, the
 * ranks of an MPIR job write through it): notes "MPIR debug info)" pids.
 */
#define DBG_MPIRUN	UINT32_MAX
void dbg_ckpt_line(struct dbg_session *s, uint32_t id, const char *line, size_t len);
/* Program output of rank id (or DBG_MPIRUN), as if its server had forwarded it. */
void dbg_rank_output(struct dbg_session *s, uint32_t id, const char *buf, size_t len);

/* commands.c: run one console line. Returns 1 to quit, else 0. */
int dbg_execute(struct dbg_session *s, const char *line);
/* Names of the console commands, NULL terminated (for completion). */
extern const char *const dbg_command_names[];

#endif /* CRDBG_CONSOLE_SESSION_H */
