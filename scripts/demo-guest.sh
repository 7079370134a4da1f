#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The demo's steps, run inside the guest by scripts/demo.sh.
set -euo pipefail
export PATH=$CRDBG_BUILD:$PATH

step() {
	printf '\n$ %s\n' "$*"
	"$@"
}

step insmod "$CRDBG_BUILD/kmod/crdbg.ko"
step crdbg kmod status
step rmmod crdbg
echo
echo "demo: done"
