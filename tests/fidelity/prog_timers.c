// SPDX-License-Identifier: GPL-2.0
/*
 * Interval timers and POSIX timers: ITIMER_REAL (long, not expiring),
 * ITIMER_VIRTUAL and ITIMER_PROF armed, a periodic CLOCK_MONOTONIC POSIX
 * timer whose signal (blocked) carries a value, and a disarmed one.
 * After the word: intervals as set, remaining values plausible, the
 * periodic timer still fires with its value, the ids are the same.
 */
#include <signal.h>
#include <sys/time.h>

#include "fidelity.h"

static timer_t periodic, idle;

static bool tv_eq(struct timeval a, long sec)
{
	return a.tv_sec == sec && a.tv_usec == 0;
}

static void check_itimer(int which, const char *name, long ival, long max)
{
	struct itimerval it;

	getitimer(which, &it);
	FID_CHECK(tv_eq(it.it_interval, ival), "%s: interval %ld.%06ld", name,
		  (long)it.it_interval.tv_sec, (long)it.it_interval.tv_usec);
	FID_CHECK((it.it_value.tv_sec || it.it_value.tv_usec) && it.it_value.tv_sec <= max,
		  "%s: value %ld.%06ld", name, (long)it.it_value.tv_sec, (long)it.it_value.tv_usec);
}

int main(int argc, char **argv)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL };
	struct itimerspec ts = { { 0, 50 * 1000000L }, { 0, 50 * 1000000L } }, got;
	struct itimerval it = { { 300, 0 }, { 600, 0 } };
	struct timespec two = { 2, 0 };
	int sig = SIGRTMIN + 3, n;
	sigset_t blk;
	siginfo_t si;

	fid_init(argc, argv);
	sigemptyset(&blk);
	sigaddset(&blk, sig);
	sigaddset(&blk, SIGALRM);
	sigaddset(&blk, SIGVTALRM);
	sigaddset(&blk, SIGPROF);
	sigprocmask(SIG_BLOCK, &blk, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	it.it_value.tv_sec = 500;
	it.it_interval.tv_sec = 200;
	setitimer(ITIMER_VIRTUAL, &it, NULL);
	it.it_value.tv_sec = 400;
	it.it_interval.tv_sec = 100;
	setitimer(ITIMER_PROF, &it, NULL);
	ev.sigev_signo = sig;
	ev.sigev_value.sival_int = 4242;
	if (timer_create(CLOCK_MONOTONIC, &ev, &periodic) || timer_settime(periodic, 0, &ts, NULL))
		fid_die("timer_create: %s", strerror(errno));
	ev.sigev_value.sival_int = 7;
	if (timer_create(CLOCK_REALTIME, &ev, &idle))
		fid_die("timer_create: %s", strerror(errno));
	fid_ready_wait();

	check_itimer(ITIMER_REAL, "ITIMER_REAL", 300, 600);
	check_itimer(ITIMER_VIRTUAL, "ITIMER_VIRTUAL", 200, 500);
	check_itimer(ITIMER_PROF, "ITIMER_PROF", 100, 400);
	FID_CHECK(!timer_gettime(periodic, &got) && got.it_interval.tv_sec == 0 &&
		  got.it_interval.tv_nsec == 50 * 1000000L && (got.it_value.tv_sec || got.it_value.tv_nsec),
		  "periodic POSIX timer: interval or arming changed");
	FID_CHECK(!timer_gettime(idle, &got) && !got.it_value.tv_sec && !got.it_value.tv_nsec,
		  "disarmed POSIX timer: now armed or gone");
	sigemptyset(&blk);
	sigaddset(&blk, sig);
	/* Drain what expired while we waited, then see it fire again. */
	for (n = 0; n < 3; n++) {
		memset(&si, 0, sizeof(si));
		if (sigtimedwait(&blk, &si, &two) != sig) {
			fid_fail("periodic POSIX timer: no signal within 2 s (#%d)", n);
			break;
		}
		FID_CHECK(si.si_code == SI_TIMER && si.si_value.sival_int == 4242,
			  "periodic POSIX timer: code %d value %d", si.si_code, si.si_value.sival_int);
	}
	FID_CHECK(timer_getoverrun(periodic) >= 0, "timer_getoverrun: %s", strerror(errno));
	FID_CHECK(!timer_delete(idle) && !timer_delete(periodic), "timer ids no longer valid");
	fid_finish();
}
