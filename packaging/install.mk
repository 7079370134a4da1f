# SPDX-License-Identifier: GPL-2.0
# make install / uninstall (PREFIX, DESTDIR) and the programs they need
# (`make progs`: no tests, no module for the build machine's kernel).
#
# Installed programs find each other by their place relative to crdbg
# itself (PREFIX/bin/crdbg -> PREFIX/libexec/crdbg/crdbg-server, see
# usr/console/session.c), so nothing depends on the build tree or on the
# PREFIX the programs were built with. The module source goes where DKMS
# looks for it, /usr/src/crdbg-VERSION (not under PREFIX). libcrdbg-mpi,
# built for each MPI whose mpicc is there (usr/pmpi/pmpi.mk), goes to
# LIBDIR/crdbg: it is preloaded into MPI ranks by path, never linked to.

PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
LIBEXECDIR  := $(PREFIX)/libexec/crdbg
PMPIDIR     := $(LIBDIR)/crdbg
INCLUDEDIR  ?= $(PREFIX)/include
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DKMSDIR     := /usr/src/crdbg-$(VERSION)

INSTALL     ?= install

PROGS := $(B)/crdbg $(B)/sdm/sdm-master $(B)/sdm/crdbg-server $(LIB_CRDBG) \
	 $(PMPI_LIBS) $(MAN_PAGES) $(COMPLETION)
KMOD_SRCS := $(wildcard kmod/*.c kmod/*.h) kmod/Kbuild

# Every file install puts in place, under $(DESTDIR); uninstall removes these.
INSTALLED := $(BINDIR)/crdbg $(LIBEXECDIR)/sdm-master $(LIBEXECDIR)/crdbg-server \
	     $(LIBDIR)/libcrdbg.so.0 $(LIBDIR)/libcrdbg.so $(INCLUDEDIR)/crdbg/mpir.h \
	     $(MANDIR)/man1/crdbg.1 $(MANDIR)/man3/libcrdbg.3 $(MANDIR)/man4/crdbg.ko.4 \
	     $(BASHCOMPDIR)/crdbg $(addprefix $(PMPIDIR)/,$(notdir $(PMPI_LIBS))) \
	     $(addprefix $(DKMSDIR)/,$(notdir $(KMOD_SRCS)) uapi/linux/crdbg.h dkms.conf)

.PHONY: progs install uninstall

progs: $(PROGS)

install: progs
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR)/crdbg $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man4 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DKMSDIR)/uapi/linux
	$(INSTALL) -m 755 $(B)/crdbg $(DESTDIR)$(BINDIR)/crdbg
	$(INSTALL) -m 755 $(B)/sdm/sdm-master $(B)/sdm/crdbg-server $(DESTDIR)$(LIBEXECDIR)/
	$(INSTALL) -m 644 $(LIB_CRDBG) $(DESTDIR)$(LIBDIR)/libcrdbg.so.0
	ln -sf libcrdbg.so.0 $(DESTDIR)$(LIBDIR)/libcrdbg.so
	$(if $(PMPI_LIBS),$(INSTALL) -d $(DESTDIR)$(PMPIDIR) && \
		$(INSTALL) -m 644 $(PMPI_LIBS) $(DESTDIR)$(PMPIDIR)/)
	$(INSTALL) -m 644 usr/include/crdbg/mpir.h $(DESTDIR)$(INCLUDEDIR)/crdbg/mpir.h
	$(INSTALL) -m 644 $(MAN_DIR)/crdbg.1 $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 $(MAN_DIR)/libcrdbg.3 $(DESTDIR)$(MANDIR)/man3/
	$(INSTALL) -m 644 $(MAN_DIR)/crdbg.ko.4 $(DESTDIR)$(MANDIR)/man4/
	$(INSTALL) -m 644 $(COMPLETION) $(DESTDIR)$(BASHCOMPDIR)/crdbg
	$(INSTALL) -m 644 $(KMOD_SRCS) $(DESTDIR)$(DKMSDIR)/
	$(INSTALL) -m 644 kmod/uapi/linux/crdbg.h $(DESTDIR)$(DKMSDIR)/uapi/linux/
	sed 's/@VERSION@/$(VERSION)/g' packaging/dkms.conf.in >$(DESTDIR)$(DKMSDIR)/dkms.conf
	@if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi

# Files, then the directories that were crdbg's alone (if now empty).
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(PMPIDIR) $(DESTDIR)$(INCLUDEDIR)/crdbg \
		$(DESTDIR)$(DKMSDIR)/uapi/linux $(DESTDIR)$(DKMSDIR)/uapi $(DESTDIR)$(DKMSDIR) 2>/dev/null
	@if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi
