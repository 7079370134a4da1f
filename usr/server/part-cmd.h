/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The "part" command's text (<crdbg/dbgproto.h>) as a server reads it:
 * pure parsing, no I/O, so that it can be fuzzed
 * (tests/fuzz/server_fuzz_part.c). part-run.c carries it out.
 */
#ifndef CRDBG_SERVER_PART_CMD_H
#define CRDBG_SERVER_PART_CMD_H

#define PART_ARGS_MAX	32
#define PART_STEP_MAX	64

enum part_op {
	PART_START,	/* start ARG\x1fARG...: a part operation of crdbg */
	PART_ORDER,	/* order LINE */
	PART_WAIT,	/* wait MS STEP | wait MS debug PID */
	PART_FINISH,	/* finish MS */
	PART_DRAIN,	/* drain MS */
};

struct part_cmd {
	enum part_op op;
	unsigned long ms;		/* wait, finish, drain */
	char step[PART_STEP_MAX];	/* wait: the step, or "debug" */
	int pid;			/* wait debug PID; else 0 */
	const char *line;		/* order: into the parsed buffer */
	/* start: argv[1..argc] point into the buffer, argv[argc + 1] is NULL */
	char *argv[PART_ARGS_MAX + 2];
	int argc;
};

/*
 * Parse the text after "part " (buf, NUL terminated, split in place).
 * 0, or -EINVAL and *why: the error reply without its "error: ".
 */
int part_cmd_parse(char *buf, struct part_cmd *c, const char **why);

#endif /* CRDBG_SERVER_PART_CMD_H */
