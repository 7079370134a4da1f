# SPDX-License-Identifier: GPL-2.0
# make deb: the crdbg and crdbg-dkms binary packages (debian/), built with
# dpkg-buildpackage in a copy of the source under $(B)/deb/ so the .debs
# and every by-product land there and the tree stays clean.

DEB_DIR := $(B)/deb
DEB_SRC := $(DEB_DIR)/crdbg-$(VERSION)

.PHONY: deb

deb:
	@command -v dpkg-buildpackage >/dev/null && command -v dh_dkms >/dev/null || \
		{ echo "deb: dpkg-buildpackage or dh_dkms missing; run make deps" >&2; exit 1; }
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	tar -C $(TOP) --exclude=./$(B) --exclude=./build --exclude=./.git -cf - . | tar -C $(DEB_SRC) -xf -
	cd $(DEB_SRC) && dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
		{ tail -n 30 ../build.log; echo "deb: dpkg-buildpackage failed; see $(DEB_DIR)/build.log" >&2; exit 1; }
	@ls $(DEB_DIR)/*.deb
