# SPDX-License-Identifier: GPL-2.0
# Tests of installing crdbg: make install/uninstall and the installed
# programs, the man pages and completion against what they describe (host),
# and the Debian packages on a writable guest root (guest group "install").

HOST_TESTS   += tests/install/test_install.sh tests/install/test_docs.sh \
		tests/install/test_deb.sh

# The guest group installs the packages `make deb` builds: check builds
# them after everything else (prepare), into $(B)/deb.
GUEST_GROUPS += install

.PHONY: deb-for-check
check check-guest: deb-for-check
deb-for-check: prepare
	@$(MAKE) --no-print-directory deb
