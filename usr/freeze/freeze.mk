# SPDX-License-Identifier: GPL-2.0
# libfreeze.a: the freeze/thaw/query/push-hook interface of <crdbg/freeze.h>
# (dispatcher, ptrace backend, kmod backend, symbolizer), its behavioural
# tests (run in the guest on both backends) and the freeze benchmark.

FREEZE_SRCS := $(wildcard usr/freeze/*.c)
FREEZE_OBJS := $(FREEZE_SRCS:%.c=$(B)/%.o)

$(LIB_FREEZE): $(FREEZE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

FREEZE_TEST_LIBS := $(LIB_FREEZE) $(LIB_COMMON) $(NL_LIBS) -lpthread

$(B)/tests/freeze/%: tests/freeze/%.c $(wildcard tests/freeze/*.h) $(LIB_FREEZE) $(LIB_COMMON)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Itests/freeze -o $@ $< \
		$(FREEZE_TEST_ASM) $(FREEZE_TEST_LIBS)

# test_freeze pushes hooks through the runtime's trampoline on the kmod backend.
$(B)/tests/freeze/test_freeze: FREEZE_TEST_ASM := usr/runtime/hook-trampoline.S
$(B)/tests/freeze/test_freeze: usr/runtime/hook-trampoline.S

FREEZE_TESTS := $(patsubst tests/freeze/%.c,$(B)/tests/freeze/%,$(wildcard tests/freeze/test_*.c))
FREEZE_BENCH := $(patsubst tests/freeze/%.c,$(B)/tests/freeze/%,$(wildcard tests/freeze/bench_*.c))

ALL_TARGETS  += $(LIB_FREEZE) $(FREEZE_TESTS) $(FREEZE_BENCH)
# On the host only the ptrace variants run (no module, and CRIU 3.17 fails
# on the host kernel: those tests skip saying so); the guest runs them all.
HOST_TESTS   += $(FREEZE_TESTS)
GUEST_GROUPS += $(if $(wildcard tests/guest/freeze.sh),freeze)
BENCH_CMDS   += $(if $(wildcard tests/freeze/bench.sh),tests/freeze/bench.sh)

-include $(FREEZE_OBJS:.o=.d)
