// SPDX-License-Identifier: GPL-2.0
/*
 * eventfd: a counter at 5 and an empty non-blocking one (close-on-exec).
 * After the word the counter reads 5 at once and is then empty, the
 * empty one would block. (Semaphore mode: prog_eventfd_sem.c.)
 */
#include <stdint.h>
#include <sys/eventfd.h>

#include "fidelity.h"

int main(int argc, char **argv)
{
	int cnt, empty;
	uint64_t v = 0;

	fid_init(argc, argv);
	cnt = eventfd(2, EFD_NONBLOCK);
	empty = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cnt < 0 || empty < 0)
		fid_die("eventfd: %s", strerror(errno));
	v = 3;
	if (write(cnt, &v, 8) != 8)
		fid_die("eventfd write: %s", strerror(errno));
	fid_ready_wait();

	FID_CHECK(read(cnt, &v, 8) == 8 && v == 5, "counter read %llu, want 5", (unsigned long long)v);
	FID_CHECK(read(cnt, &v, 8) < 0 && errno == EAGAIN, "counter not empty after a read");
	FID_CHECK(read(empty, &v, 8) < 0 && errno == EAGAIN, "empty eventfd is not");
	FID_CHECK(fcntl(empty, F_GETFD) & FD_CLOEXEC, "close-on-exec lost");
	fid_finish();
}
