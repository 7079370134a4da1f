// SPDX-License-Identifier: GPL-2.0
/*
 * Stopped children: two stopped by SIGSTOP (STOP_SIG: prog_tstp.c builds
 * this with SIGTSTP), each in its own process group, one running. After
 * the word the first two are still stopped (state T) and stay so, the
 * third is not; told to exit and continued, all three exit. (That a
 * running process gets no SIGCONT is prog_sigcont.c's check.)
 */
#include <signal.h>
#include <sys/wait.h>

#include "fidelity.h"

#ifndef STOP_SIG
#define STOP_SIG SIGSTOP
#endif

/* A child waits until SIGUSR1 tells it to exit. */
static volatile sig_atomic_t done;
static void on_usr1(int sig)
{
	done = 1;
}

static pid_t child(void)
{
	pid_t pid = fork();
	sigset_t none;

	if (pid) {
		setpgid(pid, pid);
		return pid;
	}
	/* Its own group: SIGTSTP does not stop a member of an orphaned one. */
	setpgid(0, 0);
	sigemptyset(&none);
	while (!done)
		sigsuspend(&none);
	_exit(0);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pid_t kid[3];
	int st, i;

	sigset_t usr1;

	fid_init(argc, argv);
	/* Blocked except in the children's sigsuspend(): no lost wake-up. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	for (i = 0; i < 3; i++)
		kid[i] = child();
	kill(kid[0], STOP_SIG);
	kill(kid[1], STOP_SIG);
	for (i = 0; i < 2; i++)
		if (waitpid(kid[i], &st, WUNTRACED) != kid[i] || !WIFSTOPPED(st))
			fid_die("child %d did not stop", kid[i]);
	fid_ready_wait();
	for (i = 0; i < 5; i++) {
		FID_CHECK(fid_proc_state(kid[0]) == 'T', "first stopped child in state %c", fid_proc_state(kid[0]));
		FID_CHECK(fid_proc_state(kid[1]) == 'T', "second stopped child in state %c", fid_proc_state(kid[1]));
		/* in sigsuspend, or still on its way back there from the CRS hook */
		FID_CHECK(fid_proc_state(kid[2]) == 'S' || fid_proc_state(kid[2]) == 'R',
			  "running child in state %c", fid_proc_state(kid[2]));
		if (fid_why[0])
			break;
		fid_nap_ms(100);
	}
	for (i = 0; i < 3; i++)
		kill(kid[i], SIGUSR1);
	kill(kid[0], SIGCONT);
	kill(kid[1], SIGCONT);
	for (i = 0; i < 3; i++)
		FID_CHECK(waitpid(kid[i], &st, 0) == kid[i] && WIFEXITED(st) && !WEXITSTATUS(st),
			  "child %d: no normal exit once continued", i);
	fid_finish();
}
