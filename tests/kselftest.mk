# SPDX-License-Identifier: GPL-2.0
# The kselftest harness headers every test includes (-isystem $(B)/include)
# ship only inside Debian's linux-source-6.1 tarball: the build extracts
# them itself. $(KSFT_STAMP) is an included makefile, so make brings it up
# to date before it builds anything else, whatever the -j.

KSFT_TARBALL ?= $(firstword $(wildcard /usr/src/linux-source-6.1*.tar.xz))
KSFT_HDRS    := $(B)/include/kselftest_harness.h $(B)/include/kselftest.h
KSFT_STAMP   := $(B)/include/kselftest.mk

$(KSFT_STAMP):
	@test -n "$(KSFT_TARBALL)" || { echo "kselftest: no /usr/src/linux-source-6.1*.tar.xz; install linux-source-6.1 (make deps)" >&2; exit 1; }
	@echo "  EXTRACT kselftest headers from $(KSFT_TARBALL)"
	@rm -rf $(B)/include/.ksft && mkdir -p $(B)/include/.ksft
	@tar -xJf $(KSFT_TARBALL) -C $(B)/include/.ksft --wildcards \
		'*/tools/testing/selftests/kselftest_harness.h' \
		'*/tools/testing/selftests/kselftest.h'
	@cp $(B)/include/.ksft/*/tools/testing/selftests/kselftest_harness.h \
	    $(B)/include/.ksft/*/tools/testing/selftests/kselftest.h $(B)/include/
	@rm -rf $(B)/include/.ksft
	@echo '# kselftest headers extracted from $(KSFT_TARBALL)' >$@

# Not for targets that build no test, nor for those that run make deps
# first and build in a make of their own (on a fresh machine the tarball
# comes with deps).
ifneq ($(filter-out clean help deps print-% progs install uninstall deb \
		    prepare check check-host check-guest demo bench,$(or $(MAKECMDGOALS),all)),)
include $(KSFT_STAMP)
endif
