// SPDX-License-Identifier: GPL-2.0
/*
 * The CRS hook: crdbg pushes the hook trampoline (hook-trampoline.S) on
 * every thread after a checkpoint or a restart; the trampoline saves every
 * register, calls crdbg_hook_entry(arg) and returns to the exact PC the
 * thread was stopped at. This runs on top of arbitrary interrupted code,
 * so only async-signal-safe calls are allowed, and errno is preserved.
 */
#include <errno.h>

#include <crdbg/mpir.h>

#include "runtime.h"

/* Give up waiting for the other threads to park after this many naps. */
#define PARK_WAIT_NAPS 100

static void wait_for_others_parked(void)
{
	int i, n;

	for (i = 0; i < PARK_WAIT_NAPS; i++) {
		n = crdbg_rt_count_threads();
		if (n < 0 || __atomic_load_n(&crdbg_runtime_info.parked, __ATOMIC_SEQ_CST) >= n - 1)
			return;
		crdbg_rt_nap();
	}
}

void crdbg_hook_entry(uint64_t arg)
{
	int saved_errno = errno;
	int state = (int)(arg & CRDBG_HOOK_STATE_MASK);

	switch (arg & CRDBG_HOOK_DEBUG_MASK) {
	case CRDBG_HOOK_DEBUG_SET:
		MPIR_debug_with_checkpoint = 1;
		break;
	case CRDBG_HOOK_DEBUG_CLEAR:
		MPIR_debug_with_checkpoint = 0;
		break;
	}

	if (state == CRDBG_CRS_STATE_PARK) {
		/* A debugger parks us before it detaches (the gate is closed). */
		MPIR_checkpoint_debugger_waitpoint();
	} else if (crdbg_rt_is_designated() && MPIR_debug_with_checkpoint) {
		/*
		 * The designated thread restores the process, tells the
		 * debugger it may attach once every other thread waits, then
		 * waits too.
		 */
		MPIR_checkpoint_debug_gate = 0;
		if (state == CRDBG_CRS_STATE_RESTART)
			crdbg_rt_update_hostname();
		wait_for_others_parked();
		crdbg_rt_announce();
		MPIR_checkpoint_debugger_breakpoint();
	} else {
		MPIR_checkpoint_debugger_crs_hook(state);
	}
	errno = saved_errno;
}
