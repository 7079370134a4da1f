// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg.ko: exact freeze, thaw, query and callback push for
 * checkpoint-aware debugging. This file only wires the parts together.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/kernel.h>
#include <net/genetlink.h>
#include <linux/crdbg.h>

#include "freeze.h"
#include "hook.h"
#include "netlink.h"
#include "perm.h"

static int __init crdbg_mod_init(void)
{
	int ret;

	ret = crdbg_perm_init();
	if (ret < 0)
		goto err_freeze;
	ret = crdbg_freeze_init();
	if (ret < 0)
		goto err_freeze;
	ret = crdbg_hook_init();
	if (ret < 0)
		goto err_hook;
	ret = crdbg_genl_init();
	if (ret < 0)
		goto err_genl;

	pr_info("version %s loaded\n", CRDBG_MODULE_VERSION);
	return 0;

err_genl:
	crdbg_hook_uninit();
err_hook:
	crdbg_freeze_uninit();
err_freeze:
	return ret;
}

static void __exit crdbg_mod_exit(void)
{
	crdbg_genl_uninit();
	crdbg_hook_uninit();
	crdbg_freeze_uninit();
	pr_info("unloaded\n");
}

module_init(crdbg_mod_init);
module_exit(crdbg_mod_exit);
MODULE_LICENSE("GPL v2");
MODULE_DESCRIPTION("crdbg: exact freeze and callback push for checkpoint-aware debugging");
MODULE_AUTHOR("crdbg developers");
MODULE_VERSION(CRDBG_MODULE_VERSION);
/* Autoload: resolving the family by name makes genetlink request_module() it. */
MODULE_ALIAS_GENL_FAMILY(CRDBG_GENL_NAME);
