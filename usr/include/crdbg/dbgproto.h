/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The debugger protocol: what the console (usr/console/) sends to the GDB
 * backend of each SDM server, and what the backend answers. One text
 * command per SDM command, at most DBGP_CMD_MAX bytes, no NUL and no
 * newline; exactly one text reply per command (an SDM error event for
 * errors), so identical replies of many ranks aggregate in the tree.
 *
 * Commands (VERB, one space, arguments):
 *
 *   load [OPTS\x1e]PROG[\x1fARG...]
 *                          start gdb on PROG (CRDBG_RANK=id in its env).
 *                          OPTS, KEY=VALUE separated by \x1f, carry the
 *                          settings of the session (never the server's
 *                          environment, which a launcher on another node
 *                          would not carry): preload=LIB gives the program
 *                          alone LD_PRELOAD=LIB and puts its I/O on FIFOs,
 *                          so that it can be checkpointed
 *                          reply "loaded"
 *   attach PID PROG        start gdb on PROG and attach it to PID
 *                          reply: a stop ("stopped: attached, FRAME")
 *   start WAIT[ hold]      temporary breakpoint at main, run, wait for it
 *   exec WAIT[ hold] KIND [LOC]
 *                          KIND: continue, step, next, finish, stepi,
 *                          nexti, mpi-return (a rank stopped inside an
 *                          MPI call runs to just after it, in its
 *                          caller), until [LOC], advance LOC (only these
 *                          two take LOC, advance must); the reply is the
 *                          stop, or "running" after WAIT ms
 *   wait WAIT[ hold]       the current stop, or wait for one
 *                          ("not started" before start)
 *   interrupt WAIT[ hold]  stop a running program (reply: the stop)
 *                          hold, on any of these four, until the next of
 *                          them: a rank about to end with a code other
 *                          than 0 is held in the C library's _exit, before
 *                          its parent (the launcher) can learn of it, and
 *                          its reply is already "exited: code N" with the
 *                          field held=1; an exec continue lets it end. So
 *                          the console stops the other ranks before the
 *                          launcher ends them. Without hold, exits go on
 *                          at once
 *   print EXPR             "EXPR = VALUE"
 *   break LOC              "breakpoint N at FILE:LINE"; where no object
 *                          loaded so far has LOC (a library not loaded
 *                          yet), "breakpoint N (LOC) pending", which gdb
 *                          resolves when one that has it loads
 *   bt [N|-N]              "#0  func at file:line" lines; N: the N
 *                          innermost frames, -N the N outermost, and a
 *                          last line "(More stack frames follow...)" when
 *                          frames were left out, as gdb's backtrace N
 *   stack                  function names, outermost first, one a line
 *   status                 "STATE gdb=PID pid=PID WHERE[, pc 0xADDR]"
 *   cli CMD                any gdb console command; its console output
 *   input TEXT             TEXT and a newline to the program's stdin
 *   mpi                    the rank's MPI state (crdbg/mpi-state.h, from
 *                          libcrdbg-mpi): "stopped", "running", "exited",
 *                          "not started", then DBGP_FIELDS and the fields
 *                          state=HEX (the struct's bytes; absent without
 *                          the library or while unknown), and for a
 *                          stopped rank func, file, line of its position:
 *                          the MPI call's line when it is in one
 *   mpi frames on|off      off: a rank stopped inside an MPI call is shown
 *                          at the call (stop replies, status, bt, stack
 *                          leave MPI's own frames out, the user's frame is
 *                          selected); on (the start): everything as gdb
 *                          sees it. Reply "mpi frames: on|off"
 *   hook park ARG          (a stopped program with libcrdbg) push the hook
 *                          frame of <linux/crdbg.h> on every thread but
 *                          libcrdbg's designated one, to enter its
 *                          trampoline with ARG: reply "parked N"
 *   hook unpark            undo park on threads that did not run yet:
 *                          "unparked N"
 *   hook plan              open MPIR_checkpoint_debug_gate; "plan SEL
 *                          NUM:PC..." for every thread under a hook frame,
 *                          PC the one under its outermost frame
 *   hook release           plan, then run each of those threads alone back
 *                          to its PC, MPIR_debug_with_checkpoint = 0, SEL
 *                          selected again: "released N"
 *   part start ARG[\x1fARG...]
 *                          a part of a job checkpoint operation
 *                          (<crdbg/job.h>): run the part program next to
 *                          this server as `crdbg-part ARG...` (the first
 *                          ARG is checkpoint, restart, verify or rm) for
 *                          the rank; "started". Its
 *                          stdout's other lines (a restored program's)
 *                          are the rank's output
 *   part order LINE        LINE to that part's stdin: "sent"
 *   part wait MS STEP      the part's "crdbg-part STEP..." line without
 *                          the prefix, once it said it (at once if it
 *                          did); an error "error: ended: WHY" if it ends
 *                          first, "error: no answer in N s" after MS
 *   part wait MS debug PID[,PID...]
 *                          "debug N" (N the pids named) once the part
 *                          said "MPIR debug info) HOST:PID" for every PID
 *                          (those processes are parked): one wait for a
 *                          set; errors as for a step
 *   part finish MS         close its stdin; "exit 0" or "exit STATUS: WHY"
 *                          once it ends
 *                          (killed with its process group after MS);
 *                          MS 0: "running", it runs on (a released
 *                          restart waits for its processes)
 *   part drain MS          "drained" once every part of the rank ended
 *                          (all they wrote has gone up before), or
 *                          "running" after MS; nothing is killed
 *
 * WAIT is in milliseconds, decimal, at most DBGP_WAIT_MAX_MS.
 *
 * Replies. A stop or an exit is described as
 *
 *   "stopped: breakpoint 1, main at prog.c:12"
 *   "stopped: end-stepping-range, main at prog.c:13"
 *   "stopped: signal SIGINT, pause"
 *   "stopped: attached, main at prog.c:12"
 *   "stopped: watchpoint 2: value = 9 (was 4), compute at prog.c:18"
 *   "stopped: function-finished, main at prog.c:40, returned 9"
 *   "exited: code 0"  /  "exited: signal SIGSEGV"
 *
 * and, in the replies of start, exec, wait, interrupt and attach (not in
 * status), followed by the stop's fields for machines: DBGP_FIELDS
 * (\x1e), then KEY=VALUE pairs separated by DBGP_FIELD_SEP (\x1f), from
 * gdb's *stopped record (keys reason, bkptno, signal, code, func, file,
 * line, pc; a watchpoint's exp, old, new; a finish's value; held for an
 * exit held as above); control bytes in values become '?':
 *
 *   "...main at prog.c:12\x1ereason=breakpoint-hit\x1fbkptno=1\x1ffunc=main
 *    \x1ffile=prog.c\x1fline=12\x1fpc=0x401136"
 *
 * The reply stays one byte string, so the tree still merges identical
 * stops. A run command whose WAIT passed answers "running". Errors are
 * error events whose text starts with "error: "; a rank whose gdb died
 * answers every command with "lost: WHY" (an error event too).
 *
 * The console makes the SDM's own errors (a server gone) "lost: ..." as
 * well, so a reply's kind (dbgp_reply_kind) is all it looks at.
 */
#ifndef CRDBG_DBGPROTO_H
#define CRDBG_DBGPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DBGP_CMD_MAX		4096	/* bytes of a command, without a NUL */
#define DBGP_ARGS_MAX		62	/* arguments of load */
#define DBGP_WAIT_MAX_MS	86400000ul

/*
 * How long a server's gdb may take to attach to a rank and read its
 * symbols before the rank is lost: DBGP_ATTACH_TIMEOUT_S, or what the
 * console gives each server as "crdbg-server --backend-args
 * attach-timeout=MS" (crdbg debug --attach-timeout).
 */
#define DBGP_ATTACH_TIMEOUT_S	170
#define DBGP_SERVER_ATTACH_ARG	"attach-timeout="

/* Separators. */
#define DBGP_ARG_SEP		'\x1f'	/* between load's PROG and ARGs, and OPTS */
#define DBGP_OPTS_END		'\x1e'	/* ends load's OPTS */
#define DBGP_FIELDS		'\x1e'	/* ends a stop's text, starts its fields */
#define DBGP_FIELD_SEP		'\x1f'	/* between KEY=VALUE fields */

/* Reply prefixes and whole replies. */
#define DBGP_STOPPED		"stopped: "
#define DBGP_EXITED		"exited: "
#define DBGP_ERROR		"error: "
#define DBGP_LOST		"lost: "
#define DBGP_RUNNING		"running"
#define DBGP_LOADED		"loaded"
#define DBGP_NOT_STARTED	"not started"
#define DBGP_BREAK_PENDING	"pending"	/* ends a break reply: no location yet */

enum dbgp_verb {
	DBGP_LOAD,
	DBGP_ATTACH,
	DBGP_START,
	DBGP_EXEC,
	DBGP_WAIT,
	DBGP_INTERRUPT,
	DBGP_PRINT,
	DBGP_BREAK,
	DBGP_BT,
	DBGP_STACK,
	DBGP_STATUS,
	DBGP_CLI,
	DBGP_INPUT,
	DBGP_MPI,
	DBGP_HOOK,
	DBGP_PART,
	__DBGP_VERB_LAST
};

enum dbgp_exec {
	DBGP_EXEC_CONTINUE,
	DBGP_EXEC_STEP,
	DBGP_EXEC_NEXT,
	DBGP_EXEC_FINISH,
	DBGP_EXEC_STEPI,
	DBGP_EXEC_NEXTI,
	DBGP_EXEC_MPI_RETURN,	/* out of the MPI call the rank is in */
	DBGP_EXEC_UNTIL,	/* gdb's until [LOC] */
	DBGP_EXEC_ADVANCE,	/* gdb's advance LOC */
	__DBGP_EXEC_LAST
};

/* One command. Which fields a verb uses is in the table above. */
struct dbgp_cmd {
	enum dbgp_verb verb;
	unsigned long wait_ms;	/* start, exec, wait, interrupt */
	bool hold_exits;	/* start, exec, wait, interrupt: " hold" */
	enum dbgp_exec exec;	/* exec */
	int pid;		/* attach */
	/*
	 * load: PROG[\x1fARG...] (dbgp_split_load() splits it); attach:
	 * PROG; print, break, cli, input: their text (may be empty); bt:
	 * its count ("" for every frame); exec
	 * until/advance: the location ("" for none).
	 */
	const char *arg;
	const char *preload;	/* load: LD_PRELOAD for the program; NULL: none */
};

/* "load", "exec", ...; NULL for a value out of range. */
const char *dbgp_verb_name(enum dbgp_verb verb);
/* "continue", "step", ...; NULL for a value out of range. */
const char *dbgp_exec_name(enum dbgp_exec exec);
/* The run command KIND names (e.g. "next"), or -EINVAL. */
int dbgp_exec_parse(const char *name);

/*
 * Write cmd into buf (NUL terminated). Returns its length, -ENOSPC when
 * buf is too small or the command longer than DBGP_CMD_MAX, -EINVAL for
 * a field the protocol cannot carry (a verb or kind out of range, a
 * newline in a text, pid <= 0, a wait above DBGP_WAIT_MAX_MS).
 */
int dbgp_encode(char *buf, size_t size, const struct dbgp_cmd *cmd);
/*
 * load's text "PROG\x1fARG..." from a NULL terminated argv. Its length,
 * -ENOSPC (buf, or the command it makes, too small), -E2BIG (more than
 * DBGP_ARGS_MAX ARGs), -EINVAL (no PROG, a newline).
 */
int dbgp_load_spec(char *buf, size_t size, char *const *argv);

/*
 * Parse the len bytes at buf (a NUL after them is not needed: buf gets
 * one, so it must have room for len + 1 bytes); ret->arg points into buf.
 *   -EMSGSIZE  longer than DBGP_CMD_MAX
 *   -EBADMSG   a NUL or a newline in it
 *   -ENOENT    no known verb (or a verb without the arguments it needs)
 *   -EINVAL    a known verb with bad arguments: ret->verb is set and
 *              ret->arg points at them (attach without PID PROG, exec
 *              with an unknown KIND, load without PROG, a bad WAIT)
 */
int dbgp_parse(char *buf, size_t len, struct dbgp_cmd *ret);
/*
 * Split load's PROG[\x1fARG...] in place: the separators become NULs,
 * ret_args[] gets the ARGs and a NULL (room for max + 1 pointers; ARGs
 * beyond max stay in the last one). Returns the number of ARGs.
 */
size_t dbgp_split_load(char *spec, const char **ret_args, size_t max);

/*
 * The hook command's argument (park ARG, unpark, plan, release), as the
 * console sends it and the server reads it (usr/dbgproto/subcmd.c).
 */
enum dbgp_hook_op {
	DBGP_HOOK_PARK,
	DBGP_HOOK_UNPARK,
	DBGP_HOOK_PLAN,
	DBGP_HOOK_RELEASE,
};

struct dbgp_hook_cmd {
	enum dbgp_hook_op op;
	uint64_t arg;		/* park: the hook frame's argument */
};

/* Its text, the arg of a DBGP_HOOK command: its length, -EINVAL or -ENOSPC. */
int dbgp_hook_format(char *buf, size_t size, const struct dbgp_hook_cmd *h);
/* 0, or -EINVAL for anything but the four (park with a whole decimal ARG). */
int dbgp_hook_parse(const char *text, struct dbgp_hook_cmd *ret);

/* The part command's argument, likewise. */
#define DBGP_PART_ARGS_MAX	32	/* start's ARGs */
#define DBGP_PART_STEP_MAX	64	/* wait's STEP, with its NUL */
#define DBGP_PART_ORDER_MAX	256	/* order's LINE, with its NUL */
#define DBGP_PART_PIDS_MAX	256	/* wait's PIDs: 256 of 10 digits fit a command */

enum dbgp_part_op {
	DBGP_PART_START,	/* start ARG\x1fARG...: the part program's operation */
	DBGP_PART_ORDER,	/* order LINE */
	DBGP_PART_WAIT,		/* wait MS STEP | wait MS debug PID[,PID...] */
	DBGP_PART_FINISH,	/* finish MS */
	DBGP_PART_DRAIN,	/* drain MS */
};

struct dbgp_part_cmd {
	enum dbgp_part_op op;
	unsigned long ms;			/* wait, finish, drain */
	char step[DBGP_PART_STEP_MAX];		/* wait: the step, or "debug" with pids */
	int pid[DBGP_PART_PIDS_MAX];		/* wait MS debug PID,...: each > 0 */
	unsigned int npid;			/* how many; 0 for a step's wait */
	const char *line;			/* order */
	/* start: argv[1..argc] (argv[1] the operation), argv[argc + 1] NULL */
	char *argv[DBGP_PART_ARGS_MAX + 2];
	int argc;
};

/*
 * Its text, the arg of a DBGP_PART command: its length, -EINVAL (an
 * operation the part program has not, a separator or newline in an ARG,
 * a bad STEP or MS) or -ENOSPC.
 */
int dbgp_part_format(char *buf, size_t size, const struct dbgp_part_cmd *c);
/*
 * Parse the text after "part " (buf, NUL terminated, split in place:
 * argv and line point into it). 0, or -EINVAL and *why: the error reply
 * without its "error: ".
 */
int dbgp_part_parse(char *buf, struct dbgp_part_cmd *c, const char **why);

/*
 * The answer to "part finish": how the part ended ("exit 0", "exit S:
 * WHY" with S its exit status, 1..255, and WHY one line) or that it runs
 * on ("running").
 */
struct dbgp_part_end {
	bool running;
	int status;
	const char *why;	/* "" for status 0; parse: points into the text */
};
/* Its text into buf: its length, -EINVAL (a status out of range) or -ENOSPC. */
int dbgp_part_end_format(char *buf, size_t size, const struct dbgp_part_end *e);
/* 0, or -EINVAL for any other text. */
int dbgp_part_end_parse(const char *text, struct dbgp_part_end *ret);

enum dbgp_reply_kind {
	DBGP_REPLY_OTHER,	/* a value, a breakpoint, cli output, ... */
	DBGP_REPLY_STOPPED,
	DBGP_REPLY_EXITED,
	DBGP_REPLY_RUNNING,
	DBGP_REPLY_ERROR,
	DBGP_REPLY_LOST,
};

enum dbgp_reply_kind dbgp_reply_kind(const char *reply);
/* Length of the text of a reply, before the fields of a stop if any. */
size_t dbgp_reply_text_len(const char *reply);
/* The fields of a stop (after DBGP_FIELDS), or NULL when it has none. */
const char *dbgp_reply_fields(const char *reply);

/* One KEY=VALUE field, pointing into the reply; not NUL terminated. */
struct dbgp_field {
	const char *key;
	size_t klen;
	const char *value;
	size_t vlen;
};
/*
 * Take the next field at *cursor (from dbgp_reply_fields) and move the
 * cursor past it. 1 and ret set, or 0 at the end. A piece without '='
 * or with an empty key is skipped.
 */
int dbgp_next_field(const char **cursor, struct dbgp_field *ret);
/* Is f's key KEY? */
bool dbgp_field_is(const struct dbgp_field *f, const char *key);

/* What gdb said about a stop or an exit (its *stopped record). */
struct dbgp_stop {
	bool exited;
	bool held;		/* exited: held in _exit (field held=1) */
	bool attached;		/* "stopped: attached": no reason field */
	const char *reason;	/* gdb's: "breakpoint-hit", ...; NULL or "" */
	int bkptno;		/* breakpoint-hit */
	const char *signal;	/* signal-received, or exited-signalled */
	int exit_code;
	const char *func;	/* the frame; NULL or "??" when unknown */
	const char *file;
	int line;
	uint64_t pc;
	/* A watchpoint's trigger (bkptno is its number): what it watches. */
	const char *wpt_exp;
	const char *old_value;	/* NULL: a read watchpoint's */
	const char *new_value;	/* the value now */
	const char *return_value; /* function-finished: what it returned */
};

/* "func at file:line", or "func" without a line. As snprintf. */
int dbgp_frame_text(char *buf, size_t size, const char *func,
		    const char *file, int line);
/* "stopped: ..." or "exited: ..." as above. As snprintf. */
int dbgp_stop_text(char *buf, size_t size, const struct dbgp_stop *st);
/*
 * Its fields, "\x1eKEY=VALUE\x1f..." (empty when there are none); a field
 * that does not fit is left out. Returns the length written.
 */
size_t dbgp_stop_fields(char *buf, size_t size, const struct dbgp_stop *st);

/* The reply of status. */
struct dbgp_status {
	char state[16];		/* stopped, running, exited, lost, ... */
	int gdb_pid;
	int pid;
	const char *where;	/* points into the reply; may be "" */
};

/* "STATE gdb=PID pid=PID WHERE[, pc 0xPC]" (pc 0: none). As snprintf. */
int dbgp_status_text(char *buf, size_t size, const char *state, int gdb_pid,
		     int pid, const char *where, uint64_t pc);
/* 0, or -EINVAL when reply is not a status line. */
int dbgp_parse_status(const char *reply, struct dbgp_status *ret);

/*
 * Binary fields (a rank's MPI state) travel as lower-case hex, two digits
 * a byte. encode writes 2 * len digits and a NUL; decode wants exactly
 * 2 * len digits: 0, or -EBADMSG.
 */
void dbgp_hex_encode(char *buf, const void *data, size_t len);
int dbgp_hex_decode(void *out, size_t len, const char *hex, size_t hexlen);

#endif /* CRDBG_DBGPROTO_H */
