// SPDX-License-Identifier: GPL-2.0
/*
 * eventfd in semaphore mode (EFD_SEMAPHORE) at 3. After the word each
 * read takes 1, three times, and then it would block.
 */
#include <stdint.h>
#include <sys/eventfd.h>

#include "fidelity.h"

int main(int argc, char **argv)
{
	uint64_t v = 3;
	int sem, i;

	fid_init(argc, argv);
	sem = eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK);
	if (sem < 0 || write(sem, &v, 8) != 8)
		fid_die("eventfd: %s", strerror(errno));
	fid_ready_wait();

	for (i = 0; i < 3; i++)
		FID_CHECK(read(sem, &v, 8) == 8 && v == 1, "semaphore read #%d: %llu (semaphore mode lost?)",
			  i, (unsigned long long)v);
	FID_CHECK(read(sem, &v, 8) < 0 && errno == EAGAIN, "semaphore above 3");
	fid_finish();
}
