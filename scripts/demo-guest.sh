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

bold "6. checkpoint and restart inside a debug session (2 ranks, 4 worker threads each)"
cat >/tmp/demo-session <<'EOS'
break compute
continue
stacks
thread apply 3 p $xmm0.v2_double[0]
checkpoint
restart
stacks
thread apply 3 p $xmm0.v2_double[0]
continue
EOS
cat /tmp/demo-session
export CRDBG_STORE=/tmp/demo-store
step crdbg debug -n 2 --preload "$CRDBG_BUILD/usr/libcrdbg.so" --batch /tmp/demo-session \
	"$CRDBG_BUILD/tests/guest/debug/prog_ckpt"
step crdbg list

step rmmod crdbg
echo
echo "demo: done"
