/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one source of crdbg's user documentation: every command's synopsis,
 * description and options. `crdbg --help`, `crdbg COMMAND --help` and the
 * crdbg(1) man page (usr/cli/mkman.c) are all printed from this table, so
 * they cannot disagree. A new command or option is added here, in help.c.
 */
#ifndef CRDBG_CLI_HELP_H
#define CRDBG_CLI_HELP_H

#include <stddef.h>
#include <stdio.h>

#define CLI_HELP_MAX_SYNOPSIS	4
#define CLI_HELP_MAX_OPTIONS	16

struct cli_option {
	const char *flag;	/* "--store DIR" */
	const char *help;	/* one sentence; '\n' breaks the --help line */
};

struct cli_help {
	const char *name;		/* as typed after "crdbg" */
	const char *args;		/* one line after the name, for crdbg --help */
	const char *summary;		/* one line, for crdbg --help */
	/* Full usage lines, each after "crdbg " */
	const char *synopsis[CLI_HELP_MAX_SYNOPSIS];
	/* Paragraphs: '\n' a line break in --help, "\n\n" a new paragraph */
	const char *description;
	struct cli_option options[CLI_HELP_MAX_OPTIONS];
};

/* A variable crdbg or its libraries read from the environment. */
struct cli_env {
	const char *name;
	const char *help;
};

extern const char cli_name_line[];	/* what crdbg is, in one line */
extern const char cli_description[];	/* what crdbg does, for the man page */
extern const struct cli_help cli_helps[];
extern const size_t cli_nr_helps;
extern const struct cli_env cli_envs[];
extern const size_t cli_nr_envs;

/* The entry for NAME, or NULL. */
const struct cli_help *cli_help_find(const char *name);

/* "Usage: crdbg ..." and the list of commands (crdbg --help). */
void cli_print_usage(FILE *out);

/* One command's usage, description and options (crdbg NAME --help). */
void cli_print_help(FILE *out, const char *name);

#endif /* CRDBG_CLI_HELP_H */
