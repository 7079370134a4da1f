# SPDX-License-Identifier: GPL-2.0
# libcrdbg.so: the MPIR checkpoint runtime loaded into the debugged program
# (linked or LD_PRELOADed). Built with -g, never stripped, no tail calls, so
# a debugger sees every MPIR symbol and every frame. Its soname is
# libcrdbg.so.0 (make install adds the libcrdbg.so link programs link with).

RT_SRCS := $(wildcard usr/runtime/*.c)
RT_ASM  := $(wildcard usr/runtime/hook-trampoline.S)
RT_OBJS := $(RT_SRCS:%.c=$(B)/rt/%.o) $(RT_ASM:%.S=$(B)/rt/%.o)
RT_CFLAGS := $(USR_CFLAGS) -g -fPIC -fvisibility=hidden -fno-optimize-sibling-calls \
	     -fno-omit-frame-pointer -pthread

$(B)/rt/usr/runtime/%.o: usr/runtime/%.c
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/rt/usr/runtime/%.o: usr/runtime/%.S
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB_CRDBG): $(RT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -shared -Wl,-soname,libcrdbg.so.0 -Wl,-z,defs -o $@ $^ -pthread

ALL_TARGETS += $(LIB_CRDBG)
-include $(RT_OBJS:.o=.d)
