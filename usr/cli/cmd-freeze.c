// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg freeze | thaw | threads PID [--backend kmod|ptrace|auto]
 *
 * freeze asks for a persistent freeze, since this command exits at once:
 * with kmod the module holds the process; with ptrace it is handed over
 * to a SIGSTOP group stop (see usr/freeze/freeze-ptrace.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <crdbg/freeze.h>
#include <crdbg/symbolize.h>
#include "cli.h"
#include "help.h"

struct freeze_args {
	enum freeze_backend_kind backend;
	pid_t pid;
};

static int parse_args(const char *cmd, int argc, char **argv, struct freeze_args *a)
{
	const char *backend = NULL;
	char *end;
	long pid = 0;
	int i;

	a->backend = FREEZE_BACKEND_AUTO;
	a->pid = 0;
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--backend") || !strcmp(argv[i], "-b")) {
			if (++i == argc) {
				cli_error("%s: --backend needs kmod, ptrace or auto", cmd);
				return -EINVAL;
			}
			backend = argv[i];
		} else if (!strncmp(argv[i], "--backend=", 10)) {
			backend = argv[i] + 10;
		} else if (!pid && argv[i][0] != '-') {
			errno = 0;
			pid = strtol(argv[i], &end, 10);
			if (errno || *end || pid <= 0 || pid > INT32_MAX) {
				cli_error("%s: \"%s\" is not a process id", cmd, argv[i]);
				return -EINVAL;
			}
		} else {
			cli_error("%s: unexpected argument \"%s\", try \"crdbg %s --help\"", cmd,
				  argv[i], cmd);
			return -EINVAL;
		}
	}
	if (!pid) {
		cli_error("usage: crdbg %s [--backend kmod|ptrace|auto] PID", cmd);
		return -EINVAL;
	}
	if (backend) {
		a->backend = freeze_backend_kind_from_string(backend);
		if ((int)a->backend == -1) {
			cli_error("%s: unknown backend \"%s\" (kmod, ptrace or auto)", cmd, backend);
			return -EINVAL;
		}
	}
	a->pid = (pid_t)pid;
	return 0;
}

static int open_backend(const char *cmd, const struct freeze_args *a, struct freeze_backend **b)
{
	char err[256];

	if (freeze_backend_open(a->backend, b, err, sizeof(err)) < 0) {
		cli_error("%s: %s", cmd, err);
		return -1;
	}
	return 0;
}

static const char *state_name(enum freeze_thread_state s)
{
	switch (s) {
	case FREEZE_THREAD_RUNNING:
		return "running";
	case FREEZE_THREAD_FROZEN:
		return "frozen";
	case FREEZE_THREAD_HOOK_PENDING:
		return "hook-pending";
	case FREEZE_THREAD_EXITED:
		return "exited";
	}
	return "?";
}

int cmd_freeze(int argc, char **argv)
{
	struct freeze_backend *b;
	struct freeze_args a;
	char err[256];
	int n;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "freeze");
		return 0;
	}
	if (parse_args("freeze", argc, argv, &a) < 0)
		return 2;
	if (open_backend("freeze", &a, &b) < 0)
		return 1;
	if (freeze_process(b, a.pid, FREEZE_F_PERSIST, err, sizeof(err)) < 0) {
		cli_error("freeze: %s", err);
		freeze_backend_close(b);
		return 1;
	}
	n = freeze_query(b, a.pid, NULL, 0, err, sizeof(err));
	printf("pid %d frozen", a.pid);
	if (n >= 0)
		printf(", %d thread%s", n, n == 1 ? "" : "s");
	printf(" (%s backend", freeze_backend_name(b));
	if (freeze_backend_kind(b) == FREEZE_BACKEND_PTRACE)
		printf("; held in a SIGSTOP group stop until 'crdbg thaw %d'", a.pid);
	printf(")\n");
	freeze_backend_close(b);
	return 0;
}

int cmd_thaw(int argc, char **argv)
{
	struct freeze_backend *b;
	struct freeze_args a;
	char err[256];

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "thaw");
		return 0;
	}
	if (parse_args("thaw", argc, argv, &a) < 0)
		return 2;
	if (open_backend("thaw", &a, &b) < 0)
		return 1;
	if (freeze_thaw(b, a.pid, err, sizeof(err)) < 0) {
		cli_error("thaw: %s", err);
		freeze_backend_close(b);
		return 1;
	}
	printf("pid %d thawed (%s backend)\n", a.pid, freeze_backend_name(b));
	freeze_backend_close(b);
	return 0;
}

int cmd_threads(int argc, char **argv)
{
	struct freeze_thread *t = NULL;
	struct freeze_backend *b;
	struct freeze_args a;
	char err[256], sym[256];
	int n, i, ret = 1;

	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "threads");
		return 0;
	}
	if (parse_args("threads", argc, argv, &a) < 0)
		return 2;
	if (open_backend("threads", &a, &b) < 0)
		return 1;
	n = freeze_query(b, a.pid, NULL, 0, err, sizeof(err));
	while (n >= 0) {
		struct freeze_thread *nt = realloc(t, (size_t)(n ? n : 1) * sizeof(*t));
		int got;

		if (!nt) {
			snprintf(err, sizeof(err), "out of memory");
			n = -ENOMEM;
			break;
		}
		t = nt;
		got = freeze_query(b, a.pid, t, (size_t)n, err, sizeof(err));
		if (got <= n) {
			n = got;
			break;
		}
		n = got;	/* a thread appeared between the calls: again */
	}
	if (n < 0) {
		cli_error("threads: %s", err);
		goto out;
	}
	printf("%-8s %-13s %-18s %s\n", "TID", "STATE", "PC", "SYMBOL");
	for (i = 0; i < n; i++) {
		if (freeze_sym_describe(a.pid, t[i].regs.ip, sym, sizeof(sym)) < 0)
			snprintf(sym, sizeof(sym), "?");
		printf("%-8d %-13s 0x%016" PRIx64 " %s\n", t[i].tid, state_name(t[i].state),
		       t[i].regs.ip, sym);
	}
	ret = 0;
out:
	free(t);
	freeze_backend_close(b);
	return ret;
}
