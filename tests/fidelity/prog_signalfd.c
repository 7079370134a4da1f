// SPDX-License-Identifier: GPL-2.0
/*
 * signalfd: SIGUSR2 and SIGRTMIN+4 blocked and read through a signalfd
 * (a second signalfd for SIGHUP only, with nothing pending). Both are
 * pending before the checkpoint; after the word the first signalfd
 * gives them with their codes and values, the second nothing.
 */
#include <signal.h>
#include <sys/signalfd.h>

#include "fidelity.h"

int main(int argc, char **argv)
{
	struct signalfd_siginfo si;
	sigset_t m, hup;
	int fd, fh, rt = SIGRTMIN + 4;

	fid_init(argc, argv);
	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	sigaddset(&m, rt);
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	sigprocmask(SIG_BLOCK, &m, NULL);
	sigprocmask(SIG_BLOCK, &hup, NULL);
	fd = signalfd(-1, &m, SFD_NONBLOCK);
	fh = signalfd(-1, &hup, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0 || fh < 0)
		fid_die("signalfd: %s", strerror(errno));
	kill(getpid(), SIGUSR2);
	sigqueue(getpid(), rt, (union sigval){ .sival_int = 99 });
	fid_ready_wait();

	memset(&si, 0, sizeof(si));
	FID_CHECK(read(fd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo == SIGUSR2 &&
		  si.ssi_code == SI_USER && si.ssi_pid == (uint32_t)getpid(),
		  "SIGUSR2 through the signalfd: signo %u code %d", si.ssi_signo, si.ssi_code);
	memset(&si, 0, sizeof(si));
	FID_CHECK(read(fd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo == (uint32_t)rt &&
		  si.ssi_code == SI_QUEUE && si.ssi_int == 99,
		  "SIGRTMIN+4 through the signalfd: signo %u value %d", si.ssi_signo, si.ssi_int);
	FID_CHECK(read(fd, &si, sizeof(si)) < 0 && errno == EAGAIN, "an extra signal");
	FID_CHECK(read(fh, &si, sizeof(si)) < 0 && errno == EAGAIN, "SIGHUP signalfd not empty");
	/* The SIGHUP signalfd still watches SIGHUP, not the others. */
	kill(getpid(), SIGHUP);
	memset(&si, 0, sizeof(si));
	FID_CHECK(read(fh, &si, sizeof(si)) == sizeof(si) && si.ssi_signo == SIGHUP,
		  "SIGHUP signalfd lost its mask");
	FID_CHECK(fcntl(fh, F_GETFD) & FD_CLOEXEC, "close-on-exec lost");
	fid_finish();
}
