# SPDX-License-Identifier: GPL-2.0
# Guest group "install": the Debian packages `make deb` built, installed
# with dpkg -i on a writable root, DKMS, modprobe and autoload, the
# installed programs with the build tree hidden, man pages, completion,
# then removal and purge (tests/guest/install/install-test.sh).
# scripts/check.sh boots this group's guest with the options below.
# vm-options: --overlay

ip link set lo up 2>/dev/null
run_tap install "$CRDBG_TOP/tests/guest/install/install-test.sh"
