# SPDX-License-Identifier: GPL-2.0
# Foundation tests: the CLI on the host, the module in the guest.

.SECONDEXPANSION:

$(B)/tests/host/cli/test_cli: tests/host/cli/test_cli.c tests/host/run_cmd.h | $(B)/crdbg
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -Itests/host -o $@ $<

HOST_TESTS   += $(B)/tests/host/cli/test_cli
ALL_TARGETS  += $(B)/tests/host/cli/test_cli
GUEST_GROUPS += foundation
