#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The guest half of `make demo`, run inside the guest by scripts/demo.sh.
set -euo pipefail
export PATH=$CRDBG_BUILD:$PATH

bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
step() {
	printf '$ %s\n' "$*"
	"$@"
}

bold "3. crdbg.ko"
step insmod "$CRDBG_BUILD/kmod/crdbg.ko"
step crdbg kmod status

bold "4. an exact freeze: a spinning program stops at one PC and stays there"
sh -c 'while :; do :; done' &
spin=$!
sleep 0.5
step crdbg freeze "$spin"
step crdbg threads "$spin"
sleep 1
step crdbg threads "$spin"
step crdbg thaw "$spin"
kill "$spin"

bold "5. checkpoint, kill, restart without and with the debugger"
bash "$CRDBG_TOP/tests/guest/crs/demo.sh"

step rmmod crdbg
echo
echo "demo: done"
