// SPDX-License-Identifier: GPL-2.0
/*
 * GDB/MI driver: one gdb child on pipes, the inferior on a pty, all I/O
 * non-blocking around one poll(). Commands carry a token; the result
 * record with that token completes them. Async records go to a bounded
 * queue, console text and program output to bounded buffers; when the
 * output buffer is full the pty is no longer read, so a chatty program
 * blocks instead of growing our memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "crdbg/gdbmi.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define MI_MAX_EVENTS		4096		/* queued async records */
#define MI_MAX_CONSOLE		(1u << 20)	/* console text kept */
#define MI_MAX_OUTPUT		(1u << 20)	/* program output buffered */
#define MI_MAX_CMD		(64u << 10)	/* one command line */
#define MI_MAX_WBUF		(4 * MI_MAX_CMD) /* commands not yet written */
#define MI_MAX_PENDING		256		/* async commands awaiting a result */
#define MI_EXIT_WAIT_MS		3000		/* -gdb-exit, then SIGKILL */
#define MI_DEFAULT_TIMEOUT_MS	30000

struct mi_event {
	struct mi_record *rec;
	struct mi_event *next;
};

struct mi_driver {
	pid_t gdb_pid;
	int gdb_pidfd;
	int in_fd, out_fd, err_fd;	/* gdb's stdin, stdout, stderr */
	int pty_master, pty_slave;
	/*
	 * FIFO mode: d->tty is the program's stdout and stderr, read through
	 * pty_master; its stdin is a second FIFO, written through fifo_in
	 * (one FIFO for both would feed a program that reads stdin its own
	 * output, as mpirun does). We unlink both at the end.
	 */
	bool fifo;
	int fifo_in;
	char tty[64], tty_in[72];

	struct mi_parser *parser;
	uint64_t next_token, wait_token;
	struct mi_record *result;	/* result record for wait_token */

	struct mi_event *ev_head, **ev_tail;
	size_t ev_count, ev_dropped;

	char *console;
	size_t console_len;

	char *out;			/* program output, [out_start, out_len) */
	size_t out_start, out_len;

	char *wbuf;			/* command bytes not yet written */
	size_t wlen, woff;		/* [woff, wlen) still to write */

	struct {			/* mi_driver_send() commands */
		uint64_t token;
		struct mi_record *rec;	/* its result, once here */
	} pend[MI_MAX_PENDING];
	size_t npend;

	char errtail[512];		/* last bytes of gdb's stderr */
	char errmsg[512];
	size_t bad_lines;

	bool dead;
	int status;			/* gdb's wait status once reaped */
	bool reaped;
	int cmd_timeout_ms;

	pid_t inferior_pid;
	int inferior_pidfd;
	bool owns_inferior;		/* started by gdb, not attached to */
	bool attaching;			/* a -target-attach is under way */
};

static int sys_pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

static int sys_pidfd_send_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* Signal gdb through its pidfd when there is one: its pid may be reused. */
static void kill_gdb(struct mi_driver *d)
{
	if (d->reaped)
		return;
	if (d->gdb_pidfd >= 0)
		sys_pidfd_send_signal(d->gdb_pidfd, SIGKILL);
	else
		kill(d->gdb_pid, SIGKILL);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline (-1: none). */
static int remaining(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - now_ms();
	return left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left;
}

static int64_t deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

static void set_error(struct mi_driver *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_error(struct mi_driver *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->errmsg, sizeof(d->errmsg), fmt, ap);
	va_end(ap);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void forget_inferior(struct mi_driver *d)
{
	close_fd(&d->inferior_pidfd);
	d->inferior_pid = 0;
	d->owns_inferior = false;
}

/* Wait at most timeout_ms for gdb to exit, then reap it. */
static bool reap_gdb(struct mi_driver *d, int timeout_ms)
{
	struct pollfd pfd = { .fd = d->gdb_pidfd, .events = POLLIN };

	if (d->reaped)
		return true;
	if (d->gdb_pidfd >= 0 && timeout_ms) {
		int64_t deadline = deadline_of(timeout_ms);

		while (poll(&pfd, 1, remaining(deadline)) < 0 && errno == EINTR)
			;
	}
	if (waitpid(d->gdb_pid, &d->status, WNOHANG) == d->gdb_pid) {
		d->reaped = true;
		return true;
	}
	return false;
}

static void gdb_gone(struct mi_driver *d)
{
	if (d->dead)
		return;
	d->dead = true;
	close_fd(&d->in_fd);
	/* stdout closed: gdb is exiting or gone; make sure it is. */
	if (!reap_gdb(d, 1000)) {
		kill_gdb(d);
		reap_gdb(d, -1);
	}
	if (WIFSIGNALED(d->status))
		set_error(d, "gdb killed by signal %d%s%s", WTERMSIG(d->status),
			  d->errtail[0] ? ": " : "", d->errtail);
	else
		set_error(d, "gdb exited with status %d%s%s", WEXITSTATUS(d->status),
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

static struct mi_record *pop_event(struct mi_driver *d)
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
		close_fd(&d->inferior_pidfd);
		d->inferior_pid = pid;
		d->inferior_pidfd = sys_pidfd_open(pid);
		d->owns_inferior = !d->attaching;
	} else if (!strcmp(rec->klass, "thread-group-exited")) {
		forget_inferior(d);
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
		close_fd(&d->out_fd);
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
		close_fd(&d->err_fd);
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

static void read_pty(struct mi_driver *d)
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

static void write_gdb(struct mi_driver *d)
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
static int pump(struct mi_driver *d, int timeout_ms, struct pollfd *extra)
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
		write_gdb(d);
	if (i_pty >= 0 && (fds[i_pty].revents & POLLIN))
		read_pty(d);
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
	err = pump(d, d->dead ? 0 : timeout_ms, NULL);

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

/* ------------------------------------------------------------------ */
/* Startup and teardown */

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* The inferior's stdio on FIFOs in /tmp (they stay until mi_driver_free). */
static int open_fifo(struct mi_driver *d)
{
	snprintf(d->tty, sizeof(d->tty), "/tmp/crdbg-io-%d-%p", (int)getpid(), (void *)d);
	snprintf(d->tty_in, sizeof(d->tty_in), "%s.in", d->tty);
	if (mkfifo(d->tty, 0600))
		return -errno;
	d->fifo = true;
	if (mkfifo(d->tty_in, 0600))
		return -errno;
	/* O_RDWR: never EOF between two writers, and opens without a peer. */
	d->pty_master = open(d->tty, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	d->fifo_in = open(d->tty_in, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (d->pty_master < 0 || d->fifo_in < 0)
		return -errno;
	return 0;
}

static int open_pty(struct mi_driver *d)
{
	struct termios tio;

	d->pty_master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (d->pty_master < 0)
		return -errno;
	if (grantpt(d->pty_master) || unlockpt(d->pty_master) ||
	    ptsname_r(d->pty_master, d->tty, sizeof(d->tty)))
		return -errno;
	/*
	 * Hold the slave open ourselves: the master then never reads EIO
	 * between two inferiors, and output written just before the
	 * program exits is not lost.
	 */
	d->pty_slave = open(d->tty, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (d->pty_slave < 0)
		return -errno;
	/* Bytes in, bytes out: no echo of stdin, no \n -> \r\n. Lines stay canonical. */
	if (tcgetattr(d->pty_slave, &tio))
		return -errno;
	tio.c_lflag &= ~(ECHO | ECHOE | ECHOK | ECHONL);
	tio.c_oflag &= ~(ONLCR | OCRNL);
	if (tcsetattr(d->pty_slave, TCSANOW, &tio))
		return -errno;
	return set_nonblock(d->pty_master);
}

/* A new network namespace with its loopback up (root only). */
static int enter_own_netns(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd, r = 0;

	if (unshare(CLONE_NEWNET))
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		r = ioctl(fd, SIOCSIFFLAGS, &ifr);
	} else {
		r = -1;
	}
	close(fd);
	return r;
}

static void child_exec(const char *const *argv, bool own_netns, int in, int out, int err,
		       int status_fd)
{
	int e;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setsid();	/* no terminal: a ^C at the console is not gdb's */
	if (own_netns && enter_own_netns())
		goto fail;
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		goto fail;
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], (char *const *)argv);
fail:
	e = errno;
	if (write(status_fd, &e, sizeof(e)) < 0)
		_exit(126);
	_exit(127);
}

static int spawn_gdb(struct mi_driver *d, const struct mi_driver_opts *opts)
{
	int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
	int pst[2] = { -1, -1 }, e = 0, err;
	const char *argv[64 + 16];
	char ttyarg[96], wrapper[96];
	size_t n = 0, i;
	pid_t parent = getpid();
	ssize_t r;

	argv[n++] = opts->gdb ? opts->gdb : getenv("CRDBG_GDB") ? getenv("CRDBG_GDB") : "gdb";
	argv[n++] = "--interpreter=mi3";
	argv[n++] = "-nx";
	argv[n++] = "-q";
	argv[n++] = "-iex";
	argv[n++] = "set debuginfod enabled off";
	if (d->tty[0]) {
		snprintf(ttyarg, sizeof(ttyarg), "--tty=%s", d->tty);
		argv[n++] = ttyarg;
	}
	if (d->fifo) {
		/* gdb runs "exec WRAPPER PROGRAM ARGS" in a shell: env is the one extra exec. */
		snprintf(wrapper, sizeof(wrapper), "set exec-wrapper 0<%s env", d->tty_in);
		argv[n++] = "-iex";
		argv[n++] = wrapper;
	}
	if (opts->program) {
		argv[n++] = "--args";
		argv[n++] = opts->program;
		for (i = 0; opts->args && opts->args[i]; i++) {
			if (n >= ARRAY_SIZE(argv) - 1)
				return -E2BIG;
			argv[n++] = opts->args[i];
		}
	}
	argv[n] = NULL;

	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || pipe2(perr, O_CLOEXEC) ||
	    pipe2(pst, O_CLOEXEC)) {
		err = -errno;
		goto out;
	}
	d->gdb_pid = fork();
	if (d->gdb_pid < 0) {
		err = -errno;
		goto out;
	}
	if (d->gdb_pid == 0) {
		if (getppid() != parent)
			_exit(127);
		child_exec(argv, opts->own_netns, pin[0], pout[1], perr[1], pst[1]);
	}
	close_fd(&pst[1]);
	/* The status pipe closes on exec; bytes in it mean exec failed. */
	do {
		r = read(pst[0], &e, sizeof(e));
	} while (r < 0 && errno == EINTR);
	if (r == sizeof(e)) {
		waitpid(d->gdb_pid, NULL, 0);
		d->gdb_pid = 0;
		err = -e;
		set_error(d, "cannot run %s%s: %s", argv[0],
			  opts->own_netns ? " in a network namespace of its own" : "", strerror(e));
		goto out;
	}
	d->gdb_pidfd = sys_pidfd_open(d->gdb_pid);
	d->in_fd = pin[1];
	d->out_fd = pout[0];
	d->err_fd = perr[0];
	pin[1] = pout[0] = perr[0] = -1;
	err = set_nonblock(d->in_fd);
	if (!err)
		err = set_nonblock(d->out_fd);
	if (!err)
		err = set_nonblock(d->err_fd);
out:
	close_fd(&pin[0]);
	close_fd(&pin[1]);
	close_fd(&pout[0]);
	close_fd(&pout[1]);
	close_fd(&perr[0]);
	close_fd(&perr[1]);
	close_fd(&pst[0]);
	close_fd(&pst[1]);
	return err;
}

int mi_driver_start(const struct mi_driver_opts *opts, struct mi_driver **ret_d)
{
	static const struct mi_driver_opts none;
	struct mi_driver *d;
	int err;

	if (!opts)
		opts = &none;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->gdb_pidfd = d->in_fd = d->out_fd = d->err_fd = -1;
	d->pty_master = d->pty_slave = d->inferior_pidfd = d->fifo_in = -1;
	d->ev_tail = &d->ev_head;
	d->cmd_timeout_ms = opts->cmd_timeout_ms ? opts->cmd_timeout_ms : MI_DEFAULT_TIMEOUT_MS;
	d->parser = mi_parser_new();
	d->out = malloc(MI_MAX_OUTPUT);
	d->wbuf = malloc(MI_MAX_WBUF);
	if (!d->parser || !d->out || !d->wbuf) {
		err = -ENOMEM;
		goto fail;
	}
	if (opts->fifo) {
		err = open_fifo(d);
		if (err) {
			set_error(d, "cannot make a FIFO: %s", strerror(-err));
			goto fail;
		}
	} else if (!opts->no_pty) {
		err = open_pty(d);
		if (err) {
			set_error(d, "cannot open a pty: %s", strerror(-err));
			goto fail;
		}
	}
	err = spawn_gdb(d, opts);
	if (err)
		goto fail;
	/* Async execution so -exec-interrupt works while the program runs. */
	err = mi_driver_cmd(d, NULL, "-gdb-set mi-async on");
	if (!err)
		err = mi_driver_cmd(d, NULL, "-gdb-set confirm off");
	if (!err)
		err = mi_driver_cmd(d, NULL, "-gdb-set pagination off");
	if (err)
		goto fail;
	*ret_d = d;
	return 0;
fail:
	mi_driver_free(d);
	return err;
}

void mi_driver_free(struct mi_driver *d)
{
	struct mi_record *rec;

	if (!d)
		return;
	if (d->gdb_pid > 0 && !d->dead) {
		/* gdb kills what it started and detaches from what it attached. */
		int64_t deadline = deadline_of(MI_EXIT_WAIT_MS);

		d->wait_token = 0;
		if (d->wlen + 10 <= MI_MAX_WBUF) {
			memcpy(d->wbuf + d->wlen, "-gdb-exit\n", 10);
			d->wlen += 10;
		}
		while (!d->dead && remaining(deadline) > 0)
			pump(d, remaining(deadline), NULL);
		if (!d->dead) {
			kill_gdb(d);
			reap_gdb(d, -1);
		}
	}
	if (d->gdb_pid > 0 && !d->reaped) {
		kill_gdb(d);
		waitpid(d->gdb_pid, &d->status, 0);
	}
	/* gdb died under a program it started: do not leave it orphaned. */
	if (d->owns_inferior && d->inferior_pidfd >= 0)
		sys_pidfd_send_signal(d->inferior_pidfd, SIGKILL);
	forget_inferior(d);
	close_fd(&d->gdb_pidfd);
	close_fd(&d->in_fd);
	close_fd(&d->out_fd);
	close_fd(&d->err_fd);
	close_fd(&d->pty_slave);
	close_fd(&d->pty_master);
	close_fd(&d->fifo_in);
	if (d->fifo) {
		unlink(d->tty);
		unlink(d->tty_in);
	}
	mi_record_free(d->result);
	for (size_t i = 0; i < d->npend; i++)
		mi_record_free(d->pend[i].rec);
	while ((rec = pop_event(d)))
		mi_record_free(rec);
	mi_parser_free(d->parser);
	free(d->console);
	free(d->out);
	free(d->wbuf);
	free(d);
}

bool mi_driver_alive(const struct mi_driver *d)
{
	return !d->dead;
}

pid_t mi_driver_gdb_pid(const struct mi_driver *d)
{
	return d->gdb_pid;
}

pid_t mi_driver_inferior_pid(const struct mi_driver *d)
{
	return d->inferior_pid;
}

const char *mi_driver_error(const struct mi_driver *d)
{
	return d->errmsg;
}

const char *mi_driver_tty(const struct mi_driver *d)
{
	return d->tty;
}

/* ------------------------------------------------------------------ */
/* Commands and events */

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
		set_error(d, "command too long");
		return -EINVAL;
	}
	if (n + k + 1 >= room)
		return -ENOBUFS;	/* fits once earlier commands are written */
	if (memchr(p + n, '\n', k)) {
		set_error(d, "command has a newline");
		return -EINVAL;
	}
	n += k;
	p[n++] = '\n';
	d->wlen += n;
	d->next_token = token;
	*ret_token = token;
	write_gdb(d);
	return 0;
}

int mi_driver_vcmd(struct mi_driver *d, struct mi_record **ret_rec, const char *fmt, va_list ap)
{
	int64_t deadline = deadline_of(d->cmd_timeout_ms);
	struct mi_record *rec;
	uint64_t token;
	int err;

	for (;;) {
		va_list aq;

		if (d->dead) {
			if (!d->errmsg[0])
				set_error(d, "gdb is gone");
			return -EPIPE;
		}
		va_copy(aq, ap);
		err = queue_command(d, fmt, aq, &token);
		va_end(aq);
		if (err != -ENOBUFS)
			break;
		/* Earlier commands still fill the buffer: let gdb take them. */
		if (!remaining(deadline)) {
			set_error(d, "gdb does not read its input");
			return -ETIMEDOUT;
		}
		err = pump(d, remaining(deadline), NULL);
		if (err)
			return err;
	}
	if (err)
		return err;
	d->wait_token = token;
	mi_record_free(d->result);
	d->result = NULL;

	while (!d->result && !d->dead) {
		int left = remaining(deadline);

		if (!left)
			break;
		err = pump(d, left, NULL);
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
		set_error(d, "no answer from gdb within %d ms", d->cmd_timeout_ms);
		return -ETIMEDOUT;
	}
	if (rec->rclass == MI_RC_ERROR) {
		const char *msg = mi_get_str(rec->results, "msg");

		set_error(d, "%s", msg ? msg : "error");
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

int mi_driver_next_event(struct mi_driver *d, int timeout_ms, struct mi_record **ret_rec)
{
	int64_t deadline = deadline_of(timeout_ms);

	for (;;) {
		struct mi_record *rec = pop_event(d);
		int err;

		if (rec) {
			*ret_rec = rec;
			return 1;
		}
		if (d->dead)
			return -EPIPE;
		if (timeout_ms >= 0 && !remaining(deadline))
			return 0;
		err = pump(d, remaining(deadline), NULL);
		if (err)
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
	int64_t deadline = deadline_of(timeout_ms);

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
			read_pty(d);	/* what the program wrote before the end */
			if (d->out_len > d->out_start)
				continue;
			return -EPIPE;
		}
		if (timeout_ms >= 0 && !remaining(deadline))
			return 0;
		err = pump(d, remaining(deadline), NULL);
		if (err)
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
		err = pump(d, d->cmd_timeout_ms, &pfd);
		if (err)
			return err;
		if (!pfd.revents)
			return -ETIMEDOUT;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Typed API */

static void frame_from(const struct mi_value *f, struct mi_frame *ret)
{
	long long v;

	memset(ret, 0, sizeof(*ret));
	ret->func = mi_get_str(f, "func");
	if (!ret->func)
		ret->func = "??";
	ret->file = mi_get_str(f, "file");
	ret->fullname = mi_get_str(f, "fullname");
	if (!mi_get_int(f, "line", &v) && v > 0 && v < INT32_MAX)
		ret->line = v;
	if (!mi_get_int(f, "level", &v) && v >= 0 && v < INT32_MAX)
		ret->level = v;
	mi_get_u64(f, "addr", &ret->addr);
}

static int get_small_int(const struct mi_value *v, const char *path)
{
	long long x;

	if (mi_get_int(v, path, &x) || x < INT32_MIN || x > INT32_MAX)
		return 0;
	return x;
}

int mi_stop_from_record(struct mi_record *rec, struct mi_stop *ret)
{
	const struct mi_value *r = rec->results;
	const char *reason;

	memset(ret, 0, sizeof(*ret));
	ret->rec = rec;
	reason = mi_get_str(r, "reason");
	ret->reason = reason ? reason : "";
	frame_from(mi_get(r, "frame"), &ret->frame);
	ret->thread_id = get_small_int(r, "thread-id");
	ret->bkptno = get_small_int(r, "bkptno");
	ret->signal = mi_get_str(r, "signal-name");
	if (!strncmp(ret->reason, "exited", 6)) {
		ret->exited = true;
		if (!strcmp(ret->reason, "exited-signalled"))
			ret->exit_code = -1;
		else
			ret->exit_code = get_small_int(r, "exit-code");
	}
	return 0;
}

void mi_stop_release(struct mi_stop *stop)
{
	if (!stop)
		return;
	mi_record_free(stop->rec);
	stop->rec = NULL;
}

int mi_wait_stop(struct mi_driver *d, int timeout_ms, struct mi_stop *ret_stop)
{
	int64_t deadline = deadline_of(timeout_ms);

	for (;;) {
		struct mi_record *rec;
		int r = mi_driver_next_event(d, remaining(deadline), &rec);

		if (r <= 0)
			return r;
		if (rec->kind == MI_REC_EXEC && !strcmp(rec->klass, "stopped"))
			return mi_stop_from_record(rec, ret_stop) ?: 1;
		mi_record_free(rec);
	}
}

/* Run an MI command whose single argument is quoted as a c-string. */
static int cmd_quoted(struct mi_driver *d, struct mi_record **ret, const char *cmd,
		      const char *arg)
{
	size_t n = mi_quote(NULL, 0, arg);
	char *q;
	int err;

	if (n >= MI_MAX_CMD)
		return -EINVAL;
	q = malloc(n + 1);
	if (!q)
		return -ENOMEM;
	mi_quote(q, n + 1, arg);
	err = mi_driver_cmd(d, ret, "%s %s", cmd, q);
	free(q);
	return err;
}

int mi_break(struct mi_driver *d, const char *location, struct mi_breakpoint *ret_bp)
{
	struct mi_record *rec;
	const struct mi_value *bp, *locs;
	long long v;
	int err;

	err = cmd_quoted(d, &rec, "-break-insert", location);
	if (err)
		return err;
	bp = mi_get(rec->results, "bkpt");
	if (!bp || mi_get_int(bp, "number", &v) || v <= 0 || v > INT32_MAX) {
		mi_record_free(rec);
		set_error(d, "-break-insert: no breakpoint number in the answer");
		return -EBADMSG;
	}
	if (!ret_bp) {
		mi_record_free(rec);
		return 0;
	}
	memset(ret_bp, 0, sizeof(*ret_bp));
	ret_bp->rec = rec;
	ret_bp->number = v;
	ret_bp->func = mi_get_str(bp, "func");
	ret_bp->file = mi_get_str(bp, "file");
	ret_bp->line = get_small_int(bp, "line");
	mi_get_u64(bp, "addr", &ret_bp->addr);
	ret_bp->nlocations = 1;
	locs = mi_get(bp, "locations");
	if (locs && locs->kind == MI_LIST && locs->count) {
		/* addr="<MULTIPLE>": show the first location with a source line */
		ret_bp->nlocations = locs->count;
		for (const struct mi_value *l = locs->child; l && !ret_bp->file; l = l->next) {
			ret_bp->file = mi_get_str(l, "file");
			ret_bp->line = get_small_int(l, "line");
			ret_bp->func = mi_get_str(l, "func");
		}
	}
	return 0;
}

void mi_breakpoint_release(struct mi_breakpoint *bp)
{
	if (!bp)
		return;
	mi_record_free(bp->rec);
	bp->rec = NULL;
}

int mi_delete(struct mi_driver *d, int number)
{
	return mi_driver_cmd(d, NULL, "-break-delete %d", number);
}

int mi_run(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-run");
}

int mi_attach(struct mi_driver *d, pid_t pid)
{
	struct mi_stop stop;
	int err;

	d->attaching = true;
	err = mi_driver_cmd(d, NULL, "-target-attach %d", (int)pid);
	d->attaching = false;
	if (err)
		return err;
	d->owns_inferior = false;
	err = mi_wait_stop(d, d->cmd_timeout_ms, &stop);
	if (err == 0)
		return -ETIMEDOUT;
	if (err < 0)
		return err;
	mi_stop_release(&stop);
	return 0;
}

int mi_continue(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-continue");
}

int mi_interrupt(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-interrupt");
}

int mi_step(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-step");
}

int mi_next(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-next");
}

int mi_finish(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-exec-finish");
}

int mi_print(struct mi_driver *d, const char *expr, char **ret_value)
{
	struct mi_record *rec;
	const char *val;
	char *copy;
	int err;

	err = cmd_quoted(d, &rec, "-data-evaluate-expression", expr);
	if (err)
		return err;
	val = mi_get_str(rec->results, "value");
	copy = val ? strdup(val) : NULL;
	mi_record_free(rec);
	if (!val) {
		set_error(d, "-data-evaluate-expression: no value in the answer");
		return -EBADMSG;
	}
	if (!copy)
		return -ENOMEM;
	*ret_value = copy;
	return 0;
}

int mi_set_var(struct mi_driver *d, const char *var, const char *value)
{
	if (strchr(var, '\n') || strchr(value, '\n'))
		return -EINVAL;
	return mi_driver_cmd(d, NULL, "-gdb-set var %s=%s", var, value);
}

/*
 * Send cmd and find the list named key in its answer; allocate an array of
 * one elem_size element per list entry. On success the caller owns
 * *ret_rec and *ret_array.
 */
static int cmd_list(struct mi_driver *d, const char *cmd, const char *key, size_t elem_size,
		    struct mi_record **ret_rec, const struct mi_value **ret_list,
		    void **ret_array)
{
	const struct mi_value *list;
	struct mi_record *rec;
	void *array;
	int err;

	err = mi_driver_cmd(d, &rec, "%s", cmd);
	if (err)
		return err;
	list = mi_get(rec->results, key);
	if (!list || list->kind != MI_LIST) {
		mi_record_free(rec);
		set_error(d, "%s: no %s in the answer", cmd, key);
		return -EBADMSG;
	}
	array = calloc(list->count ? list->count : 1, elem_size);
	if (!array) {
		mi_record_free(rec);
		return -ENOMEM;
	}
	*ret_rec = rec;
	*ret_list = list;
	*ret_array = array;
	return 0;
}

int mi_backtrace(struct mi_driver *d, int max_depth, struct mi_frames *ret)
{
	const struct mi_value *stack, *f;
	struct mi_record *rec;
	struct mi_frame *frames;
	char cmd[64];
	size_t n = 0;
	int err;

	if (max_depth > 0)
		snprintf(cmd, sizeof(cmd), "-stack-list-frames 0 %d", max_depth - 1);
	else
		snprintf(cmd, sizeof(cmd), "-stack-list-frames");
	err = cmd_list(d, cmd, "stack", sizeof(*frames), &rec, &stack, (void **)&frames);
	if (err)
		return err;
	for (f = stack->child; f; f = f->next)
		frame_from(f, &frames[n++]);
	ret->n = n;
	ret->frames = frames;
	ret->rec = rec;
	return 0;
}

void mi_frames_release(struct mi_frames *f)
{
	if (!f)
		return;
	free(f->frames);
	mi_record_free(f->rec);
	*f = (struct mi_frames){ 0 };
}

int mi_thread_info(struct mi_driver *d, struct mi_threads *ret)
{
	const struct mi_value *list, *t;
	struct mi_thread *threads;
	struct mi_record *rec;
	size_t n = 0;
	int err;

	err = cmd_list(d, "-thread-info", "threads", sizeof(*threads), &rec, &list,
		       (void **)&threads);
	if (err)
		return err;
	for (t = list->child; t; t = t->next) {
		struct mi_thread *th = &threads[n++];

		th->id = get_small_int(t, "id");
		th->target_id = mi_get_str(t, "target-id");
		th->state = mi_get_str(t, "state");
		frame_from(mi_get(t, "frame"), &th->frame);
	}
	ret->n = n;
	ret->threads = threads;
	ret->current = get_small_int(rec->results, "current-thread-id");
	ret->rec = rec;
	return 0;
}

void mi_threads_release(struct mi_threads *t)
{
	if (!t)
		return;
	free(t->threads);
	mi_record_free(t->rec);
	*t = (struct mi_threads){ 0 };
}

int mi_select_thread(struct mi_driver *d, int id)
{
	return mi_driver_cmd(d, NULL, "-thread-select %d", id);
}

int mi_select_frame(struct mi_driver *d, int level)
{
	return mi_driver_cmd(d, NULL, "-stack-select-frame %d", level);
}

int mi_detach(struct mi_driver *d)
{
	int err = mi_driver_cmd(d, NULL, "-target-detach");

	if (!err)
		forget_inferior(d);
	return err;
}

int mi_kill(struct mi_driver *d)
{
	return mi_driver_cmd(d, NULL, "-interpreter-exec console kill");
}
