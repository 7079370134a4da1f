// SPDX-License-Identifier: GPL-2.0
/*
 * I/O forwarding: the handler API of Documentation/sdm.md on the shared engine, and a pty
 * implementation for backends that run a program (or a debugger with
 * -tty). See iof.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>

#include "sdm/iof.h"
#include "transport.h"

#define IOF_MAX		8
#define IOF_CHUNK	4096

struct iof_entry {
	int fd_in, fd_out;
	sdm_iof_handler h;
};

static struct {
	struct sdm_transport *engine;
	sdm_iof_sink sink;
	void *arg;
	struct iof_entry e[IOF_MAX];
	int stdin_wfd;		/* write end of the stdin pipe, -1 if none */
} iof = { .stdin_wfd = -1 };

int sdm_iof_init(struct sdm_transport *engine, sdm_iof_sink sink, void *arg)
{
	iof.engine = engine;
	iof.sink = sink;
	iof.arg = arg;
	iof.stdin_wfd = -1;
	for (int i = 0; i < IOF_MAX; i++)
		iof.e[i].fd_in = -1;
	return 0;
}

static void entry_remove(struct iof_entry *e)
{
	int fd = e->fd_in;

	sdm_transport_unwatch_fd(iof.engine, fd);
	close(fd);
	e->fd_in = -1;
	e->h = NULL;
	/* A handler writing into the descriptor just closed goes too. */
	for (int i = 0; i < IOF_MAX; i++) {
		if (iof.e[i].fd_in >= 0 && iof.e[i].fd_out == fd) {
			if (iof.e[i].h == sdm_iof_copy_stdin &&
			    iof.stdin_wfd >= 0) {
				close(iof.stdin_wfd);
				iof.stdin_wfd = -1;
			}
			entry_remove(&iof.e[i]);
		}
	}
}

void sdm_iof_finalize(void)
{
	for (int i = 0; i < IOF_MAX; i++)
		if (iof.e[i].fd_in >= 0)
			entry_remove(&iof.e[i]);
	if (iof.stdin_wfd >= 0)
		close(iof.stdin_wfd);
	iof.stdin_wfd = -1;
}

static void iof_ready(void *arg, int fd, uint32_t events)
{
	struct iof_entry *e = arg;
	int rc;

	(void)events;
	if (e->fd_in != fd || !e->h)
		return;
	rc = e->h(e->fd_in, e->fd_out);
	if (rc == 0 || (rc < 0 && rc != -EAGAIN && rc != -EINTR))
		entry_remove(e);
}

static int set_handler(int fd_in, int fd_out, sdm_iof_handler h,
		       sdm_iof_handler dflt)
{
	struct iof_entry *e = NULL;
	int rc;

	if (!iof.engine || fd_in < 0)
		return -EINVAL;
	for (int i = 0; i < IOF_MAX && !e; i++)
		if (iof.e[i].fd_in < 0)
			e = &iof.e[i];
	if (!e)
		return -ENOSPC;
	fcntl(fd_in, F_SETFL, fcntl(fd_in, F_GETFL) | O_NONBLOCK);
	e->fd_in = fd_in;
	e->fd_out = fd_out;
	e->h = h ? h : dflt;
	rc = sdm_transport_watch_fd(iof.engine, fd_in, EPOLLIN, iof_ready, e);
	if (rc < 0) {
		e->fd_in = -1;
		e->h = NULL;
	}
	return rc;
}

int sdm_iof_set_stdin_handler(int fd_in, int fd_out, sdm_iof_handler h)
{
	return set_handler(fd_in, fd_out, h, sdm_iof_copy_stdin);
}

int sdm_iof_set_stdout_handler(int fd_in, int fd_out, sdm_iof_handler h)
{
	return set_handler(fd_in, fd_out, h, sdm_iof_copy_stdout);
}

int sdm_iof_set_stderr_handler(int fd_in, int fd_out, sdm_iof_handler h)
{
	return set_handler(fd_in, fd_out, h, sdm_iof_copy_stderr);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			/*
			 * EAGAIN: the program does not read its input. A
			 * daemon must never block on it: the rest is dropped.
			 */
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

static int copy(int stream, int fd_in, int fd_out)
{
	char buf[IOF_CHUNK];
	ssize_t n = read(fd_in, buf, sizeof(buf));
	int rc;

	if (n < 0)
		/* A pty master reads EIO once the last slave user is gone. */
		return errno == EIO ? 0 : -errno;
	if (n == 0)
		return 0;
	if (fd_out == SDM_IOF_UPSTREAM) {
		if (iof.sink)
			iof.sink(iof.arg, stream, buf, n);
		return n;
	}
	rc = write_all(fd_out, buf, n);
	return rc < 0 ? rc : n;
}

int sdm_iof_copy_stdin(int fd_in, int fd_out)
{
	return copy(SDM_IOF_STDIN, fd_in, fd_out);
}

int sdm_iof_copy_stdout(int fd_in, int fd_out)
{
	return copy(SDM_IOF_STDOUT, fd_in, fd_out);
}

int sdm_iof_copy_stderr(int fd_in, int fd_out)
{
	return copy(SDM_IOF_STDERR, fd_in, fd_out);
}

int sdm_iof_stdin_write(const void *buf, size_t len)
{
	if (iof.stdin_wfd < 0)
		return -ENOTCONN;
	return write_all(iof.stdin_wfd, buf, len);
}

int sdm_iof_pty_open(int *ret_master, char *ret_slave, size_t size)
{
	struct termios tio;
	int fd, slave;

	fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (grantpt(fd) < 0 || unlockpt(fd) < 0 ||
	    ptsname_r(fd, ret_slave, size) != 0)
		goto err;
	/* Raw: no echo, no CR/LF translation, bytes pass unchanged. */
	slave = open(ret_slave, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		goto err;
	if (tcgetattr(slave, &tio) == 0) {
		cfmakeraw(&tio);
		tcsetattr(slave, TCSANOW, &tio);
	}
	close(slave);
	*ret_master = fd;
	return 0;
err:
	close(fd);
	return -errno ? -errno : -EIO;
}

/*
 * A pty master reads EIO (and epoll says HUP) while no slave is open, which
 * the stdout handler takes for the end of the program. So the parent holds
 * a slave open until the child has opened its own, i.e. until exec closed
 * the child's end of a close-on-exec pipe (which also reports exec errors).
 */
pid_t sdm_iof_pty_spawn(char *const argv[])
{
	char slave[128];
	int master, keep, in[2], err[2], sync[2], rc, child_err = 0;
	pid_t pid;
	ssize_t n;

	rc = sdm_iof_pty_open(&master, slave, sizeof(slave));
	if (rc < 0)
		return rc;
	keep = open(slave, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (keep < 0)
		goto err_master;
	if (pipe2(in, O_CLOEXEC) < 0)
		goto err_keep;
	if (pipe2(err, O_CLOEXEC) < 0)
		goto err_in;
	if (pipe2(sync, O_CLOEXEC) < 0)
		goto err_err;
	pid = fork();
	if (pid < 0)
		goto err_sync;
	if (pid == 0) {
		int s;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		setsid();
		s = open(slave, O_RDWR);	/* our controlling terminal */
		if (s >= 0) {
			dup2(s, 0);
			dup2(s, 1);
			dup2(err[1], 2);
			execvp(argv[0], argv);
		}
		child_err = errno;
		if (write(sync[1], &child_err, sizeof(child_err)) < 0)
			_exit(126);
		_exit(127);
	}
	close(sync[1]);
	close(err[1]);
	do {
		n = read(sync[0], &child_err, sizeof(child_err));
	} while (n < 0 && errno == EINTR);
	close(sync[0]);
	close(keep);
	if (n > 0) {
		close(err[0]);
		close(in[0]);
		close(in[1]);
		close(master);
		return child_err ? -child_err : -ENOEXEC;
	}
	if (iof.stdin_wfd >= 0)
		close(iof.stdin_wfd);
	iof.stdin_wfd = in[1];
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	if (sdm_iof_set_stdout_handler(master, SDM_IOF_UPSTREAM, NULL) < 0 ||
	    sdm_iof_set_stderr_handler(err[0], SDM_IOF_UPSTREAM, NULL) < 0 ||
	    sdm_iof_set_stdin_handler(in[0], master, NULL) < 0)
		return -ENOSPC;
	return pid;

err_sync:
	close(sync[0]);
	close(sync[1]);
err_err:
	close(err[0]);
	close(err[1]);
err_in:
	close(in[0]);
	close(in[1]);
err_keep:
	close(keep);
err_master:
	rc = -errno;
	close(master);
	return rc ? rc : -EIO;
}
