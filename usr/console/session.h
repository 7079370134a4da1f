/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A debug session as the console sees it: the SDM front end, what each
 * rank is doing, the focus set, and the printing of replies (merged by
 * rank set, or as JSON lines) and of the programs' forwarded output.
 *
 * The console's layers, each using only those below it:
 *   console.c      the front: options, readline, batch files
 *   commands.c     the command table: dispatch, help, completion
 *   checkpoint.c   checkpoint/restart of the job (uses mpir.c for mpirun)
 *   mpir.c         MPIR acquisition of a job from mpirun
 *   session.c      this: SDM requests, rank states, printing
 * The parts above hear of the session's events through struct
 * dbg_listener; the session never calls them by name.
 */
#ifndef CRDBG_CONSOLE_SESSION_H
#define CRDBG_CONSOLE_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <crdbg/dbgproto.h>

struct sdm_fe;
struct sdm_idset;
struct sdm_fe_result;
struct merge;
struct dbgp_cmd;

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

/*
 * A part of the console that follows the session: MPIR acquisition and
 * checkpoint/restart register one. The session calls every hook of every
 * listener (NULL hooks are skipped) and never names a part itself.
 */
struct dbg_listener {
	/*
	 * Output is being read: hand what this part's own sources wrote
	 * (mpirun's gdb, a restarted rank's terminal) to dbg_rank_output().
	 */
	void (*pump)(void *priv);
	/*
	 * A complete output line of rank id, or of the launcher (DBG_MPIRUN).
	 * true: the line is this part's to say (a marker), not shown as is.
	 */
	bool (*line)(void *priv, uint32_t id, const char *line, size_t len);
	/* The session ends; the SDM tree is still up. Last registered first. */
	void (*stop)(void *priv);
	/* ...and after the SDM tree is down. Last registered first. */
	void (*stopped)(void *priv);
};

#define DBG_MAX_LISTENERS	4
/* Output id of the job's launcher (mpirun): its ranks write through it. */
#define DBG_MPIRUN		UINT32_MAX

struct dbg_session {
	struct sdm_fe *fe;
	char *const *argv;		/* the program and its arguments */
	const char *preload;		/* LD_PRELOAD for the program only, or NULL */
	uint32_t n;
	enum dbg_rank_state *state;
	struct dbg_linebuf *line;	/* partial output lines, per rank */
	struct dbg_linebuf launcher_line; /* the same for DBG_MPIRUN */
	struct sdm_idset *focus;	/* default target of commands */
	/*
	 * Ranks reported "exited: code N" that their gdb still holds in
	 * _exit (crdbg/dbgproto.h, hold): the launcher learns of the exit
	 * only when dbg_release_exits() lets them end.
	 */
	struct sdm_idset *exit_held;
	bool json;
	FILE *out;
	int wait_s;			/* run commands: 0 waits until they stop */
	volatile int *interrupted;	/* set by SIGINT */
	volatile int *terminate;	/* set by SIGTERM, SIGHUP */
	unsigned int errors;		/* commands that failed somewhere: exit 1 */
	unsigned int attach_timeout_s;	/* each server's gdb attach; 0: default */
	char server_args[40];		/* crdbg-server --backend-args */
	uint64_t last_frames, last_bytes; /* what the last command received */
	char launcher_name[32];		/* labels DBG_MPIRUN output; "" = mpirun */
	char **host;			/* per rank, when ranks run elsewhere */
	struct {
		const struct dbg_listener *ops;
		void *priv;
	} listener[DBG_MAX_LISTENERS];
	unsigned int nlisteners;
};

/* Timeouts (ms) of the SDM requests. */
#define DBG_CMD_TIMEOUT		60000
/*
 * Commands that may make gdb attach or read symbols wait the attach
 * timeout and a margin, so that the server's own "did not attach" comes
 * first.
 */
#define DBG_LOAD_MARGIN_MS	10000
/* How long each server's gdb may take to attach (--attach-timeout). */
static inline uint32_t dbg_attach_ms(const struct dbg_session *s)
{
	return (s->attach_timeout_s ? s->attach_timeout_s : DBGP_ATTACH_TIMEOUT_S) * 1000u;
}
static inline uint32_t dbg_load_timeout(const struct dbg_session *s)
{
	return dbg_attach_ms(s) + DBG_LOAD_MARGIN_MS;
}
#define DBG_SLICE_MS		500	/* one wait round of a run command */

/*
 * Where the servers run: NULL, all on this machine; else server i is
 * started on host i of hosts (comma-separated) with the launcher
 * template (sdm/frontend.h: "{host}" and "{cmd}"), which gets the session
 * secret on its stdin.
 */
/*
 * Where the servers run: nservers of them (0: one per rank, forked
 * here), server i driving the ranks ranks[i] ("0-1") on the i-th of
 * hosts ("a,b"), started through the launcher template (NULL: forked
 * here).
 */
struct dbg_placement {
	const char *launcher;
	const char *hosts;
	uint32_t nservers;
	const char *const *ranks;
};

/* Free a placement whose fields are all malloc'd (mpir.c's). */
void dbg_placement_free(struct dbg_placement *where);

/*
 * Start the SDM tree for n ranks (GDB backend): one server per rank, or
 * as where places them; listeners may be registered before. 0 or -errno
 * with err set.
 */
int dbg_session_start(struct dbg_session *s, uint32_t n, const char *bindir,
		      const struct dbg_placement *where, char *err, size_t errlen);
/*
 * The node each rank runs on (n strings, copied), for messages about
 * ranks lost with their node. 0 or -ENOMEM.
 */
int dbg_session_set_hosts(struct dbg_session *s, char *const *host);

/* The state of the ranks of src (but those lost stay lost). */
void dbg_set_state(struct dbg_session *s, const struct sdm_idset *src,
		   enum dbg_rank_state st);

/*
 * Let the ranks of set held in their exit end (every held one when set
 * is NULL): a run command, kill or detach that names them, the session's
 * end. What ending says is not news; a gdb gone changes nothing.
 */
void dbg_release_exits(struct dbg_session *s, const struct sdm_idset *set);

/* Held exits let go, the listeners' stop hooks, then the SDM tree. */
void dbg_session_stop(struct dbg_session *s);

/*
 * The ranks of set that are neither lost nor exited (malloc'd; NULL on
 * ENOMEM): commands go to these, so a dead rank costs no error line.
 */
struct sdm_idset *dbg_live(struct dbg_session *s, const struct sdm_idset *set);

/*
 * A launcher ends the job of a rank that died by sending SIGCONT and
 * SIGTERM to the others (mpirun, srun, mpiexec.hydra): the gdbs of set
 * let both through without stopping, so that the ranks end ("exited:
 * signal SIGTERM") instead of standing stopped at them as if still
 * there. For sessions whose ranks a launcher started.
 */
void dbg_pass_launcher_signals(struct dbg_session *s, const struct sdm_idset *set);

/*
 * Send a debugger protocol command (crdbg/dbgproto.h) to set and collect
 * the replies. 0 or -errno (-ENOSPC, -EINVAL: cmd cannot be encoded).
 */
int dbg_send(struct dbg_session *s, const struct sdm_idset *set,
	     const struct dbgp_cmd *cmd, uint32_t timeout_ms,
	     struct sdm_fe_result *ret);

/*
 * Ask set cmd once, without a word to the user, and sort the ranks by
 * their reply: out[i] is a new set of the ranks whose reply, its text or
 * gdb's error ("No symbol ..."), contains needles[i] (a lost rank is
 * marked lost and is in none). 0, or -ENOMEM with every out[i] NULL.
 */
int dbg_ranks_sort(struct dbg_session *s, const struct sdm_idset *set,
		   const struct dbgp_cmd *cmd, uint32_t timeout_ms,
		   const char *const needles[], struct sdm_idset *out[],
		   unsigned int n);

/* dbg_ranks_sort() for one needle: a new set (NULL on ENOMEM). */
struct sdm_idset *dbg_ranks_replying(struct dbg_session *s,
				     const struct sdm_idset *set,
				     const struct dbgp_cmd *cmd, uint32_t timeout_ms,
				     const char *needle);

/*
 * Reply text of an event as the console shows it, and whether it is an
 * error. Errors the SDM made (a server that died) come back as "lost: ..."
 * and mark their ranks lost.
 */
const char *dbg_event_text(struct dbg_session *s, uint8_t type,
			   const struct sdm_idset *src, const char *payload,
			   bool *ret_error);

/*
 * Print merged replies of cmd (text or JSON). Stop and exit replies carry
 * their fields after DBGP_FIELDS (crdbg/dbgproto.h): text mode prints and
 * merges what is before it, JSON prints {"type":"stop"|"exit",...}.
 * dbg_print_result counts a command with an error reply in s->errors.
 */
void dbg_print_merge(struct dbg_session *s, const char *cmd,
		     const struct merge *m, const struct sdm_fe_result *r);
void dbg_print_result(struct dbg_session *s, const char *cmd,
		      const struct sdm_fe_result *r);
/*
 * Add a reply of ranks src to acc (events of many rounds, or rewritten
 * ones), merged with an identical one already there. 0 or -ENOMEM.
 */
int dbg_result_add(struct sdm_fe_result *acc, uint8_t type,
		   const struct sdm_idset *src, const char *text);
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

/* Program output of rank id (or DBG_MPIRUN), as if its server had forwarded it. */
void dbg_rank_output(struct dbg_session *s, uint32_t id, const char *buf, size_t len);

/* Register a part's hooks (ops must outlive s). 0 or -ENOSPC. */
int dbg_session_listen(struct dbg_session *s, const struct dbg_listener *ops,
		       void *priv);

#endif /* CRDBG_CONSOLE_SESSION_H */
