# SPDX-License-Identifier: GPL-2.0
# Guest group "debugckpt": the console's checkpoint and restart of a whole
# job (usr/console/checkpoint.c) under crdbg.ko, in one batch script
# (tests/guest/debugckpt.sh). It debugs $(B)/tests/host/debug/prog_debug
# with $(B)/usr/libcrdbg.so preloaded, both built by other fragments.

GUEST_GROUPS += debugckpt
