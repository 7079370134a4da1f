// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg: entry point and command table (iproute2 style). Each command is
 * one line here; its handler receives the arguments after its name.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct cli_command commands[] = {
	{ "kmod", cmd_kmod, "status             show whether crdbg.ko is loaded, and its version" },
	{ "freeze", cmd_freeze, "PID                hold every thread at its exact PC" },
	{ "thaw", cmd_thaw, "PID                release a frozen process" },
	{ "threads", cmd_threads, "PID                list a frozen process's threads: tid, state, pc, symbol" },
	{ "checkpoint", cmd_checkpoint, "PID                checkpoint a process tree (CRIU); prints its handle" },
	{ "restart", cmd_restart, "HANDLE [--debug]   restore a checkpoint, optionally parked for a debugger" },
	{ "list", cmd_list, "[--json]           list the checkpoints in the store" },
	{ "rm", cmd_rm, "HANDLE             delete a checkpoint" },
	{ "debug", cmd_debug, "-n N PROGRAM       debug N processes in one console" },
	{ "attach", cmd_attach, "MPIRUN_PID         debug a running MPI job through its mpirun" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("crdbg: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool cli_wants_help(int argc, char **argv)
{
	return argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help") ||
			    !strcmp(argv[0], "help"));
}

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "Usage: crdbg [--version] [--help] COMMAND [ARGS]\n\n"
		     "Kernel-assisted, checkpoint-aware parallel debugger.\n\n"
		     "Commands:\n");
	for (i = 0; i < NR_COMMANDS; i++)
		fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\nRun 'crdbg COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("crdbg %s\n", CRDBG_VERSION);
		return 0;
	}
	for (i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 2, argv + 2);

	cli_error("unknown command \"%s\", try \"crdbg --help\"", argv[1]);
	return 2;
}
