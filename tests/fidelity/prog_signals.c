// SPDX-License-Identifier: GPL-2.0
/*
 * Pending and blocked signals, and the dispositions: a blocked SIGUSR1
 * (standard, so queued once), three queued SIGRTMIN+2 with their values,
 * a signal pending on one thread only, an ignored SIGPIPE, a handler with
 * SA_SIGINFO|SA_RESTART and its own mask. After the word all of it is
 * as it was, and the queued signals come out in order with their values.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>

#include "fidelity.h"

static void handler(int sig, siginfo_t *si, void *uc)
{
}

static volatile int go;
static pid_t thread_tid;
static int thread_ok = -1;

/* A thread with SIGUSR2 blocked and pending on it alone. */
static void *holder(void *arg)
{
	struct timespec zero = { 0, 0 };
	siginfo_t si;
	sigset_t m, pend;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &m, NULL);
	thread_tid = gettid();
	while (!go)
		fid_nap_ms(10);
	sigpending(&pend);
	thread_ok = sigismember(&pend, SIGUSR2) ? 1 : -2;
	if (thread_ok == 1 && sigtimedwait(&m, &si, &zero) != SIGUSR2)
		thread_ok = -3;
	else if (thread_ok == 1 && si.si_pid != getpid())
		thread_ok = -4;
	return NULL;
}

static void check_action(int sig, void *want_fn, int want_flags, int mask_sig)
{
	struct sigaction sa;

	sigaction(sig, NULL, &sa);
	FID_CHECK((void *)sa.sa_sigaction == want_fn, "signal %d: handler changed", sig);
	FID_CHECK((sa.sa_flags & want_flags) == want_flags, "signal %d: flags %#x", sig, sa.sa_flags);
	FID_CHECK(!mask_sig || sigismember(&sa.sa_mask, mask_sig), "signal %d: sa_mask lost", sig);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = handler, .sa_flags = SA_SIGINFO | SA_RESTART };
	struct timespec zero = { 0, 0 };
	sigset_t blk, pend, cur;
	pthread_t th;
	siginfo_t si;
	int i, rt = SIGRTMIN + 2;

	fid_init(argc, argv);
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(rt, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&blk);
	sigaddset(&blk, SIGUSR1);
	sigaddset(&blk, rt);
	sigaddset(&blk, SIGHUP);
	sigprocmask(SIG_BLOCK, &blk, NULL);
	if (pthread_create(&th, NULL, holder, NULL))
		fid_die("pthread_create");
	while (!thread_tid)
		fid_nap_ms(5);
	kill(getpid(), SIGUSR1);
	kill(getpid(), SIGUSR1);
	for (i = 0; i < 3; i++)
		sigqueue(getpid(), rt, (union sigval){ .sival_int = 100 + i });
	syscall(SYS_tgkill, getpid(), thread_tid, SIGUSR2);
	fid_ready_wait();

	sigprocmask(SIG_BLOCK, NULL, &cur);
	for (i = 1; i < SIGRTMAX; i++)
		FID_CHECK(sigismember(&cur, i) == sigismember(&blk, i),
			  "blocked mask: signal %d %s", i, sigismember(&cur, i) ? "blocked" : "unblocked");
	sigpending(&pend);
	FID_CHECK(sigismember(&pend, SIGUSR1) && sigismember(&pend, rt) && !sigismember(&pend, SIGHUP),
		  "pending set changed");
	check_action(SIGUSR1, handler, SA_SIGINFO | SA_RESTART, SIGTERM);
	check_action(rt, handler, SA_SIGINFO | SA_RESTART, SIGTERM);
	check_action(SIGPIPE, SIG_IGN, 0, 0);
	FID_CHECK(sigtimedwait(&blk, &si, &zero) == SIGUSR1 && si.si_code == SI_USER &&
		  si.si_pid == getpid(), "SIGUSR1 not pending with its sender");
	for (i = 0; i < 3; i++)
		FID_CHECK(sigtimedwait(&blk, &si, &zero) == rt && si.si_code == SI_QUEUE &&
			  si.si_value.sival_int == 100 + i,
			  "queued SIGRTMIN+2 #%d: missing or value %d", i, si.si_value.sival_int);
	FID_CHECK(sigtimedwait(&blk, &si, &zero) < 0, "an extra signal %d was pending", si.si_signo);
	go = 1;
	pthread_join(th, NULL);
	FID_CHECK(thread_ok == 1, "SIGUSR2 was not pending on its thread alone (%d)", thread_ok);
	fid_finish();
}
