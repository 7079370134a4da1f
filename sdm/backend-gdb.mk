# SPDX-License-Identifier: GPL-2.0
#
# The GDB backend of sdm-server (sdm/backend-gdb.c, issue 6). It goes into
# libsdmnet.a next to the echo backend (backend.c lists it), and every
# program that links libsdmnet.a's backend table then also needs the MI
# driver: the target-specific additions below append it to the link line
# (explicit paths, so this works whether net.mk is read before or after).

$(B)/sdm/backend-gdb.o: sdm/backend-gdb.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -Isdm/include -Isdm -MMD -MP -c -o $@ $<

$(B)/sdm/libsdmnet.a: $(B)/sdm/backend-gdb.o

SDM_GDB_USERS := $(B)/sdm/sdm-server $(B)/sdm/sdm-master \
		 $(B)/tests/host/sdm/test_sdm_tree $(B)/sdm/bench_sdm_tree
$(SDM_GDB_USERS): $(B)/usr/libgdbmi.a
$(SDM_GDB_USERS): SDM_NET_LIBS += $(B)/usr/libgdbmi.a

-include $(B)/sdm/backend-gdb.d
