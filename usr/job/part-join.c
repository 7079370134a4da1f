// SPDX-License-Identifier: GPL-2.0
/*
 * A restart's part run by `crdbg restart JOB --join N` on another
 * terminal (join.h, parts.h): awaiting until the join connects, then
 * joined, the connection its stdin and stdout. The process is the
 * join's, not ours: its exit status comes as an exit step, and a part
 * that must end is hung up on.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "parts.h"

void job_part_join_await(struct job_part *p, const char *node)
{
	p->ops = &job_part_join_ops;
	snprintf(p->node, sizeof(p->node), "%s", node);
	p->awaiting = true;
}

void job_part_join_attach(struct job_part *p, int in, int out)
{
	p->in = in;
	p->out = out;
	p->err = -1;
	p->pid = 0;
	p->awaiting = false;
	p->joined = true;
	snprintf(p->last_err, sizeof(p->last_err),
		 "ended; its messages are on the terminal that joined");
}

/* The join is told its stdin is done: our side of the socket is half-closed. */
static void join_close_in(struct job_part *p)
{
	if (p->joined)
		shutdown(p->in, SHUT_WR);
	close(p->in);
	p->in = -1;
}

static void join_exited(struct job_part *p, int status)
{
	if (p->joined)
		p->status = status;
}

/* Not ours to kill: hang up on it. */
static void join_hang_up(struct job_part *p)
{
	if (p->joined && p->out >= 0) {
		close(p->out);
		p->out = -1;
	}
}

static bool join_over(const struct job_part *p)
{
	return p->lost || (!p->awaiting && p->out < 0);
}

const struct job_part_ops job_part_join_ops = {
	.send = job_stream_send,
	.wait = job_stream_wait,
	.finish = job_stream_finish,
	.over = join_over,
	.terminals = true,
	.close_in = join_close_in,
	.exited = join_exited,
	.lost = join_hang_up,
	.end = join_hang_up,
};
