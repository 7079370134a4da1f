// SPDX-License-Identifier: GPL-2.0
/* A restored tree's terminal of its own, relayed to ours (tty-relay.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "error.h"
#include "fdio.h"
#include "tty-relay.h"

/* Our terminal's mode, given back if a signal ends us while it is raw. */
static int saved_fd = -1;
static struct termios saved_mode;

static void give_back_and_die(int sig)
{
	if (saved_fd >= 0)
		tcsetattr(saved_fd, TCSANOW, &saved_mode);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch_fatal(bool on)
{
	static const int sigs[] = { SIGTERM, SIGHUP, SIGQUIT };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on ? give_back_and_die : SIG_DFL);
}

/* Keys go to the tree's own terminal, which does its line editing and signals. */
static void make_raw(struct crs_tty_relay *t)
{
	struct termios raw;

	if (t->in < 0 || !isatty(t->in) || tcgetattr(t->in, &t->saved))
		return;
	raw = t->saved;
	cfmakeraw(&raw);
	/* crdbg's own messages still start their lines at the left */
	raw.c_oflag |= OPOST | ONLCR;
	saved_mode = t->saved;
	saved_fd = t->in;
	catch_fatal(true);
	/* TCSADRAIN: what was typed ahead still goes to the tree */
	if (!tcsetattr(t->in, TCSADRAIN, &raw))
		t->raw = true;
}

/* The restored tree holds the pty as its controlling terminal. */
static bool tree_there(int master)
{
	pid_t pgrp;

	return !ioctl(master, TIOCGPGRP, &pgrp) && pgrp > 0;
}

/*
 * Until the master reports EIO (no process holds the slave any more):
 * what the tree writes goes to out, what comes from in goes to the tree.
 * Our terminal stays as it is (^C ends crdbg while it waits for the
 * restore, a join or the barrier) until the tree is there: it took the
 * pty as its controlling terminal, or wrote to it.
 */
static void *relay(void *arg)
{
	struct crs_tty_relay *t = arg;
	int in = t->in, out = t->out;
	bool live = false;
	char buf[4096];

	for (;;) {
		struct pollfd p[2] = { { .fd = t->master, .events = POLLIN },
				       { .fd = live ? in : -1, .events = POLLIN } };
		ssize_t n;

		if (!live && tree_there(t->master)) {
			make_raw(t);
			live = true;
			continue;
		}
		if (poll(p, 2, live ? -1 : 500) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents) {
			n = read(t->master, buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0)
				break;	/* EIO: the last holder of the slave closed it */
			if (out >= 0 && crs_write_all(out, buf, (size_t)n))
				out = -1;	/* our terminal is gone: keep draining */
			if (!live)
				make_raw(t);
			live = true;
		}
		if (p[1].revents) {
			n = read(in, buf, sizeof(buf));
			if (n <= 0 && !(n < 0 && errno == EINTR))
				in = -1;	/* poll ignores it from now on */
			else if (n > 0)
				crs_write_all(t->master, buf, (size_t)n);
		}
	}
	return NULL;
}

int crs_tty_relay_open(struct crs_tty_relay *t, int in, int out, char *err, size_t errlen)
{
	struct winsize ws;
	const char *name;
	int r;

	*t = (struct crs_tty_relay)CRS_TTY_RELAY_INIT;
	t->in = in;
	t->out = out;
	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->master < 0 || grantpt(t->master) || unlockpt(t->master) ||
	    !(name = ptsname(t->master))) {
		r = -errno;
		crs_tty_relay_finish(t);
		return crs_fail(err, errlen, r, "cannot make a terminal for the restored processes: %s",
				strerror(-r));
	}
	t->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->slave < 0) {
		r = -errno;
		crs_tty_relay_finish(t);
		return crs_fail(err, errlen, r, "cannot open %s: %s", name, strerror(-r));
	}
	if (!ioctl(in >= 0 ? in : out, TIOCGWINSZ, &ws) || (out >= 0 && !ioctl(out, TIOCGWINSZ, &ws)))
		ioctl(t->master, TIOCSWINSZ, &ws);
	r = pthread_create(&t->thread, NULL, relay, t);
	if (r) {
		crs_tty_relay_finish(t);
		return crs_fail(err, errlen, -r, "cannot start the terminal relay: %s", strerror(r));
	}
	t->running = true;
	return 0;
}

int crs_tty_relay_name(const struct crs_tty_relay *t, char *buf, size_t len)
{
	return t->master < 0 ? -EBADF : -ptsname_r(t->master, buf, len);
}

void crs_tty_relay_drop_slave(struct crs_tty_relay *t)
{
	if (t->slave >= 0)
		close(t->slave);
	t->slave = -1;
}

void crs_tty_relay_finish(struct crs_tty_relay *t)
{
	crs_tty_relay_drop_slave(t);
	if (t->running)
		pthread_join(t->thread, NULL);
	t->running = false;
	if (t->raw) {
		tcsetattr(t->in, TCSAFLUSH, &t->saved);
		catch_fatal(false);
		saved_fd = -1;
	}
	t->raw = false;
	if (t->master >= 0)
		close(t->master);
	t->master = -1;
}
