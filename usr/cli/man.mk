# SPDX-License-Identifier: GPL-2.0
# Man pages and bash completion, each generated from the source it
# documents so it cannot drift from it:
#   crdbg.1         usr/cli/help.c (the table `crdbg --help` prints) via mkman
#   completion      the same table via mkman
#   libcrdbg.3      the doc comment of usr/include/crdbg/mpir.h
#   crdbg.ko.4      the doc comment of kmod/uapi/linux/crdbg.h
# (scripts/man-from-header turns a header's doc comment into a page).

MAN_DIR   := $(B)/man
MAN_PAGES := $(MAN_DIR)/crdbg.1 $(MAN_DIR)/libcrdbg.3 $(MAN_DIR)/crdbg.ko.4
COMPLETION := $(B)/completion/crdbg
MKMAN     := $(B)/usr/cli/mkman

$(MKMAN): usr/cli/mkman.c usr/cli/help.c usr/cli/help.h usr/crs/store.h
	@mkdir -p $(@D)
	$(CC) $(USR_CFLAGS) -o $@ usr/cli/mkman.c usr/cli/help.c

$(MAN_DIR)/crdbg.1: $(MKMAN)
	@mkdir -p $(@D)
	$(MKMAN) man >$@.tmp && mv $@.tmp $@

$(COMPLETION): $(MKMAN)
	@mkdir -p $(@D)
	$(MKMAN) completion >$@.tmp && mv $@.tmp $@

$(MAN_DIR)/libcrdbg.3: usr/include/crdbg/mpir.h scripts/man-from-header
	@mkdir -p $(@D)
	scripts/man-from-header $< libcrdbg 3 "Library Functions" $(VERSION) >$@.tmp && mv $@.tmp $@

$(MAN_DIR)/crdbg.ko.4: kmod/uapi/linux/crdbg.h scripts/man-from-header
	@mkdir -p $(@D)
	scripts/man-from-header $< crdbg.ko 4 "Special Files" $(VERSION) >$@.tmp && mv $@.tmp $@

ALL_TARGETS += $(MAN_PAGES) $(COMPLETION)
