#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot a guest running Debian's 6.1 kernel and show crdbg at
# work in it (the host kernel cannot load modules). Each step prints the
# command it runs, as a user would type it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
echo "demo: booting a QEMU guest (Debian 6.1 kernel, TCG); this takes a few seconds"
exec "$top/scripts/vm" --timeout 600 -- env CRDBG_BUILD="$build" \
	bash "$top/scripts/demo-guest.sh"
