# SPDX-License-Identifier: GPL-2.0
# Tests of installing crdbg: make install/uninstall and the installed
# programs, the man pages and completion against what they describe (host),
# and the Debian packages on a writable guest root (guest group "install").

HOST_TESTS   += tests/host/install/test-install.sh tests/host/install/test-docs.sh
