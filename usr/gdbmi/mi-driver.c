// SPDX-License-Identifier: GPL-2.0
/*
 * GDB/MI driver: one gdb child on pipes, the inferior on a pty (or FIFOs),
 * all I/O non-blocking around one poll() (mi-pump.c). Commands carry a
 * token; the result record with that token completes them. Async records
 * go to a bounded queue, console text and program output to bounded
 * buffers; when the output buffer is full the pty is no longer read, so a
 * chatty program blocks instead of growing our memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mi-driver.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline (-1: none). */
int mi_drv_remaining(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - now_ms();
	return left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left;
}

int64_t mi_drv_deadline(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

void mi_drv_set_error(struct mi_driver *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->errmsg, sizeof(d->errmsg), fmt, ap);
	va_end(ap);
}

void mi_drv_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}


/*
 * Append "TOKEN<command>\n" to the write buffer. -EINVAL for a command
 * that is too long or holds a newline, -ENOBUFS when the buffer has no
 * room now (gdb is not reading).
 */
static int queue_command(struct mi_driver *d, const char *fmt, va_list ap, uint64_t *ret_token)
{
	uint64_t token = d->next_token + 1;
	size_t room, n;
	char *p;
	int k;

	if (d->woff) {
		memmove(d->wbuf, d->wbuf + d->woff, d->wlen - d->woff);
		d->wlen -= d->woff;
		d->woff = 0;
	}
	room = MI_MAX_WBUF - d->wlen;
	if (room > MI_MAX_CMD)
		room = MI_MAX_CMD;
	p = d->wbuf + d->wlen;
	k = snprintf(p, room, "%" PRIu64, token);
	if (k < 0 || (size_t)k >= room)
		return -ENOBUFS;
	n = k;
	k = vsnprintf(p + n, room - n, fmt, ap);
	if (k < 0 || n + k + 1 >= MI_MAX_CMD) {
		mi_drv_set_error(d, "command too long");
		return -EINVAL;
	}
	if (n + k + 1 >= room)
		return -ENOBUFS;	/* fits once earlier commands are written */
	if (memchr(p + n, '\n', k)) {
		mi_drv_set_error(d, "command has a newline");
		return -EINVAL;
	}
	n += k;
	p[n++] = '\n';
	d->wlen += n;
	d->next_token = token;
	*ret_token = token;
	mi_drv_write_gdb(d);
	return 0;
}

int mi_driver_vcmd(struct mi_driver *d, struct mi_record **ret_rec, const char *fmt, va_list ap)
{
	int64_t deadline = mi_drv_deadline(d->cmd_timeout_ms);
	struct mi_record *rec;
	uint64_t token;
	int err;

	for (;;) {
		va_list aq;

		if (d->dead) {
			if (!d->errmsg[0])
				mi_drv_set_error(d, "gdb is gone");
			return -EPIPE;
		}
		va_copy(aq, ap);
		err = queue_command(d, fmt, aq, &token);
		va_end(aq);
		if (err != -ENOBUFS)
			break;
		/* Earlier commands still fill the buffer: let gdb take them. */
		if (!mi_drv_remaining(deadline)) {
			mi_drv_set_error(d, "gdb does not read its input");
			return -ETIMEDOUT;
		}
		err = mi_drv_pump(d, mi_drv_remaining(deadline), NULL);
		if (err)
			return err;
	}
	if (err)
		return err;
	d->wait_token = token;
	mi_record_free(d->result);
	d->result = NULL;

	while (!d->result && !d->dead) {
		int left = mi_drv_remaining(deadline);

		if (!left)
			break;
		err = mi_drv_pump(d, left, NULL);
		if (err)
			return err;
	}
	d->wait_token = 0;
	rec = d->result;
	d->result = NULL;
	if (!rec) {
		if (d->dead)
			return -EPIPE;
		/* The line stays queued if unwritten: gdb must see lines whole. */
		mi_drv_set_error(d, "no answer from gdb within %d ms", d->cmd_timeout_ms);
		return -ETIMEDOUT;
	}
	if (rec->rclass == MI_RC_ERROR) {
		const char *msg = mi_get_str(rec->results, "msg");

		mi_drv_set_error(d, "%s", msg ? msg : "error");
		mi_record_free(rec);
		return -EREMOTEIO;
	}
	if (ret_rec)
		*ret_rec = rec;
	else
		mi_record_free(rec);
	return 0;
}

int mi_driver_send(struct mi_driver *d, uint64_t *ret_token, const char *fmt, ...)
{
	uint64_t token;
	va_list ap;
	int err;

	if (d->dead)
		return -EPIPE;
	if (d->npend == MI_MAX_PENDING)
		return -ENOBUFS;
	va_start(ap, fmt);
	err = queue_command(d, fmt, ap, &token);
	va_end(ap);
	if (err)
		return err;
	d->pend[d->npend].token = token;
	d->pend[d->npend].rec = NULL;
	d->npend++;
	*ret_token = token;
	return 0;
}

int mi_driver_take_result(struct mi_driver *d, uint64_t token, struct mi_record **ret_rec)
{
	for (size_t i = 0; i < d->npend; i++) {
		if (d->pend[i].token != token)
			continue;
		if (!d->pend[i].rec)
			return d->dead ? -EPIPE : 0;
		*ret_rec = d->pend[i].rec;
		d->pend[i] = d->pend[--d->npend];
		return 1;
	}
	return -ENOENT;
}

int mi_driver_cmd(struct mi_driver *d, struct mi_record **ret_rec, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = mi_driver_vcmd(d, ret_rec, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * One round of I/O before deadline (-1: none): 1 to look again, 0 once
 * the deadline has passed, or -errno.
 */
static int pump_until(struct mi_driver *d, int64_t deadline)
{
	int err;

	if (deadline >= 0 && !mi_drv_remaining(deadline))
		return 0;
	err = mi_drv_pump(d, mi_drv_remaining(deadline), NULL);
	return err ? err : 1;
}

int mi_driver_next_event(struct mi_driver *d, int timeout_ms, struct mi_record **ret_rec)
{
	int64_t deadline = mi_drv_deadline(timeout_ms);

	for (;;) {
		struct mi_record *rec = mi_drv_pop_event(d);
		int err;

		if (rec) {
			*ret_rec = rec;
			return 1;
		}
		if (d->dead)
			return -EPIPE;
		err = pump_until(d, deadline);
		if (err <= 0)
			return err;
	}
}

char *mi_driver_take_console(struct mi_driver *d)
{
	char *s = d->console ? d->console : strdup("");

	d->console = NULL;
	d->console_len = 0;
	return s;
}

ssize_t mi_driver_read_output(struct mi_driver *d, void *buf, size_t size, int timeout_ms)
{
	int64_t deadline = mi_drv_deadline(timeout_ms);

	for (;;) {
		size_t n = d->out_len - d->out_start;
		int err;

		if (n && size) {
			if (n > size)
				n = size;
			memcpy(buf, d->out + d->out_start, n);
			d->out_start += n;
			return n;
		}
		if (d->pty_master < 0)
			return -ENOTTY;
		if (d->dead) {
			mi_drv_read_pty(d);	/* what the program wrote before the end */
			if (d->out_len > d->out_start)
				continue;
			return -EPIPE;
		}
		err = pump_until(d, deadline);
		if (err <= 0)
			return err;
	}
}

int mi_driver_write_input(struct mi_driver *d, const void *buf, size_t len)
{
	int fd = d->fifo ? d->fifo_in : d->pty_master;
	const char *p = buf;

	if (fd < 0)
		return -ENOTTY;
	while (len) {
		ssize_t n = write(fd, p, len);
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int err;

		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (d->dead)
			return -EPIPE;
		/* Keep gdb's pipes drained while the program is slow to read. */
		err = mi_drv_pump(d, d->cmd_timeout_ms, &pfd);
		if (err)
			return err;
		if (!pfd.revents)
			return -ETIMEDOUT;
	}
	return 0;
}
