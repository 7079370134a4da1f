// SPDX-License-Identifier: GPL-2.0
/*
 * timerfd: a periodic CLOCK_MONOTONIC one (500 ms), a one-shot
 * CLOCK_REALTIME one far away, a disarmed one. After the word: settings
 * as they were, the periodic one counts expirations, the others none.
 * (With a short period CRIU 3.17 may find the periodic timer overdue on
 * a loaded machine, read its remaining time as 0 and restore it
 * disarmed: seen with 50 ms under TCG, for raw CRIU and crdbg alike.)
 */
#include <stdint.h>
#include <sys/timerfd.h>

#include "fidelity.h"

int main(int argc, char **argv)
{
	struct itimerspec per = { { 0, 500000000L }, { 0, 500000000L } };
	struct itimerspec far = { { 0, 0 }, { 1000, 0 } }, got;
	int fp, ff, fd0;
	uint64_t n = 0;

	fid_init(argc, argv);
	fp = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	ff = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
	fd0 = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	if (fp < 0 || ff < 0 || fd0 < 0 || timerfd_settime(fp, 0, &per, NULL) ||
	    timerfd_settime(ff, 0, &far, NULL))
		fid_die("timerfd: %s", strerror(errno));
	fid_ready_wait();

	FID_CHECK(!timerfd_gettime(fp, &got) && got.it_interval.tv_sec == 0 &&
		  got.it_interval.tv_nsec == 500000000L, "periodic timerfd: interval changed");
	FID_CHECK(read(fp, &n, 8) == 8 && n >= 1, "periodic timerfd: read %llu", (unsigned long long)n);
	FID_CHECK(read(fp, &n, 8) == 8 && n >= 1, "periodic timerfd: stopped firing");
	FID_CHECK(!timerfd_gettime(ff, &got) && got.it_value.tv_sec > 0 && got.it_value.tv_sec <= 1000 &&
		  !got.it_interval.tv_sec, "one-shot timerfd: value %ld s", (long)got.it_value.tv_sec);
	FID_CHECK(read(ff, &n, 8) < 0 && errno == EAGAIN, "one-shot timerfd: expired or blocking");
	FID_CHECK(!timerfd_gettime(fd0, &got) && !got.it_value.tv_sec && !got.it_value.tv_nsec,
		  "disarmed timerfd: armed");
	FID_CHECK((fcntl(fp, F_GETFD) & FD_CLOEXEC) && !(fcntl(ff, F_GETFD) & FD_CLOEXEC),
		  "close-on-exec flags changed");
	FID_CHECK((fcntl(ff, F_GETFL) & O_NONBLOCK) && !(fcntl(fp, F_GETFL) & O_NONBLOCK),
		  "O_NONBLOCK flags changed");
	fid_finish();
}
