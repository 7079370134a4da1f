# SPDX-License-Identifier: GPL-2.0
# Job checkpoints (libjob.a): the coordinator of a job's checkpoint and
# restart, its part worker, and the part protocol's codec
# (<crdbg/job-part.h>), above libcrs and below the CLI, the console and
# crdbg-server. Its host tests and fuzz target.

JOB_SRCS := $(wildcard usr/job/*.c)
JOB_OBJS := $(JOB_SRCS:%.c=$(B)/%.o)

# A job's parts are checkpoints of libcrs: its private headers (the store,
# the clock, the error helper) are libjob's too.
$(JOB_OBJS): USR_CFLAGS += -Iusr/crs

$(LIB_JOB): $(JOB_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

ALL_TARGETS += $(LIB_JOB)
-include $(JOB_OBJS:.o=.d)

# Host tests (kselftest harness, run from the repo root); they see the
# private headers of libjob and libcrs.
JOB_TEST_CFLAGS := $(TEST_CFLAGS) -Iusr/job -Iusr/crs
JOB_TESTS := $(patsubst tests/job/%.c,$(B)/tests/job/%,$(wildcard tests/job/test_*.c))

$(B)/tests/job/test_%: tests/job/test_%.c $(LIB_JOB) $(LIB_CRS) $(LIB_SDMCORE)
	@mkdir -p $(dir $@)
	$(CC) $(JOB_TEST_CFLAGS) -o $@ $< $(LIB_JOB) $(LIB_CRS) $(LIB_SDMCORE) -lcrypto

ALL_TARGETS += $(JOB_TESTS)
HOST_TESTS += $(JOB_TESTS)

# libFuzzer target for the part protocol's codec; the codec checks
# handles, CIDs and terminals with libcrs's and the manifest's rules.
JOB_FUZZER   := $(B)/tests/fuzz/job_fuzz_part
JOB_FUZZ_SRC := usr/job/part-msg.c usr/job/manifest.c usr/crs/meta.c usr/crs/sealed.c \
		usr/crs/sha256.c usr/crs/error.c usr/crs/file-chunks.c \
		usr/crs/criu-pagemap.c usr/crs/fdio.c usr/crs/seal-key.c usr/crs/criu-opts.c

$(JOB_FUZZER): tests/fuzz/job_fuzz_part.c $(JOB_FUZZ_SRC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iusr/include -Iusr/crs -Ikmod/uapi \
		-o $@ tests/fuzz/job_fuzz_part.c $(JOB_FUZZ_SRC) -lcrypto

ifneq ($(FUZZ_CC_FOUND),)
ALL_TARGETS  += $(JOB_FUZZER)
FUZZ_TARGETS += $(JOB_FUZZER)
endif
