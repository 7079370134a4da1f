# SPDX-License-Identifier: GPL-2.0
# Guest group "install": the Debian packages `make deb` built, installed
# with dpkg -i on a writable root, DKMS, modprobe and autoload, the
# installed programs with the build tree hidden, man pages, completion,
# then removal and purge (tests/install/test_packages.sh).
# scripts/check.sh boots this group's guest with the options below. DKMS
# compiles the module under TCG, which is slow on a loaded machine: the
# limits are wider than other groups'.
# vm-options: --overlay --timeout 2400
# vm-time: 430

ip link set lo up 2>/dev/null
CRDBG_TEST_TIMEOUT=2100 run_tap install "$CRDBG_TOP/tests/install/test_packages.sh"
