// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg: entry point and command table (iproute2 style). Each command is
 * one line here; its handler receives the arguments after its name. Its
 * help text is in help.c, the one source of --help and crdbg(1).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "help.h"

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
};

static const struct cli_command commands[] = {
	{ "kmod", cmd_kmod },
	{ "freeze", cmd_freeze },
	{ "thaw", cmd_thaw },
	{ "threads", cmd_threads },
	{ "checkpoint", cmd_checkpoint },
	{ "restart", cmd_restart },
	{ "list", cmd_list },
	{ "rm", cmd_rm },
	{ "verify", cmd_verify },
	{ "debug", cmd_debug },
	{ "attach", cmd_attach },
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

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		cli_print_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		cli_print_usage(stdout);
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
