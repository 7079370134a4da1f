# SPDX-License-Identifier: GPL-2.0
# Guest group "foundation": the module loads, answers over generic netlink,
# and unloads cleanly.
crdbg=$CRDBG_BUILD/crdbg

insmod "$CRDBG_BUILD/kmod/crdbg.ko"
tap_result module-load $? "insmod crdbg.ko"

out=$("$crdbg" kmod status 2>&1)
rc=$?
echo "$out"
case $out in
*"crdbg.ko "*" loaded"*) ok=$rc ;;
*) ok=1 ;;
esac
tap_result kmod-status "$ok" "crdbg kmod status reports the loaded module: $out"

rmmod crdbg
tap_result module-unload $? "rmmod crdbg"

out=$("$crdbg" kmod status 2>&1)
rc=$?
case $out in
*"not loaded"*) [ $rc -ne 0 ]; ok=$? ;;
*) ok=1 ;;
esac
tap_result kmod-status-unloaded "$ok" "after rmmod, kmod status fails with one clear line: $out"
