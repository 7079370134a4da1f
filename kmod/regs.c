// SPDX-License-Identifier: GPL-2.0
/* The current thread's NT_PRSTATUS regset, looked up in one place. */
#include <linux/elf.h>
#include <linux/regset.h>
#include <linux/sched.h>

#include "regs.h"

bool crdbg_user_regs(struct user_regs_struct *ur)
{
	const struct user_regset_view *view = task_user_regset_view(current);
	unsigned int i;

	for (i = 0; i < view->n; i++) {
		if (view->regsets[i].core_note_type != NT_PRSTATUS)
			continue;
		return regset_get(current, &view->regsets[i], sizeof(*ur), ur) == sizeof(*ur);
	}
	return false;
}
