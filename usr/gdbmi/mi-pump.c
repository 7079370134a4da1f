// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's I/O pump: gdb's stdout parsed into records (results to the
 * waiting command, async records to the bounded event queue, console text
 * to its buffer), gdb's stderr tail kept for error messages, the
 * program's terminal (or FIFO) read into the output buffer, queued
 * commands written to gdb, all around one poll().
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mi-driver.h"

static void gdb_gone(struct mi_driver *d)
{
	if (d->dead)
		return;
	d->dead = true;
	mi_drv_close_fd(&d->in_fd);
	/* stdout closed: gdb is exiting or gone; make sure it is. */
	if (!mi_drv_reap_gdb(d, 1000)) {
		mi_drv_kill_gdb(d);
		mi_drv_reap_gdb(d, -1);
	}
	if (WIFSIGNALED(d->status))
		mi_drv_set_error(d, "gdb killed by signal %d%s%s", WTERMSIG(d->status),
			  d->errtail[0] ? ": " : "", d->errtail);
	else
		mi_drv_set_error(d, "gdb exited with status %d%s%s", WEXITSTATUS(d->status),
			  d->errtail[0] ? ": " : "", d->errtail);
}

static void queue_event(struct mi_driver *d, struct mi_record *rec)
{
	struct mi_event *ev;

	if (d->ev_count >= MI_MAX_EVENTS) {
		/* Drop the oldest: a consumer that never reads loses history. */
		ev = d->ev_head;
		d->ev_head = ev->next;
		if (!d->ev_head)
			d->ev_tail = &d->ev_head;
		mi_record_free(ev->rec);
		free(ev);
		d->ev_count--;
		d->ev_dropped++;
	}
	ev = malloc(sizeof(*ev));
	if (!ev) {
		mi_record_free(rec);
		d->ev_dropped++;
		return;
	}
	ev->rec = rec;
	ev->next = NULL;
	*d->ev_tail = ev;
	d->ev_tail = &ev->next;
	d->ev_count++;
}

struct mi_record *mi_drv_pop_event(struct mi_driver *d)
{
	struct mi_event *ev = d->ev_head;
	struct mi_record *rec;

	if (!ev)
		return NULL;
	d->ev_head = ev->next;
	if (!d->ev_head)
		d->ev_tail = &d->ev_head;
	d->ev_count--;
	rec = ev->rec;
	free(ev);
	return rec;
}

static void track_inferior(struct mi_driver *d, const struct mi_record *rec)
{
	long long pid;

	if (!strcmp(rec->klass, "thread-group-started") &&
	    !mi_get_int(rec->results, "pid", &pid) && pid > 0) {
		mi_drv_close_fd(&d->inferior_pidfd);
		d->inferior_pid = pid;
		d->inferior_pidfd = mi_drv_pidfd_open(pid);
		d->owns_inferior = !d->attaching;
	} else if (!strcmp(rec->klass, "thread-group-exited")) {
		mi_drv_forget_inferior(d);
	}
}

static void append_console(struct mi_driver *d, const char *s, size_t n)
{
	char *nc;

	if (d->console_len + n > MI_MAX_CONSOLE)
		return;
	nc = realloc(d->console, d->console_len + n + 1);
	if (!nc)
		return;
	memcpy(nc + d->console_len, s, n);
	d->console_len += n;
	nc[d->console_len] = '\0';
	d->console = nc;
}

static void dispatch(struct mi_driver *d, struct mi_record *rec)
{
	switch (rec->kind) {
	case MI_REC_RESULT:
		if (!rec->has_token)
			break;
		if (d->wait_token && rec->token == d->wait_token && !d->result) {
			d->result = rec;
			return;
		}
		for (size_t i = 0; i < d->npend; i++) {
			if (d->pend[i].token == rec->token && !d->pend[i].rec) {
				d->pend[i].rec = rec;
				return;
			}
		}
		break;		/* stale (timed out) or not ours */
	case MI_REC_EXEC:
	case MI_REC_STATUS:
	case MI_REC_NOTIFY:
		track_inferior(d, rec);
		queue_event(d, rec);
		return;
	case MI_REC_CONSOLE:
		append_console(d, rec->text, rec->text_len);
		break;
	default:
		break;
	}
	mi_record_free(rec);
}

static void read_gdb(struct mi_driver *d)
{
	char buf[65536];
	ssize_t n = read(d->out_fd, buf, sizeof(buf));
	struct mi_record *rec;
	int r;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		mi_drv_close_fd(&d->out_fd);
		gdb_gone(d);
		return;
	}
	if (mi_parser_feed(d->parser, buf, n))
		return;
	while ((r = mi_parser_next(d->parser, &rec)) != 0) {
		if (r < 0)
			d->bad_lines++;	/* not MI: gdb's own chatter */
		else
			dispatch(d, rec);
	}
}

static void read_stderr(struct mi_driver *d)
{
	char buf[4096];
	ssize_t n = read(d->err_fd, buf, sizeof(buf) - 1);
	size_t keep = sizeof(d->errtail) - 1, cur;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		mi_drv_close_fd(&d->err_fd);
		return;
	}
	/* Keep the last line-ish tail, newlines folded, for error messages. */
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\n' || buf[i] == '\r')
			buf[i] = ' ';
	cur = strlen(d->errtail);
	if ((size_t)n >= keep) {
		memcpy(d->errtail, buf + n - keep, keep);
		d->errtail[keep] = '\0';
		return;
	}
	if (cur + n > keep) {
		memmove(d->errtail, d->errtail + (cur + n - keep), keep - n);
		cur = keep - n;
	}
	memcpy(d->errtail + cur, buf, n);
	d->errtail[cur + n] = '\0';
}

void mi_drv_read_pty(struct mi_driver *d)
{
	ssize_t n;

	if (d->out_start == d->out_len)
		d->out_start = d->out_len = 0;
	if (d->out_start && d->out_len == MI_MAX_OUTPUT) {
		memmove(d->out, d->out + d->out_start, d->out_len - d->out_start);
		d->out_len -= d->out_start;
		d->out_start = 0;
	}
	if (d->out_len == MI_MAX_OUTPUT)
		return;
	n = read(d->pty_master, d->out + d->out_len, MI_MAX_OUTPUT - d->out_len);
	if (n > 0)
		d->out_len += n;
}

/*
 * write() to a pipe whose reader died raises SIGPIPE: block it around the
 * write and swallow the one we caused, so a dead gdb is an -EPIPE and not
 * the death of the whole debugger. The caller's disposition is untouched.
 */
static ssize_t write_nosigpipe(int fd, const void *buf, size_t len)
{
	sigset_t pipe_set, old, pending;
	bool was_pending;
	ssize_t n;
	int e;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	n = write(fd, buf, len);
	e = errno;
	if (n < 0 && e == EPIPE && !was_pending) {
		static const struct timespec zero;

		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return n;
}

void mi_drv_write_gdb(struct mi_driver *d)
{
	while (d->woff < d->wlen && d->in_fd >= 0) {
		ssize_t n = write_nosigpipe(d->in_fd, d->wbuf + d->woff, d->wlen - d->woff);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				gdb_gone(d);	/* EPIPE: nobody reads */
			return;
		}
		d->woff += n;
	}
	if (d->woff == d->wlen)
		d->woff = d->wlen = 0;
}

/* One poll round; extra (may be NULL) is polled too for the caller. */
int mi_drv_pump(struct mi_driver *d, int timeout_ms, struct pollfd *extra)
{
	struct pollfd fds[5];
	int n = 0, i_out = -1, i_err = -1, i_in = -1, i_pty = -1, r;

	if (d->out_fd >= 0) {
		i_out = n;
		fds[n++] = (struct pollfd){ .fd = d->out_fd, .events = POLLIN };
	}
	if (d->err_fd >= 0) {
		i_err = n;
		fds[n++] = (struct pollfd){ .fd = d->err_fd, .events = POLLIN };
	}
	if (d->in_fd >= 0 && d->wlen) {
		i_in = n;
		fds[n++] = (struct pollfd){ .fd = d->in_fd, .events = POLLOUT };
	}
	if (d->pty_master >= 0 && !(d->out_start == 0 && d->out_len == MI_MAX_OUTPUT)) {
		i_pty = n;
		fds[n++] = (struct pollfd){ .fd = d->pty_master, .events = POLLIN };
	}
	if (extra)
		fds[n++] = *extra;

	r = poll(fds, n, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	if (i_in >= 0 && fds[i_in].revents)
		mi_drv_write_gdb(d);
	if (i_pty >= 0 && (fds[i_pty].revents & POLLIN))
		mi_drv_read_pty(d);
	if (i_err >= 0 && fds[i_err].revents)
		read_stderr(d);
	if (i_out >= 0 && fds[i_out].revents)
		read_gdb(d);
	if (extra)
		extra->revents = fds[n - 1].revents;
	return 0;
}

int mi_driver_pump(struct mi_driver *d, int timeout_ms)
{
	int err;

	/* Without gdb only the pty is left: never block on it alone. */
	err = mi_drv_pump(d, d->dead ? 0 : timeout_ms, NULL);

	if (err)
		return err;
	return d->dead ? -EPIPE : 0;
}

int mi_driver_pollfds(const struct mi_driver *d, struct pollfd *fds, int n)
{
	int i = 0;

	if (i < n && d->out_fd >= 0)
		fds[i++] = (struct pollfd){ .fd = d->out_fd, .events = POLLIN };
	if (i < n && d->err_fd >= 0)
		fds[i++] = (struct pollfd){ .fd = d->err_fd, .events = POLLIN };
	if (i < n && d->in_fd >= 0 && d->wlen)
		fds[i++] = (struct pollfd){ .fd = d->in_fd, .events = POLLOUT };
	if (i < n && d->pty_master >= 0)
		fds[i++] = (struct pollfd){ .fd = d->pty_master, .events = POLLIN };
	return i;
}
