// SPDX-License-Identifier: GPL-2.0
/*
 * crdbg kmod status: is crdbg.ko loaded, which version, how many frozen.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/crdbg.h>

#include <crdbg/nl.h>
#include "cli.h"
#include "help.h"

struct kmod_status {
	char version[64];
	unsigned int nr_frozen;
};

static int parse_status(struct nlattr **attrs, void *arg)
{
	struct kmod_status *st = arg;

	if (!attrs[CRDBG_A_VERSION])
		return -EPROTO;
	snprintf(st->version, sizeof(st->version), "%s", nla_get_string(attrs[CRDBG_A_VERSION]));
	if (attrs[CRDBG_A_NR_FROZEN])
		st->nr_frozen = nla_get_u32(attrs[CRDBG_A_NR_FROZEN]);
	return 0;
}

static int kmod_status(void)
{
	struct kmod_status st = { .nr_frozen = 0 };
	struct crdbg_nl nl;
	char err[256];
	int ret;

	if (crdbg_nl_open(&nl, err, sizeof(err)) < 0) {
		cli_error("%s", err);
		return 1;
	}
	ret = crdbg_nl_transact(&nl, crdbg_nl_request(&nl, CRDBG_CMD_GET_STATUS, 0), parse_status,
				&st, err, sizeof(err));
	crdbg_nl_close(&nl);
	if (ret < 0 || !st.version[0]) {
		cli_error("kmod status: %s", ret < 0 ? err : "reply without a version");
		return 1;
	}
	printf("crdbg.ko %s loaded, netlink family %s v%d, %u process%s frozen\n", st.version,
	       CRDBG_GENL_NAME, CRDBG_GENL_VERSION, st.nr_frozen, st.nr_frozen == 1 ? "" : "es");
	return 0;
}

int cmd_kmod(int argc, char **argv)
{
	if (argc == 1 && !strcmp(argv[0], "status"))
		return kmod_status();
	if (cli_wants_help(argc, argv)) {
		cli_print_help(stdout, "kmod");
		return 0;
	}
	cli_error("usage: crdbg kmod status");
	return 2;
}
