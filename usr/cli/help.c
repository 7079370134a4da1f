// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg's user documentation, one entry per command (see help.h): printed
 * by --help here and turned into crdbg(1) by mkman.c.
 */
#include <stdbool.h>
#include <string.h>

#include "help.h"
#include <crdbg/crs.h>
#include <crdbg/dbgproto.h>

#define CLI_STR_(x)	#x
#define CLI_STR(x)	CLI_STR_(x)	/* a number macro as a string literal */

#define HELP_WIDTH	79	/* --help lines wrap before this column */
#define OPT_COLUMN	22	/* option descriptions start here */

#define OPT_BACKEND { "--backend kmod|ptrace|auto", \
	"kmod (crdbg.ko), ptrace (no module) or auto (the default: kmod when crdbg.ko is loaded or can be, else ptrace); CRDBG_BACKEND sets the default" }
#define OPT_STORE { "--store DIR", \
	"the checkpoint store (default " CRS_STORE_DEFAULT ", or $CRDBG_STORE)" }
#define OPT_VERBOSE { "-v, --verbose", "show every thread's PC at checkpoint and at resume" }
#define OPT_BATCH { "--batch FILE", "run the console commands in FILE, then quit (- for stdin)" }
#define OPT_EX { "-ex CMD", "run the console command CMD first (repeatable)" }
#define OPT_JSON_EV { "--json", "print events as JSON objects, one a line" }
#define OPT_PRELOAD { "--preload LIB", \
	"LD_PRELOAD=LIB for the program only (e.g. libcrdbg.so, for the console's checkpoint and restart)" }

#define OPT_ATTACH_TIMEOUT { "--attach-timeout SECONDS", \
	"how long each rank's gdb may take to attach to its process and read its symbols " \
	"before the rank is given up as lost (default " CLI_STR(DBGP_ATTACH_TIMEOUT_S) \
	"; large programs on slow file systems may need more)" }

#define OPT_MPI_HOLD { "--mpi-hold", \
	"the program is a launcher (e.g. mpiexec.hydra) whose ranks run with libcrdbg-mpi preloaded: they are held in MPI_Init until attached (no MPIR needed)" }

const char cli_name_line[] = "kernel-assisted, checkpoint-aware parallel debugger";

const char cli_description[] =
	"crdbg debugs a parallel (MPI or not) job, checkpoints it while debugging and "
	"restarts it later, with or without the debugger, with every thread back at "
	"exactly the same program counter. The crdbg.ko module freezes every thread of "
	"a process at its exact PC (a ptrace backend does without it); CRIU takes and "
	"restores the images; libcrdbg, loaded into the program, implements the MPIR "
	"checkpoint protocol; a tree of crdbg-server processes carries the console's "
	"commands to one gdb per process.\n\n"
	"Each command prints its own usage with crdbg COMMAND --help. Errors are one "
	"line on stderr starting with \"crdbg:\"; the exit status is 0 on success, 1 "
	"when the command failed and 2 for bad usage.";

const struct cli_help cli_helps[] = {
	{
		.name = "kmod", .args = "status",
		.summary = "show whether crdbg.ko is loaded, and its version",
		.synopsis = { "kmod status" },
		.description = "Ask crdbg.ko, over its generic netlink family \"crdbg\", for its "
			       "version and the number of processes it holds frozen. Asking "
			       "loads the module when it is installed but not loaded yet.",
	},
	{
		.name = "freeze", .args = "PID",
		.summary = "hold every thread at its exact PC",
		.synopsis = { "freeze [--backend kmod|ptrace|auto] PID" },
		.description = "Freeze every thread of PID at its exact program counter and "
			       "leave it frozen when crdbg exits: crdbg.ko holds it, or, with "
			       "the ptrace backend, a SIGSTOP group stop, until crdbg thaw PID.",
		.options = { OPT_BACKEND },
	},
	{
		.name = "thaw", .args = "PID",
		.summary = "release a frozen process",
		.synopsis = { "thaw [--backend kmod|ptrace|auto] PID" },
		.description = "Release every thread of a process frozen by crdbg freeze.",
		.options = { OPT_BACKEND },
	},
	{
		.name = "threads", .args = "PID",
		.summary = "list a frozen process's threads: tid, state, pc, symbol",
		.synopsis = { "threads [--backend kmod|ptrace|auto] PID" },
		.description = "List the threads of a frozen process: tid, state, program "
			       "counter and the symbol it is in.",
		.options = { OPT_BACKEND },
	},
	{
		.name = "checkpoint", .args = "PID",
		.summary = "checkpoint a process tree (CRIU); prints its handle",
		.synopsis = { "checkpoint PID [--stop|--kill] [--debug|--no-debug] [--no-tree] [--full] "
			      "[--no-pre-dump] [--criu-opt=--OPTION[=VALUE]]... [--backend kmod|ptrace|auto] "
			      "[--store DIR] [-v]",
			      "checkpoint --job [NODE:]PID[:RANKS],... [--kill] [--debug] "
			      "[--launch TEMPLATE] [--timeout S] [--backend ...] [--store DIR] [-v]" },
		.description = "Checkpoint PID and its descendants with CRIU into the store. "
			       "Prints the handle on stdout. A later checkpoint of the same "
			       "processes is incremental: it stores only the pages written since "
			       "and names this one as its parent. With --job, checkpoint a "
			       "parallel job at one coordinated cut: one part per process tree, "
			       "each on its node, every part frozen before any is dumped and kept "
			       "only when all are stored; prints the job's handle.",
		.options = {
			{ "--job TARGETS", "the job's process trees: PID here, NODE:PID on another node "
					   "(NODE:PID:RANKS names its ranks, 4-5+7), comma-separated" },
			{ "--launch TEMPLATE", "how to run a part on another node, {host} and {cmd} "
					       "replaced (default in a Slurm allocation: srun --overlap)" },
			{ "--timeout S", "how long every part may take for each step (default 300); "
					 "a part silent for 20 s is taken as lost at once" },
			{ "--stop", "leave the tree stopped afterwards (kill -CONT PID resumes it)" },
			{ "--kill", "kill the tree once the checkpoint is stored" },
			{ "--debug", "a debugger will attach: threads wait after the checkpoint" },
			{ "--no-debug", "no debugger will attach: open MPIR_checkpoint_debug_gate" },
			{ "--no-tree", "only PID, not its descendants" },
			{ "--full", "store every page, even when an earlier checkpoint could be the parent" },
			{ "--no-pre-dump", "copy every page while the tree is stopped (by default a running "
					   "tree's pages are mostly copied before it stops)" },
			{ "--criu-opt=--OPTION", "pass OPTION to criu dump and restore (e.g. --file-locks, "
						 "--ext-unix-sk, --link-remap, --ghost-limit=16M); repeatable" },
			OPT_BACKEND, OPT_STORE, OPT_VERBOSE,
		},
	},
	{
		.name = "restart", .args = "HANDLE [--debug]",
		.summary = "restore a checkpoint, optionally parked for a debugger",
		.synopsis = { "restart HANDLE [--debug] [--lazy] [--terminal-fd N] [--backend kmod|ptrace|auto] "
			      "[--store DIR] [-v]",
			      "restart JOB [--debug] [--launch TEMPLATE] [--timeout S] [--backend ...] "
			      "[--store DIR] [-v]",
			      "restart JOB --join N [--store DIR]" },
		.description = "Verify and restore a checkpoint; crdbg waits for the program "
			       "and exits with its status. HANDLE may also be a pasted "
			       "\"MPIR checkpoint handle) HANDLE\" line. A job checkpoint is "
			       "restored part by part on the parts' nodes and released only when "
			       "every part is back with the job's computation id (the restart "
			       "barrier); a missing, damaged or foreign part stops everything "
			       "before any process runs.\n\n"
			       "A process that held its own session on a terminal comes back on "
			       "a new terminal that crdbg restart relays to its own, with its pid, "
			       "process group and session. The parts of a job that ran on other "
			       "terminals than the first come back on terminals of their own: for "
			       "each, the restart prints the command to run on the terminal that "
			       "should take them (crdbg restart JOB --join N) and waits for it "
			       "within --timeout, releasing nothing before every part is back.\n\n"
			       "A shell job (a process started by a shell, which led its session, "
			       "on the shell's terminal) comes back on the terminal of the restart, "
			       "in its session: restart it from a terminal, or give one with "
			       "--terminal-fd.",
		.options = {
			{ "--launch TEMPLATE", "a job's parts on other nodes: as for checkpoint --job" },
			{ "--timeout S", "how long every part may take for each step (default 180); "
					 "a part silent for 20 s is taken as lost at once" },
			{ "--debug", "every thread waits in MPIR_checkpoint_debugger_breakpoint() and each "
				     "process prints \"MPIR debug info) HOST:PID\" on its stderr for the debugger" },
			{ "--lazy", "release the tree before its memory is in: pages come on demand "
				    "(criu lazy-pages, userfaultfd), the rest is copied behind" },
			{ "--join N", "on another terminal, as the restart of job JOB says: restore "
				      "the parts of its terminal N here (same user and store)" },
			{ "--terminal-fd N", "the terminal for the restored tree is the open fd N "
					     "(a pty slave no session has, e.g. one a service relays), "
					     "not crdbg restart's own" },
			OPT_BACKEND, OPT_STORE, OPT_VERBOSE,
		},
	},
	{
		.name = "list", .args = "[--json]",
		.summary = "list the checkpoints in the store",
		.synopsis = { "list [--json] [--store DIR]" },
		.description = "List the checkpoints: handle, time, pids, size, whether a "
			       "debugger was attached, parent (an incremental checkpoint's, whose "
			       "pages it needs), program; then the job checkpoints: job, time, "
			       "parts, nodes, ranks, computation id. Damaged or incomplete ones "
			       "show as INVALID with the reason.",
		.options = {
			{ "--json", "one JSON array of objects instead of a table" },
			OPT_STORE,
		},
	},
	{
		.name = "rm", .args = "HANDLE",
		.summary = "delete a checkpoint",
		.synopsis = { "rm HANDLE [--store DIR]" },
		.description = "Delete a checkpoint from the store. A checkpoint that "
			       "incremental checkpoints depend on is refused, naming them; so "
			       "is a part of a job checkpoint, naming the job. rm JOB removes "
			       "every part, each on its node, then the job's manifest.",
		.options = { OPT_STORE },
	},
	{
		.name = "verify", .args = "HANDLE...",
		.summary = "check that checkpoints are whole and intact",
		.synopsis = { "verify HANDLE... [--store DIR]" },
		.description = "Check every image of each checkpoint against its metadata "
			       "(sizes, digests, the metadata's own checksum), and of every "
			       "checkpoint an incremental one needs, without "
			       "restoring anything, as restart does first. Prints "
			       "\"HANDLE: ok\" per good one and one error line per bad "
			       "one; exits 1 if any is bad. A job checkpoint is verified part "
			       "by part on the parts' nodes, each against the digest its "
			       "manifest recorded.",
		.options = { OPT_STORE },
	},
	{
		.name = "debug", .args = "-n N PROGRAM",
		.summary = "debug N processes in one console",
		.synopsis = { "debug [-n N] [OPTIONS] [--] PROGRAM [ARGS...]",
			      "debug [OPTIONS] -- mpirun -n N PROGRAM [ARGS...]",
			      "debug [OPTIONS] --restart JOB" },
		.description = "Start N copies of PROGRAM (CRDBG_RANK=0..N-1 in their "
			       "environment), each under its own gdb and stopped at main, and "
			       "open the console (its help command lists its commands). With "
			       "a launcher that implements MPIR (mpirun, mpiexec.hydra, srun) "
			       "the ranks are acquired through it. With --restart, the job "
			       "checkpoint JOB is restarted (crdbg restart JOB --debug, every "
			       "part on its node) and the console attaches to its ranks where "
			       "they were.",
		.options = {
			{ "-n, --nprocs N", "number of processes, 1 to 4096 (default 1)" },
			{ "--restart JOB", "restart job checkpoint JOB and debug its ranks (rank i: part i); parts on other nodes start inside the Slurm allocation or with CRDBG_SERVER_LAUNCH" },
			OPT_BATCH, OPT_EX, OPT_JSON_EV, OPT_PRELOAD, OPT_MPI_HOLD, OPT_ATTACH_TIMEOUT,
		},
	},
	{
		.name = "attach", .args = "MPIRUN_PID",
		.summary = "debug a running MPI job through its mpirun",
		.synopsis = { "attach [OPTIONS] MPIRUN_PID" },
		.description = "Attach to a running Open MPI job through its mpirun's MPIR "
			       "interface and open the console over its ranks.",
		.options = { OPT_BATCH, OPT_EX, OPT_JSON_EV, OPT_PRELOAD, OPT_ATTACH_TIMEOUT },
	},
};

const size_t cli_nr_helps = sizeof(cli_helps) / sizeof(cli_helps[0]);

const struct cli_env cli_envs[] = {
	{ "CRDBG_STORE", "the checkpoint store (default " CRS_STORE_DEFAULT ")" },
	{ "CRDBG_BACKEND", "the default freeze backend: kmod, ptrace or auto" },
	{ "CRDBG_CRIU", "the criu program (default /usr/sbin/criu); root's crdbg only: the service "
			"runs its own" },
	{ "CRDBG_SERVICE_SOCKET", "where a user who is not root finds crdbgd, the node's checkpoint "
				  "service (default /run/crdbg/crdbgd.sock)" },
	{ "CRDBG_GDB", "the gdb program each crdbg-server runs (default gdb from PATH)" },
	{ "CRDBG_SDM_BINDIR", "where sdm-master and crdbg-server are (default: found from crdbg's own path)" },
	{ "CRDBG_SDM_LOG", "a file for the SDM servers' log" },
	{ "SDM_PEER_TIMEOUT", "seconds (1-3600, default 60) a debug session's node may answer nothing "
			      "before its ranks are lost and its server ends" },
	{ "CRDBG_BIN", "read by libcrdbg: the crdbg command its MPIR commands name (default crdbg)" },
	{ "CRDBG_NO_AGENT", "read by libcrdbg: no checkpoint thread in this process" },
};

const size_t cli_nr_envs = sizeof(cli_envs) / sizeof(cli_envs[0]);

const struct cli_help *cli_help_find(const char *name)
{
	size_t i;

	for (i = 0; i < cli_nr_helps; i++)
		if (!strcmp(cli_helps[i].name, name))
			return &cli_helps[i];
	return NULL;
}

void cli_print_usage(FILE *out)
{
	size_t i;

	fprintf(out, "Usage: crdbg [--version] [--help] COMMAND [ARGS]\n\n"
		     "Kernel-assisted, checkpoint-aware parallel debugger.\n\n"
		     "Commands:\n");
	for (i = 0; i < cli_nr_helps; i++)
		fprintf(out, "  %-11s %-18s %s\n", cli_helps[i].name, cli_helps[i].args,
			cli_helps[i].summary);
	fprintf(out, "\nRun 'crdbg COMMAND --help' for a command's options.\n");
}

/* Length of the next word of s; words of a synopsis may hold spaces inside []. */
static size_t word_len(const char *s, bool brackets)
{
	size_t n = 0;
	int depth = 0;

	for (; s[n] && (depth > 0 || (s[n] != ' ' && s[n] != '\n')); n++) {
		if (brackets && s[n] == '[')
			depth++;
		else if (brackets && s[n] == ']' && depth > 0)
			depth--;
	}
	return n;
}

/*
 * Print s filled to HELP_WIDTH: col is where the cursor is, indent where
 * continuation lines start. '\n' breaks the line, "\n\n" leaves a blank one.
 */
static void print_filled(FILE *out, const char *s, size_t col, size_t indent, bool brackets)
{
	bool first = true;

	while (*s) {
		size_t n;

		if (*s == '\n' || *s == ' ') {
			if (*s == '\n') {
				fprintf(out, "\n%*s", (int)indent, "");
				col = indent;
				first = true;
			}
			s++;
			continue;
		}
		n = word_len(s, brackets);
		if (!first && col + 1 + n > HELP_WIDTH) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = indent;
			first = true;
		}
		if (!first) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", (int)n, s);
		col += n;
		s += n;
		first = false;
	}
	fputc('\n', out);
}

void cli_print_help(FILE *out, const char *name)
{
	const struct cli_help *h = cli_help_find(name);
	size_t i, col;

	if (!h)
		return;
	for (i = 0; i < CLI_HELP_MAX_SYNOPSIS && h->synopsis[i]; i++) {
		fputs(i ? "       crdbg " : "usage: crdbg ", out);
		col = strlen("usage: crdbg ");
		print_filled(out, h->synopsis[i], col, col + strlen(h->name) + 1, true);
	}
	print_filled(out, h->description, 0, 0, false);
	for (i = 0; i < CLI_HELP_MAX_OPTIONS && h->options[i].flag; i++) {
		const struct cli_option *o = &h->options[i];

		col = (size_t)fprintf(out, "  %s", o->flag);
		if (col + 1 >= OPT_COLUMN) {
			fputc('\n', out);
			col = 0;
		}
		fprintf(out, "%*s", (int)(OPT_COLUMN - col), "");
		print_filled(out, o->help, OPT_COLUMN, OPT_COLUMN, false);
	}
}
