/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Terminals of a job restart (Documentation/checkpoint.md, "Stdio and
 * terminals at restart"): parts whose trees ran on another terminal than
 * the first are run by `crdbg restart JOB --join N` on the terminal that
 * should take them. The coordinator waits for it on a unix socket, the
 * door, <store>/.joins/<JOB>.sock in a directory only its user can enter;
 * each side checks the other's uid (SO_PEERCRED). One line a request:
 *
 *   join  -> "join N"            coord -> "parts I J ..." | "refused WHY"
 *   join  -> "part N I"          coord -> "argv W<TAB>W..." | "refused WHY"
 *
 * after which that connection is part I's stdin and stdout (parts.h),
 * and the join adds "crdbg-part exit STATUS" once the part ended.
 */
#ifndef CRDBG_CRS_JOB_JOIN_H
#define CRDBG_CRS_JOB_JOIN_H

#include <stddef.h>

#include <crdbg/job.h>

struct job_door {
	int dir_fd;		/* <store>/.joins, O_PATH */
	int listen_fd;
	char sock[CRS_HANDLE_MAX + 8];	/* "<JOB>.sock" in it */
};

/* A join's request: "join N" (which parts terminal N takes), "part N I". */
struct job_door_req {
	enum { JOB_DOOR_JOIN, JOB_DOOR_PART } kind;
	unsigned int group;	/* N, 1 or more */
	unsigned int part;	/* I, for JOB_DOOR_PART */
};

/* The request's line (no newline) into buf: its length, or -ENOSPC. */
int job_door_req_format(const struct job_door_req *r, char *buf, size_t len);

/* A line into *ret: 0, or -EBADMSG for a line that is no request. */
int job_door_req_parse(const char *line, struct job_door_req *ret);

/* Listen for the joins of handle; -1 fds when it fails (err says why). */
int job_door_open(struct job_door *d, const char *root, const char *handle, char *err,
		  size_t errlen);

/*
 * A connection on the door from a process of our own uid (else it is
 * told "refused ..." and closed): its fd, or -1. Its first line in line.
 */
int job_door_accept(struct job_door *d, char *line, size_t len);

void job_door_close(struct job_door *d);

/* One line to a peer of the door ("refused ..."); 0 or -errno. */
int job_door_say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Which terminal each part of j comes back on: 0 for the restart's own
 * (parts with no terminal, and those of the first terminal a part had),
 * 1, 2, ... for each other terminal (node, rdev, dev), in part order.
 * Returns how many other terminals there are.
 */
unsigned int job_terminal_groups(const struct crs_job *j, unsigned int *group);

#endif /* CRDBG_CRS_JOB_JOIN_H */
