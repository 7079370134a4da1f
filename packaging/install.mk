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
# systemd reads units from PREFIX/lib/systemd/system for PREFIX /usr and /usr/local.
UNITDIR     ?= $(PREFIX)/lib/systemd/system
SEAL_KEY    := /etc/crdbg/seal.key

INSTALL     ?= install

PROGS := $(B)/crdbg $(B)/crdbgd $(B)/sdm/sdm-master $(B)/sdm/crdbg-server $(B)/sdm/crdbg-part $(LIB_CRDBG) \
	 $(PMPI_LIBS) $(MAN_PAGES) $(COMPLETION)
KMOD_SRCS := $(wildcard kmod/*.c kmod/*.h) kmod/Kbuild

# Every file install puts in place, under $(DESTDIR); uninstall removes these.
INSTALLED := $(BINDIR)/crdbg $(LIBEXECDIR)/sdm-master $(LIBEXECDIR)/crdbg-server \
	     $(LIBEXECDIR)/crdbg-part $(LIBEXECDIR)/crdbgd \
	     $(UNITDIR)/crdbgd.socket $(UNITDIR)/crdbgd.service \
	     $(LIBDIR)/libcrdbg.so.0 $(LIBDIR)/libcrdbg.so $(INCLUDEDIR)/crdbg/mpir.h \
	     $(MANDIR)/man1/crdbg.1 $(MANDIR)/man3/libcrdbg.3 $(MANDIR)/man4/crdbg.ko.4 \
	     $(BASHCOMPDIR)/crdbg $(addprefix $(PMPIDIR)/,$(notdir $(PMPI_LIBS))) \
	     $(addprefix $(DKMSDIR)/,$(notdir $(KMOD_SRCS)) uapi/linux/crdbg.h dkms.conf)

.PHONY: progs install uninstall

progs: $(PROGS)

install: progs
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR)/crdbg $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man4 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DKMSDIR)/uapi/linux \
		$(DESTDIR)$(UNITDIR)
	$(INSTALL) -m 755 $(B)/crdbg $(DESTDIR)$(BINDIR)/crdbg
	$(INSTALL) -m 755 $(B)/sdm/sdm-master $(B)/sdm/crdbg-server $(B)/sdm/crdbg-part \
		$(DESTDIR)$(LIBEXECDIR)/
	$(INSTALL) -m 755 $(B)/crdbgd $(DESTDIR)$(LIBEXECDIR)/crdbgd
	$(INSTALL) -m 644 packaging/crdbgd.socket $(DESTDIR)$(UNITDIR)/crdbgd.socket
	sed 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' packaging/crdbgd.service.in \
		>$(DESTDIR)$(UNITDIR)/crdbgd.service
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
	@# the node's seal key, once (a package's postinst does the same), and the service
	@if [ -z "$(DESTDIR)" ] && [ ! -e $(SEAL_KEY) ]; then \
		$(INSTALL) -d -m 755 $(dir $(SEAL_KEY)) && \
		(umask 077 && head -c 32 /dev/urandom >$(SEAL_KEY).new) && \
		mv $(SEAL_KEY).new $(SEAL_KEY); fi
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
		systemctl daemon-reload && systemctl enable --now crdbgd.socket; fi

# Files, then the directories that were crdbg's alone (if now empty).
uninstall:
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
		systemctl disable --now crdbgd.socket crdbgd.service 2>/dev/null || true; fi
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(PMPIDIR) $(DESTDIR)$(INCLUDEDIR)/crdbg \
		$(DESTDIR)$(DKMSDIR)/uapi/linux $(DESTDIR)$(DKMSDIR)/uapi $(DESTDIR)$(DKMSDIR) 2>/dev/null
	@if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi
