// SPDX-License-Identifier: GPL-2.0
/*
 * timerfd: a periodic CLOCK_MONOTONIC one (60 s), a one-shot
 * CLOCK_REALTIME one far away, a disarmed one. After the word: settings
 * as they were, each armed one still armed with no more than its time
 * left, none expired. The periods are long on purpose: CRIU 3.17 reads
 * an overdue timer's remaining time as 0 and restores it disarmed (seen
 * with 50 and 500 ms periods under TCG on a loaded machine, for raw CRIU
 * and crdbg alike), which would make the check depend on the machine's
 * speed rather than on what was restored.
 */
#include <stdint.h>
#include <sys/timerfd.h>

#include "fidelity.h"

int main(int argc, char **argv)
{
	struct itimerspec per = { { 60, 0 }, { 60, 0 } };
	struct itimerspec far = { { 0, 0 }, { 1000, 0 } }, got;
	int fp, ff, fd0;
	uint64_t n = 0;

	fid_init(argc, argv);
	fp = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	ff = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
	fd0 = timerfd_create(CLOCK_MONOTONIC, 0);
	if (fp < 0 || ff < 0 || fd0 < 0 || timerfd_settime(fp, 0, &per, NULL) ||
	    timerfd_settime(ff, 0, &far, NULL))
		fid_die("timerfd: %s", strerror(errno));
	fid_ready_wait();

	FID_CHECK(!timerfd_gettime(fp, &got) && got.it_interval.tv_sec == 60 &&
		  !got.it_interval.tv_nsec, "periodic timerfd: interval changed");
	FID_CHECK(got.it_value.tv_sec + got.it_value.tv_nsec > 0 && got.it_value.tv_sec <= 60,
		  "periodic timerfd: %ld s left (disarmed, or more than its period)",
		  (long)got.it_value.tv_sec);
	FID_CHECK(read(fp, &n, 8) < 0 && errno == EAGAIN, "periodic timerfd: expired early");
	FID_CHECK(!timerfd_gettime(ff, &got) && got.it_value.tv_sec > 0 && got.it_value.tv_sec <= 1000 &&
		  !got.it_interval.tv_sec, "one-shot timerfd: value %ld s", (long)got.it_value.tv_sec);
	FID_CHECK(read(ff, &n, 8) < 0 && errno == EAGAIN, "one-shot timerfd: expired or blocking");
	FID_CHECK(!timerfd_gettime(fd0, &got) && !got.it_value.tv_sec && !got.it_value.tv_nsec,
		  "disarmed timerfd: armed");
	FID_CHECK((fcntl(fp, F_GETFD) & FD_CLOEXEC) && !(fcntl(ff, F_GETFD) & FD_CLOEXEC),
		  "close-on-exec flags changed");
	FID_CHECK((fcntl(ff, F_GETFL) & O_NONBLOCK) && (fcntl(fp, F_GETFL) & O_NONBLOCK) &&
		  !(fcntl(fd0, F_GETFL) & O_NONBLOCK), "O_NONBLOCK flags changed");
	fid_finish();
}
