# SPDX-License-Identifier: GPL-2.0
# The crdbg command-line tool and the small shared userspace library.

COMMON_SRCS := $(wildcard usr/common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(B)/%.o)
# mkman.c is a build-time generator (usr/cli/man.mk), not part of crdbg.
CLI_SRCS    := $(filter-out usr/cli/mkman.c,$(wildcard usr/cli/*.c))
CLI_OBJS    := $(CLI_SRCS:%.c=$(B)/%.o)

# Libraries other fragments add for the CLI to link (e.g. libfreeze.a).
CLI_LIBS    ?=

$(B)/usr/%.o: usr/%.c
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB_COMMON): $(COMMON_OBJS)
	$(AR) rcs $@ $^

$(B)/crdbg: $(CLI_OBJS) $(LIB_COMMON) $$(CLI_LIBS)
	$(CC) $(USR_CFLAGS) -o $@ $(CLI_OBJS) $(CLI_LIBS) $(LIB_COMMON) $(CLI_LDLIBS)

ALL_TARGETS += $(B)/crdbg

# The netlink codec and transport (crdbg/nla.h, crdbg/genl.h): host tests
# built from the sources with ASan, so that a read past a datagram fails.
NLA_SRCS := usr/common/nla.c usr/common/genl.c

$(B)/tests/cli/test_nla: tests/cli/test_nla.c $(NLA_SRCS) usr/include/crdbg/nla.h usr/include/crdbg/genl.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		-o $@ $< $(NLA_SRCS)

# ... and a libFuzzer target for the reply decoder (clang only).
NLA_FUZZ_CC ?= clang
$(B)/tests/fuzz/common_fuzz_genl: tests/fuzz/common_fuzz_genl.c $(NLA_SRCS)
	@mkdir -p $(dir $@)
	$(NLA_FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-std=gnu11 -D_GNU_SOURCE -Iusr/include -Ikmod/uapi -o $@ $< $(NLA_SRCS)

ALL_TARGETS += $(B)/tests/cli/test_nla
HOST_TESTS  += $(B)/tests/cli/test_nla
ifneq ($(shell command -v clang 2>/dev/null),)
ALL_TARGETS  += $(B)/tests/fuzz/common_fuzz_genl
FUZZ_TARGETS += $(B)/tests/fuzz/common_fuzz_genl
endif
-include $(CLI_OBJS:.o=.d) $(COMMON_OBJS:.o=.d)
