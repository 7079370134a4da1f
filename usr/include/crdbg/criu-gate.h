/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The gate: the contract between crdbg (usr/crs/criu.c, resume.c) and its
 * CRIU plugin (usr/crs/gate/criu-gate.c), which criu loads from a private
 * directory for each dump and each gated restore.
 *
 * The environment criu runs with:
 *   CRDBG_GATE_ENV         the private directory (the plugin is off without it)
 *   CRDBG_GATE_SEIZE_ENV   a dump's root pid: the plugin waits at CRIU's
 *                          first PTRACE_SEIZE of it (preloaded)
 *   CRDBG_GATE_DETACH_ENV  "1" on a restore: the plugin lets the tree go
 *                          children first at CRIU's detach (preloaded)
 *
 * The private directory holds:
 *   CRDBG_GATE_PLUGIN      the plugin itself (--libdir, LD_PRELOAD)
 *   CRDBG_GATE_FIFO        crdbg -> plugin: a line "go"; end of file refuses
 *   CRDBG_GATE_STATUS      plugin -> crdbg: one word a line, in this order
 *     dump:     "ready", then "dumped" or "failed"
 *     restore:  "ready", then "held", then "released"
 *   CRDBG_GATE_ORDERS      crdbg -> plugin, written before the "go" that
 *                          answers "held": the release's orders, a line each
 *                          (the CRDBG_GATE_ORDER_* formats), carried out in
 *                          their order
 *   CRDBG_GATE_REPORT      plugin -> crdbg, read after "released": a hooked
 *                          thread's pc, or an order that failed with an errno
 *                          (the CRDBG_GATE_REPORT_* formats)
 *
 * Each word is written as CRDBG_GATE_LINE(word): the word and a newline.
 */
#ifndef CRDBG_CRIU_GATE_H
#define CRDBG_CRIU_GATE_H

#define CRDBG_GATE_ENV		"CRDBG_GATE"
#define CRDBG_GATE_SEIZE_ENV	"CRDBG_GATE_SEIZE"
#define CRDBG_GATE_DETACH_ENV	"CRDBG_GATE_DETACH"

#define CRDBG_GATE_PLUGIN	"crdbg-gate.so"
#define CRDBG_GATE_FIFO		"gate"
#define CRDBG_GATE_STATUS	"status"
#define CRDBG_GATE_ORDERS	"release"
#define CRDBG_GATE_REPORT	"report"

/* crdbg's one word: CRIU goes on from where the plugin holds it. */
#define CRDBG_GATE_GO		"go"

/* The plugin's words. */
#define CRDBG_GATE_READY	"ready"		/* waits at the gate for "go" */
#define CRDBG_GATE_DUMPED	"dumped"	/* every image written and closed */
#define CRDBG_GATE_FAILED	"failed"	/* the dump failed: criu exits with why */
#define CRDBG_GATE_HELD		"held"		/* every restored thread stopped: "go" releases */
#define CRDBG_GATE_RELEASED	"released"	/* every order carried out: CRIU detaches next */

#define CRDBG_GATE_LINE(word)	word "\n"

/*
 * The orders (printf formats, scanf takes the same fields):
 *   STOPPED  PID                   PID stays in a group stop (CRIU's, or one the
 *                                  plugin queues): let go before its parent
 *   HOOK     PID TRAMPOLINE ARG    (hex) push the CRS hook on every thread of PID
 *   SIGCONT  PID TID               queue a SIGCONT a group stop took (TID 0: PID's)
 *   CONT     PID                   end the stop CRIU puts PID in, if any
 */
#define CRDBG_GATE_ORDER_STOPPED	"stopped %d\n"
#define CRDBG_GATE_ORDER_HOOK		"hook %d %llx %llx\n"
#define CRDBG_GATE_ORDER_SIGCONT	"sigcont %d %d\n"
#define CRDBG_GATE_ORDER_CONT		"cont %d\n"

/* The report: PID TID PC (hex), PID TID ERRNO. */
#define CRDBG_GATE_REPORT_PC		"pc %d %d %llx\n"
#define CRDBG_GATE_REPORT_FAIL		"fail %d %d %llu\n"

#endif /* CRDBG_CRIU_GATE_H */
