// SPDX-License-Identifier: GPL-2.0
/*
 * crdbgd [--foreground] [--socket PATH]: the node's root service
 * (Documentation/security.md). Socket-activated by systemd (the
 * LISTEN_FDS/LISTEN_PID protocol, checked here), or with --foreground it
 * binds its socket itself (CRDBGD_SOCKET, mode 0666 in a 0755
 * directory: anyone may connect, every request is authorized on its
 * own). Each connection is served in a process of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <crdbg/crdbgd.h>

#include "seal-key.h"
#include "serve.h"

#define SD_LISTEN_FDS_START 3
/* What root's code may find in its environment: nothing of its caller's. */
#define CRDBGD_PATH "/usr/sbin:/usr/bin:/sbin:/bin"

static void usage(FILE *f)
{
	fprintf(f, "usage: crdbgd [--foreground] [--socket PATH]\n");
}

/* The socket systemd passed (exactly one, for us), or -1. */
static int activated_socket(const char *fds, const char *pid)
{
	char *end;
	long n, p;

	if (!fds || !pid)
		return -1;
	p = strtol(pid, &end, 10);
	if (*end || p != getpid())
		return -1;
	n = strtol(fds, &end, 10);
	if (*end || n != 1)
		return -1;
	fcntl(SD_LISTEN_FDS_START, F_SETFD, FD_CLOEXEC);
	return SD_LISTEN_FDS_START;
}

static int bind_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)], *slash;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "crdbgd: socket path %s is too long\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			fprintf(stderr, "crdbgd: cannot create %s: %s\n", dir, strerror(errno));
			return -1;
		}
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0666) ||
	    listen(fd, 64)) {
		fprintf(stderr, "crdbgd: cannot listen on %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void on_child(int sig)
{
	(void)sig;	/* accept4() ends with EINTR: the loop reaps */
}

/*
 * Every worker that ended. One that a signal ended left its caller
 * without an answer ("closed the connection without an answer"): the
 * log says which, for the node's admin.
 */
static void reap_workers(void)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		if (WIFSIGNALED(st))
			fprintf(stderr, "crdbgd: the worker of a request (pid %d) was ended by signal %d (%s): its caller got no answer\n",
				(int)pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
}

static int serve_forever(int lfd)
{
	struct sigaction sa = { .sa_handler = on_child, .sa_flags = SA_NOCLDSTOP };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), e = errno;
		pid_t pid;

		reap_workers();	/* its waitpid() sets errno: accept's is e */
		errno = e;
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			fprintf(stderr, "crdbgd: accept: %s\n", strerror(errno));
			return 1;
		}
		pid = fork();
		if (pid == 0) {
			struct sigaction dfl = { .sa_handler = SIG_DFL };

			sigaction(SIGCHLD, &dfl, NULL);	/* libcrs waits for its children */
			close(lfd);
			_exit(crdbgd_serve(c));
		}
		close(c);
	}
}

int main(int argc, char **argv)
{
	const char *sock = CRDBGD_SOCKET, *fds = getenv("LISTEN_FDS");
	const char *lpid = getenv("LISTEN_PID");
	char fds_v[16] = "", pid_v[16] = "";
	bool foreground = false;
	int lfd, k;

	snprintf(fds_v, sizeof(fds_v), "%s", fds ? fds : "");
	snprintf(pid_v, sizeof(pid_v), "%s", lpid ? lpid : "");
	/* nothing of whoever started us reaches code that runs as root */
	clearenv();
	setenv("PATH", CRDBGD_PATH, 1);
	umask(022);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--foreground")) {
			foreground = true;
		} else if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			sock = argv[++i];
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "crdbgd: unknown argument \"%s\"\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (geteuid() != 0) {
		fprintf(stderr, "crdbgd: must run as root: it checkpoints its callers' processes with CRIU\n");
		return 1;
	}
	k = crs_seal_key_load();
	if (k <= 0) {
		fprintf(stderr, "crdbgd: no usable seal key %s (%s): make install or the package creates it\n",
			CRS_SEAL_KEY_PATH, k ? strerror(-k) : "missing");
		return 1;
	}
	lfd = foreground ? -1 : activated_socket(fds_v[0] ? fds_v : NULL, pid_v[0] ? pid_v : NULL);
	if (lfd < 0 && !foreground) {
		fprintf(stderr, "crdbgd: no socket from systemd; run with --foreground to bind %s\n",
			sock);
		return 1;
	}
	if (lfd < 0)
		lfd = bind_socket(sock);
	if (lfd < 0)
		return 1;
	return serve_forever(lfd);
}
