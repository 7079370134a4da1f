// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg debug / crdbg attach: N processes of one program, each under its
 * own gdb driven by an SDM server, in one console (usr/console/).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "crdbg/console.h"

#define DEBUG_MAX_RANKS	4096

static void usage(FILE *f)
{
	fprintf(f, "usage: crdbg debug -n N [--batch FILE] [-ex CMD]... [--json] [--] PROGRAM [ARGS...]\n"
		   "       crdbg debug [OPTIONS] -- mpirun -n N PROGRAM [ARGS...]\n"
		   "       crdbg attach [OPTIONS] MPIRUN_PID\n"
		   "  start N copies of PROGRAM (CRDBG_RANK=0..N-1 in their environment),\n"
		   "  each stopped at main, and open the console ('help' lists its commands);\n"
		   "  with mpirun (Open MPI), acquire the ranks through MPIR: they are held\n"
		   "  in MPI_Init; attach does the same for a running job\n"
		   "  --batch FILE  run the commands in FILE, then quit (- for stdin)\n"
		   "  -ex CMD       run CMD first (repeatable)\n"
		   "  --json        print events as JSON objects, one a line\n"
		   "  --preload LIB LD_PRELOAD=LIB for the program only (e.g. libcrdbg.so,\n"
		   "                for the console's checkpoint and restart)\n");
}

/* Options; -1 to go on (*ret_i: first operand), else an exit status. */
static int parse(int argc, char **argv, struct dbg_opts *o, int *ret_i)
{
	int i;

	if (cli_wants_help(argc, argv)) {
		usage(stdout);
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
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else {
			cli_error("debug: unknown option '%s'", a);
			usage(stderr);
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

	rc = parse(argc, argv, &o, &i);
	if (rc >= 0)
		return rc;
	if (i >= argc) {
		cli_error("debug: no program given");
		usage(stderr);
		return 2;
	}
	if (!o.nranks)
		o.nranks = 1;
	o.argv = argv + i;
	return dbg_main(&o);
}

int cmd_attach(int argc, char **argv)
{
	struct dbg_opts o = { 0 };
	char *end;
	long pid;
	int i, rc;

	rc = parse(argc, argv, &o, &i);
	if (rc >= 0)
		return rc;
	if (i != argc - 1) {
		cli_error("attach: give one MPIRUN_PID");
		usage(stderr);
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
