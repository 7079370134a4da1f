# SPDX-License-Identifier: GPL-2.0
# Guest group "foundation": crdbg.ko loads, answers `crdbg kmod status`
# over generic netlink, and unloads cleanly (run-group then checks the
# kernel log).
# vm-time: 16
run_tap test_module "$CRDBG_BUILD/tests/foundation/test_module"
