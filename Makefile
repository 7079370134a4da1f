# SPDX-License-Identifier: GPL-2.0
#
# crdbg top-level build. Everything is built out of tree into $(B).
# Components contribute through their own fragments (usr/*/*.mk, sdm/*.mk,
# tests/tests.mk) by appending to these lists:
#   ALL_TARGETS   what `make` builds
#   HOST_TESTS    kselftest-harness binaries run on the host by `make check`
#   GUEST_GROUPS  names of tests/guest/<group>.sh, each run in one guest boot
#   BENCH_CMDS    programs (no arguments) that print a Markdown section for
#                 Documentation/performance.md; run by `make bench`
#   FUZZ_TARGETS  libFuzzer binaries run by `make fuzz`

B        ?= build
TOP      := $(CURDIR)
KVER     ?= $(shell ls -1d /lib/modules/*-amd64/build 2>/dev/null | sort -V | tail -n 1 | cut -d/ -f4)
KDIR     ?= /lib/modules/$(KVER)/build
VERSION  := 0.1.0

CC       ?= cc
CFLAGS   ?= -O2 -g
# libnl-genl-3 (crdbg/nl.h, the module's client) through pkg-config.
NL_CFLAGS := $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null || echo -I/usr/include/libnl3)
NL_LIBS   := $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null || echo -lnl-genl-3 -lnl-3)
USR_CFLAGS := $(CFLAGS) -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	      -DCRDBG_VERSION=\"$(VERSION)\" -isystem $(B)/include -Ikmod/uapi -Iusr/include \
	      $(NL_CFLAGS)
# Every test program's flags. kselftest_harness.h's macros leave parameters
# unused and compare signed with unsigned; tests format into fixed buffers
# on purpose.
TEST_CFLAGS = $(USR_CFLAGS) -Wno-unused-parameter -Wno-sign-compare \
	      -Wno-format-overflow -Wno-format-truncation

# Every libFuzzer target is built with these (make fuzz runs them).
FUZZ_CC       ?= clang
FUZZ_CFLAGS   := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		 -std=gnu11 -D_GNU_SOURCE
FUZZ_CC_FOUND := $(shell command -v $(FUZZ_CC) 2>/dev/null)

ALL_TARGETS  :=
HOST_TESTS   :=
GUEST_GROUPS :=
BENCH_CMDS   :=
FUZZ_TARGETS :=

# Every library, named before any fragment is read, so that a fragment may
# use any of them whatever order the fragments are read in.
LIB_COMMON   := $(B)/usr/libcommon.a
LIB_FREEZE   := $(B)/usr/libfreeze.a
LIB_CRS      := $(B)/usr/libcrs.a
LIB_JOB      := $(B)/usr/libjob.a
LIB_GDBMI    := $(B)/usr/libgdbmi.a
LIB_MERGE    := $(B)/usr/libmerge.a
LIB_DBGPROTO := $(B)/usr/libdbgproto.a
LIB_CONSOLE  := $(B)/usr/libconsole.a
LIB_SDMCORE  := $(B)/sdm/libsdmcore.a
LIB_SDMNET   := $(B)/sdm/libsdmnet.a
LIB_CRDBG    := $(B)/usr/libcrdbg.so
LIB_CRDBGD   := $(B)/usr/libcrdbgd.a

# crdbg's static link order: each library before those it calls.
#   console -> merge, dbgproto, gdbmi, sdmnet, sdmcore, job
#   merge -> sdmcore    sdmnet -> sdmcore    job -> crs -> freeze -> common
#   crdbgd (the service's wire codec) -> nothing
CLI_LIBS := $(LIB_CONSOLE) $(LIB_MERGE) $(LIB_DBGPROTO) $(LIB_GDBMI) $(LIB_SDMNET) \
	    $(LIB_SDMCORE) $(LIB_CRDBGD) $(LIB_JOB) $(LIB_CRS) $(LIB_FREEZE) $(LIB_COMMON)
# ... and the system libraries the fragments add (-lcrypto, -lreadline, libnl).
CLI_LDLIBS :=

.DEFAULT_GOAL := all

include $(wildcard usr/*/*.mk)
include $(wildcard sdm/*.mk)
include tests/tests.mk
include tests/kselftest.mk
include $(wildcard packaging/*.mk)

.PHONY: all help deps prepare kmod check check-host check-guest demo bench fuzz clean

all: $(ALL_TARGETS) kmod

help:
	@echo "crdbg $(VERSION) make targets:"
	@echo "  deps    install the Debian packages crdbg needs (idempotent, root)"
	@echo "  all     build userspace, SDM and crdbg.ko into $(B)/ (default)"
	@echo "  kmod    build only crdbg.ko (KVER=$(KVER), KDIR= to override)"
	@echo "  check   run every host and guest test; last line: N passed, N failed"
	@echo "  check-host / check-guest   one half of check"
	@echo "  demo    build, boot a guest and show crdbg at work"
	@echo "  bench   run the benchmarks, write Documentation/performance.md"
	@echo "  fuzz    run every fuzz target for FUZZ_SECONDS (default 60) each"
	@echo "  install / uninstall   PREFIX=$(PREFIX) DESTDIR= (see README)"
	@echo "  deb     build the crdbg and crdbg-dkms Debian packages into $(B)/deb/"
	@echo "  clean   remove $(B)/"

deps:
	@scripts/deps.sh

# kbuild wants a writable source directory: mirror kmod/ into $(B)/kmod
# with symlinks so objects land in the build tree, never next to the source.
kmod:
	@test -d "$(KDIR)" || { echo "kmod: no kernel tree at $(KDIR); run make deps" >&2; exit 1; }
	@mkdir -p $(B)/kmod
	@for f in $(TOP)/kmod/*.c $(TOP)/kmod/*.h $(TOP)/kmod/Kbuild; do \
		[ -e "$$f" ] && ln -sf "$$f" $(B)/kmod/; done; true
	$(MAKE) -C $(KDIR) M=$(TOP)/$(B)/kmod CRDBG_TOP=$(TOP) CRDBG_VERSION=$(VERSION) modules

# check and demo install what is missing first (make deps is idempotent),
# then build, one job per CPU unless make was given -j.
check check-host check-guest demo bench: prepare

prepare:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc)) all

check:
	@scripts/check.sh $(B) "$(HOST_TESTS)" "$(GUEST_GROUPS)"

check-host:
	@scripts/check.sh $(B) "$(HOST_TESTS)" ""

check-guest:
	@scripts/check.sh $(B) "" "$(GUEST_GROUPS)"

demo:
	@scripts/demo.sh $(B)

bench: prepare
	@scripts/bench.sh $(B) $(BENCH_CMDS)

FUZZ_SECONDS ?= 60
fuzz: $(FUZZ_TARGETS)
	@for f in $(FUZZ_TARGETS); do echo "fuzz: $$f for $(FUZZ_SECONDS)s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=0 || exit 1; done

clean:
	rm -rf $(B)

# make print-VAR shows a variable's value (e.g. make print-HOST_TESTS).
print-%:
	@echo '$($*)'
