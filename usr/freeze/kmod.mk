# SPDX-License-Identifier: GPL-2.0
# Guest tests of crdbg.ko (group "kmod"): tests/kmod/test_*.c, each linked
# with the hook trampoline and the kmod freeze backend.

KMOD_TESTS := $(patsubst tests/kmod/%.c,$(B)/tests/kmod/%,$(wildcard tests/kmod/test_*.c))
KMOD_TEST_LIBS := $(LIB_FREEZE) $(LIB_COMMON) $(NL_LIBS) -lpthread

$(B)/tests/kmod/%: tests/kmod/%.c tests/kmod/kmod-test.h usr/runtime/hook-trampoline.S \
		   $(LIB_FREEZE) $(LIB_COMMON)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Itests/kmod -o $@ $< usr/runtime/hook-trampoline.S \
		$(KMOD_TEST_LIBS)

ALL_TARGETS  += $(KMOD_TESTS)
GUEST_GROUPS += kmod
