// SPDX-License-Identifier: GPL-2.0
/*
 * Starting gdb and ending it: its pipes, the program's terminal (a pty,
 * or FIFOs a checkpointer can take), an optional network namespace of its
 * own, a pidfd so that a reused pid is never signalled, and the reaping.
 * Which of these a caller wants is its choice (struct mi_driver_opts).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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
#include <unistd.h>

#include "mi-driver.h"

int mi_drv_pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

static int sys_pidfd_send_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* Signal gdb through its pidfd when there is one: its pid may be reused. */
void mi_drv_kill_gdb(struct mi_driver *d)
{
	if (d->reaped)
		return;
	if (d->gdb_pidfd >= 0)
		sys_pidfd_send_signal(d->gdb_pidfd, SIGKILL);
	else
		kill(d->gdb_pid, SIGKILL);
}

void mi_drv_forget_inferior(struct mi_driver *d)
{
	mi_drv_close_fd(&d->inferior_pidfd);
	d->inferior_pid = 0;
	d->owns_inferior = false;
}

/* Wait at most timeout_ms for gdb to exit, then reap it. */
bool mi_drv_reap_gdb(struct mi_driver *d, int timeout_ms)
{
	struct pollfd pfd = { .fd = d->gdb_pidfd, .events = POLLIN };

	if (d->reaped)
		return true;
	if (d->gdb_pidfd >= 0 && timeout_ms) {
		int64_t deadline = mi_drv_deadline(timeout_ms);

		while (poll(&pfd, 1, mi_drv_remaining(deadline)) < 0 && errno == EINTR)
			;
	}
	if (waitpid(d->gdb_pid, &d->status, WNOHANG) == d->gdb_pid) {
		d->reaped = true;
		return true;
	}
	return false;
}


static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* The inode of our PID namespace: a pid in a FIFO's name means something only in it. */
static unsigned long pid_ns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) ? 0 : (unsigned long)st.st_ino;
}

/*
 * Remove our FIFOs of drivers killed before mi_driver_free (their pid,
 * in our PID namespace, no longer runs), so that crashed sessions do not
 * fill /tmp. A node of a cluster may share /tmp under another namespace:
 * its names carry another namespace and are left alone.
 */
static void sweep_dead_fifos(unsigned long ns)
{
	DIR *dir = opendir("/tmp");
	struct dirent *e;
	unsigned long n;
	struct stat st;
	int pid, end;

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		end = 0;
		if (sscanf(e->d_name, "crdbg-io-%lu-%d-%n", &n, &pid, &end) != 2 || !end ||
		    n != ns || pid <= 0 || !kill(pid, 0) || errno != ESRCH)
			continue;
		if (!fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISFIFO(st.st_mode) && st.st_uid == geteuid())
			unlinkat(dirfd(dir), e->d_name, 0);
	}
	closedir(dir);
}

/* The inferior's stdio on FIFOs in /tmp (they stay until mi_driver_free). */
static int open_fifo(struct mi_driver *d)
{
	unsigned long ns = pid_ns();

	sweep_dead_fifos(ns);
	snprintf(d->tty, sizeof(d->tty), "/tmp/crdbg-io-%lu-%d-%p", ns, (int)getpid(), (void *)d);
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
	const char *argv[64 + 16], *cache;
	char ttyarg[104], wrapper[128], cachearg[300];
	size_t n = 0, i;
	pid_t parent = getpid();
	ssize_t r;

	argv[n++] = opts->gdb ? opts->gdb : getenv("CRDBG_GDB") ? getenv("CRDBG_GDB") : "gdb";
	argv[n++] = "--interpreter=mi3";
	argv[n++] = "-nx";
	argv[n++] = "-q";
	argv[n++] = "-iex";
	argv[n++] = "set debuginfod enabled off";
	cache = opts->index_cache ? mi_drv_index_cache_get() : NULL;
	if (cache) {
		d->index_cache = true;
		snprintf(cachearg, sizeof(cachearg), "set index-cache directory %s", cache);
		argv[n++] = "-iex";
		argv[n++] = cachearg;
		argv[n++] = "-iex";
		argv[n++] = "set index-cache enabled on";
	}
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
	mi_drv_close_fd(&pst[1]);
	/* The status pipe closes on exec; bytes in it mean exec failed. */
	do {
		r = read(pst[0], &e, sizeof(e));
	} while (r < 0 && errno == EINTR);
	if (r == sizeof(e)) {
		waitpid(d->gdb_pid, NULL, 0);
		d->gdb_pid = 0;
		err = -e;
		mi_drv_set_error(d, "cannot run %s%s: %s", argv[0],
			  opts->own_netns ? " in a network namespace of its own" : "", strerror(e));
		goto out;
	}
	d->gdb_pidfd = mi_drv_pidfd_open(d->gdb_pid);
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
	mi_drv_close_fd(&pin[0]);
	mi_drv_close_fd(&pin[1]);
	mi_drv_close_fd(&pout[0]);
	mi_drv_close_fd(&pout[1]);
	mi_drv_close_fd(&perr[0]);
	mi_drv_close_fd(&perr[1]);
	mi_drv_close_fd(&pst[0]);
	mi_drv_close_fd(&pst[1]);
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
			mi_drv_set_error(d, "cannot make a FIFO: %s", strerror(-err));
			goto fail;
		}
	} else if (!opts->no_pty) {
		err = open_pty(d);
		if (err) {
			mi_drv_set_error(d, "cannot open a pty: %s", strerror(-err));
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
		int64_t deadline = mi_drv_deadline(MI_EXIT_WAIT_MS);

		d->wait_token = 0;
		if (d->wlen + 10 <= MI_MAX_WBUF) {
			memcpy(d->wbuf + d->wlen, "-gdb-exit\n", 10);
			d->wlen += 10;
		}
		while (!d->dead && mi_drv_remaining(deadline) > 0)
			mi_drv_pump(d, mi_drv_remaining(deadline), NULL);
		if (!d->dead) {
			mi_drv_kill_gdb(d);
			mi_drv_reap_gdb(d, -1);
		}
	}
	if (d->gdb_pid > 0 && !d->reaped) {
		mi_drv_kill_gdb(d);
		waitpid(d->gdb_pid, &d->status, 0);
	}
	/* gdb died under a program it started: do not leave it orphaned. */
	if (d->owns_inferior && d->inferior_pidfd >= 0)
		sys_pidfd_send_signal(d->inferior_pidfd, SIGKILL);
	mi_drv_forget_inferior(d);
	if (d->index_cache)
		mi_drv_index_cache_put();
	mi_drv_close_fd(&d->gdb_pidfd);
	mi_drv_close_fd(&d->in_fd);
	mi_drv_close_fd(&d->out_fd);
	mi_drv_close_fd(&d->err_fd);
	mi_drv_close_fd(&d->pty_slave);
	mi_drv_close_fd(&d->pty_master);
	mi_drv_close_fd(&d->fifo_in);
	if (d->fifo) {
		unlink(d->tty);
		unlink(d->tty_in);
	}
	mi_record_free(d->result);
	for (size_t i = 0; i < d->npend; i++)
		mi_record_free(d->pend[i].rec);
	while ((rec = mi_drv_pop_event(d)))
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
