// SPDX-License-Identifier: GPL-2.0
/*
 * Two more per-process attributes, each checked on its own: the
 * no_new_privs bit (PR_SET_NO_NEW_PRIVS) and the personality
 * (ADDR_NO_RANDOMIZE added). After the word both are as set.
 */
#include <sys/personality.h>
#include <sys/prctl.h>

#include "fidelity.h"

int main(int argc, char **argv)
{
	int pers, now;

	fid_init(argc, argv);
	pers = personality(0xffffffff);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || personality(pers | ADDR_NO_RANDOMIZE) < 0)
		fid_die("set-up: %s", strerror(errno));
	fid_ready_wait();

	FID_CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1, "no_new_privs lost");
	now = personality(0xffffffff);
	FID_CHECK(now == (pers | ADDR_NO_RANDOMIZE), "personality %#x, want %#x", now,
		  pers | ADDR_NO_RANDOMIZE);
	fid_finish();
}
