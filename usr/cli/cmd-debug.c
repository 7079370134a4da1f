// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg debug / crdbg attach: N processes of one program, each under its
 * own gdb driven by an SDM server, in one console (usr/console/).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "help.h"
#include "crdbg/console.h"

#define DEBUG_MAX_RANKS	4096
#define DEBUG_MAX_ATTACH_S	86400	/* a day: more is a typo */

/* Options; -1 to go on (*ret_i: first operand), else an exit status. */
static int parse(const char *cmd, int argc, char **argv, struct dbg_opts *o, int *ret_i)
{
	int i;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, cmd);
		return 0;
	}
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (!strcmp(a, "-n") || !strcmp(a, "--nprocs")) {
			char *end;
			unsigned long n;

			if (++i >= argc) {
				cli_error("debug: -n needs a number");
				return 2;
			}
			n = strtoul(argv[i], &end, 10);
			if (*end || !n || n > DEBUG_MAX_RANKS) {
				cli_error("debug: -n wants 1..%d, not '%s'",
					  DEBUG_MAX_RANKS, argv[i]);
				return 2;
			}
			o->nranks = n;
		} else if (!strcmp(a, "--batch") || !strcmp(a, "-x")) {
			if (++i >= argc) {
				cli_error("debug: --batch needs a file");
				return 2;
			}
			o->batch = argv[i];
		} else if (!strcmp(a, "-ex") || !strcmp(a, "--ex")) {
			if (++i >= argc) {
				cli_error("debug: -ex needs a command");
				return 2;
			}
			if (o->nex == DBG_MAX_EX) {
				cli_error("debug: at most %d -ex commands", DBG_MAX_EX);
				return 2;
			}
			o->ex[o->nex++] = argv[i];
		} else if (!strcmp(a, "--preload")) {
			if (++i >= argc) {
				cli_error("debug: --preload needs a library");
				return 2;
			}
			o->preload = argv[i];
		} else if (!strcmp(a, "--attach-timeout")) {
			char *end;
			unsigned long t;

			if (++i >= argc) {
				cli_error("%s: --attach-timeout needs seconds", cmd);
				return 2;
			}
			t = strtoul(argv[i], &end, 10);
			if (*end || !t || t > DEBUG_MAX_ATTACH_S) {
				cli_error("%s: --attach-timeout wants 1..%d seconds, not '%s'",
					  cmd, DEBUG_MAX_ATTACH_S, argv[i]);
				return 2;
			}
			o->attach_timeout_s = t;
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--mpi-hold")) {
			o->mpi_hold = true;
		} else if (!strcmp(a, "--restart") && !strcmp(cmd, "debug")) {
			if (++i >= argc) {
				cli_error("debug: --restart needs a job checkpoint's handle");
				return 2;
			}
			o->restart_job = argv[i];
		} else {
			cli_error("debug: unknown option '%s'", a);
			cli_print_help(stderr, cmd);
			return 2;
		}
	}
	*ret_i = i;
	return -1;
}

int cmd_debug(int argc, char **argv)
{
	struct dbg_opts o = { 0 };
	int i, rc;

	rc = parse("debug", argc, argv, &o, &i);
	if (rc >= 0)
		return rc;
	if (o.restart_job) {
		if (i < argc || o.nranks || o.mpi_hold) {
			cli_error("debug: --restart JOB takes its ranks from the job checkpoint: no program, -n or --mpi-hold with it");
			return 2;
		}
		return dbg_main(&o);
	}
	if (i >= argc) {
		cli_error("debug: no program given");
		cli_print_help(stderr, "debug");
		return 2;
	}
	o.argv = argv + i;
	return dbg_main(&o);
}

int cmd_attach(int argc, char **argv)
{
	struct dbg_opts o = { 0 };
	char *end;
	long pid;
	int i, rc;

	rc = parse("attach", argc, argv, &o, &i);
	if (rc >= 0)
		return rc;
	/* Options may follow the pid too: crdbg attach PID --batch F. */
	if (i < argc - 1) {
		int j;

		rc = parse("attach", argc - i - 1, argv + i + 1, &o, &j);
		if (rc >= 0)
			return rc;
		if (j != argc - i - 1) {
			cli_error("attach: give one MPIRUN_PID, not '%s' too", argv[i + 1 + j]);
			cli_print_help(stderr, "attach");
			return 2;
		}
		argc = i + 1;
	}
	if (i != argc - 1) {
		cli_error("attach: give one MPIRUN_PID");
		cli_print_help(stderr, "attach");
		return 2;
	}
	pid = strtol(argv[i], &end, 10);
	if (*end || pid <= 0 || pid > 1 << 22) {
		cli_error("attach: '%s' is not a pid", argv[i]);
		return 2;
	}
	o.attach_pid = pid;
	return dbg_main(&o);
}
