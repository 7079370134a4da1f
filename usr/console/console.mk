# SPDX-License-Identifier: GPL-2.0
# The parallel debugger's console (`crdbg debug`, crdbg/console.h):
# session, MPIR, checkpoint, commands and the readline front, in
# $(B)/usr/libconsole.a, linked into crdbg with the SDM front end, the
# rank merging, the debugger protocol and the MI driver.

CONSOLE_SRCS := usr/console/session.c usr/console/commands.c usr/console/console.c \
		usr/console/mpir.c usr/console/mpir-probe.c usr/console/ranks.c usr/console/adopt.c \
		usr/console/checkpoint.c usr/console/timeline.c usr/console/stop-line.c usr/console/breakpoints.c usr/console/pstep.c usr/console/gate.c \
		usr/console/pstep-model.c usr/console/pstep-view.c usr/console/parts-sdm.c \
		usr/console/proctable.c usr/console/launcher-env.c
CONSOLE_OBJS := $(CONSOLE_SRCS:%.c=$(B)/%.o)

$(CONSOLE_OBJS) $(B)/usr/cli/cmd-debug.o: USR_CFLAGS += -Isdm/include

$(LIB_CONSOLE): $(CONSOLE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

CLI_LDLIBS += -lreadline

ALL_TARGETS += $(LIB_CONSOLE)

-include $(CONSOLE_OBJS:.o=.d)

# End-to-end tests of `crdbg debug` and the program they debug (-g -O0).
DEBUGGER_TDIR  := $(B)/tests/debug
DEBUGGER_TESTS := $(DEBUGGER_TDIR)/test_debug $(DEBUGGER_TDIR)/test_console_jobs \
		  $(DEBUGGER_TDIR)/test_console_late

$(DEBUGGER_TDIR)/prog_debug $(DEBUGGER_TDIR)/prog_vfork: $(DEBUGGER_TDIR)/%: tests/debug/%.c
	@mkdir -p $(dir $@)
	$(CC) -g -O0 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -o $@ $<

$(DEBUGGER_TESTS): $(DEBUGGER_TDIR)/%: tests/debug/%.c tests/lib/console_run.h | $(DEBUGGER_TDIR)/prog_debug \
		$(B)/crdbg $(B)/sdm/crdbg-server $(B)/sdm/sdm-master $(LIB_CRDBG)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Itests/lib -MMD -MP -DCRDBG=\"$(B)/crdbg\" \
		-DDEBUG_PROG=\"$(DEBUGGER_TDIR)/prog_debug\" \
		-DMPIR_LAUNCHER=\"$(B)/tests/console/prog_mpir_launcher\" \
		-DVFORK_PROG=\"$(DEBUGGER_TDIR)/prog_vfork\" \
		-DCRDBG_RUNTIME=\"$(LIB_CRDBG)\" -o $@ $<

# A program that loads a library of its own late (pending breakpoints)
$(DEBUGGER_TDIR)/prog_late: tests/debug/prog_late.c
	@mkdir -p $(dir $@)
	$(CC) -g -O0 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -o $@ $< -ldl

$(DEBUGGER_TDIR)/late_lib.so: tests/debug/late_lib.c
	@mkdir -p $(dir $@)
	$(CC) -g -O0 -Wall -Wextra -Werror -fPIC -shared -o $@ $<

# ...and stripped, as Debian ships libraries (frames gdb cannot name)
$(DEBUGGER_TDIR)/late_lib_stripped.so: tests/debug/late_lib.c
	@mkdir -p $(dir $@)
	$(CC) -O0 -s -Wall -Wextra -Werror -fPIC -shared -o $@ $<

$(DEBUGGER_TESTS): | $(B)/tests/console/prog_mpir_launcher \
		$(DEBUGGER_TDIR)/prog_vfork $(DEBUGGER_TDIR)/prog_late $(DEBUGGER_TDIR)/late_lib.so \
		$(DEBUGGER_TDIR)/late_lib_stripped.so

ALL_TARGETS += $(DEBUGGER_TDIR)/prog_debug $(DEBUGGER_TDIR)/prog_vfork $(DEBUGGER_TESTS) \
		$(DEBUGGER_TDIR)/prog_late $(DEBUGGER_TDIR)/late_lib.so $(DEBUGGER_TDIR)/late_lib_stripped.so
HOST_TESTS  += $(DEBUGGER_TESTS)
-include $(DEBUGGER_TESTS:=.d)

# The MPI programs of the MPIR tests, when Open MPI's mpicc is there.
ifneq ($(shell command -v mpicc 2>/dev/null),)
$(DEBUGGER_TDIR)/mpi_debug $(DEBUGGER_TDIR)/mpi_jobs: $(DEBUGGER_TDIR)/%: tests/debug/%.c
	@mkdir -p $(dir $@)
	mpicc -g -O0 -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS += $(DEBUGGER_TDIR)/mpi_debug $(DEBUGGER_TDIR)/mpi_jobs
$(DEBUGGER_TESTS): | $(DEBUGGER_TDIR)/mpi_debug $(DEBUGGER_TDIR)/mpi_jobs
endif

# The same programs under MPICH (test_debug's hydra session,
# test_console_jobs' crashes under mpiexec.hydra).
ifneq ($(shell command -v mpicc.mpich 2>/dev/null),)
$(DEBUGGER_TDIR)/mpi_debug_mpich $(DEBUGGER_TDIR)/mpi_jobs_mpich: $(DEBUGGER_TDIR)/%_mpich: tests/debug/%.c
	@mkdir -p $(dir $@)
	mpicc.mpich -g -O0 -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS += $(DEBUGGER_TDIR)/mpi_debug_mpich $(DEBUGGER_TDIR)/mpi_jobs_mpich
$(DEBUGGER_TESTS): | $(DEBUGGER_TDIR)/mpi_debug_mpich $(DEBUGGER_TDIR)/mpi_jobs_mpich \
		    $(B)/usr/libcrdbg-mpi-mpich.so
endif

# The parallel step (pstep*.c) on real Open MPI jobs: seed 002's program
# and the other cases, with libcrdbg-mpi (usr/pmpi/) in the ranks.
PSTEP_TEST := $(DEBUGGER_TDIR)/test_pstep

$(PSTEP_TEST): tests/debug/test_pstep.c tests/lib/console_run.h | $(B)/crdbg $(B)/sdm/crdbg-server $(B)/sdm/sdm-master
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Itests/lib -MMD -MP -DCRDBG=\"$(B)/crdbg\" \
		-DPSTEP_PROG=\"$(DEBUGGER_TDIR)/prog_pstep\" \
		-DPSTEP_CASES=\"$(DEBUGGER_TDIR)/prog_pstep_cases\" \
		-DPSTEP_LIB=\"$(B)/usr/libcrdbg-mpi-ompi.so\" \
		-DPSTEP_PROG_MPICH=\"$(DEBUGGER_TDIR)/prog_pstep_mpich\" \
		-DPSTEP_FORTRAN=\"$(DEBUGGER_TDIR)/prog_pstep_f\" \
		-DPSTEP_FORTRAN_F08=\"$(DEBUGGER_TDIR)/prog_pstep_f08\" \
		-DPSTEP_FORTRAN_MPICH=\"$(DEBUGGER_TDIR)/prog_pstep_f_mpich\" \
		-DPSTEP_LIB_MPICH=\"$(B)/usr/libcrdbg-mpi-mpich.so\" -o $@ $<

ALL_TARGETS += $(PSTEP_TEST)
HOST_TESTS  += $(PSTEP_TEST)
-include $(PSTEP_TEST).d

# Table 1's program for MPICH (test_pstep's table1_mpich).
ifneq ($(shell command -v mpicc.mpich 2>/dev/null),)
$(DEBUGGER_TDIR)/prog_pstep_mpich: tests/debug/prog_pstep.c
	@mkdir -p $(dir $@)
	mpicc.mpich -g -O0 -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS += $(DEBUGGER_TDIR)/prog_pstep_mpich
$(PSTEP_TEST): | $(DEBUGGER_TDIR)/prog_pstep_mpich $(B)/usr/libcrdbg-mpi-mpich.so
endif

# Its model alone, on hand-made MPI states.
$(B)/tests/console/test_pstep_model: tests/console/test_pstep_model.c \
		usr/console/pstep-model.c usr/console/pstep.h usr/include/crdbg/mpi-state.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Iusr/console -MMD -MP -o $@ $< usr/console/pstep-model.c

ALL_TARGETS += $(B)/tests/console/test_pstep_model
HOST_TESTS  += $(B)/tests/console/test_pstep_model
-include $(B)/tests/console/test_pstep_model.d

# The stop line of the timeline, on hand-made replies.
$(B)/tests/console/test_stop_line: tests/console/test_stop_line.c usr/console/stop-line.c \
		usr/console/stop-line.h $(B)/usr/libdbgproto.a $(B)/sdm/libsdmcore.a
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Iusr/console -Isdm/include -fsanitize=address,undefined \
		-fno-sanitize-recover=undefined -MMD -MP -o $@ $< usr/console/stop-line.c \
		$(B)/usr/libdbgproto.a $(B)/sdm/libsdmcore.a

ALL_TARGETS += $(B)/tests/console/test_stop_line
HOST_TESTS  += $(B)/tests/console/test_stop_line
-include $(B)/tests/console/test_stop_line.d

# The launcher's process table read in bulk, from a child that lays one out.
$(B)/tests/console/test_proctable: tests/console/test_proctable.c usr/console/proctable.c \
		usr/console/proctable.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Iusr/console -fsanitize=address,undefined \
		-fno-sanitize-recover=undefined -MMD -MP -o $@ $< usr/console/proctable.c

ALL_TARGETS += $(B)/tests/console/test_proctable
HOST_TESTS  += $(B)/tests/console/test_proctable
-include $(B)/tests/console/test_proctable.d

ifneq ($(shell command -v mpicc.openmpi 2>/dev/null),)
$(DEBUGGER_TDIR)/prog_pstep $(DEBUGGER_TDIR)/prog_pstep_cases: $(DEBUGGER_TDIR)/%: tests/debug/%.c
	@mkdir -p $(dir $@)
	mpicc.openmpi -g -O0 -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS += $(DEBUGGER_TDIR)/prog_pstep $(DEBUGGER_TDIR)/prog_pstep_cases
$(PSTEP_TEST): | $(DEBUGGER_TDIR)/prog_pstep $(DEBUGGER_TDIR)/prog_pstep_cases \
		 $(B)/usr/libcrdbg-mpi-ompi.so
endif

# Fortran programs for libcrdbg-mpi's Fortran bindings (usr/pmpi/fortran.c):
# Table 1 with mpif.h under both MPIs, a ring with mpi_f08 under Open MPI.
ifneq ($(shell command -v mpif90.openmpi 2>/dev/null),)
$(DEBUGGER_TDIR)/prog_pstep_f $(DEBUGGER_TDIR)/prog_pstep_f08: $(DEBUGGER_TDIR)/%: tests/debug/%.f90
	@mkdir -p $(dir $@) $(B)/fmod/$*
	mpif90.openmpi -g -O0 -Wall -Werror -J$(B)/fmod/$* -o $@ $<

ALL_TARGETS += $(DEBUGGER_TDIR)/prog_pstep_f $(DEBUGGER_TDIR)/prog_pstep_f08
$(PSTEP_TEST): | $(DEBUGGER_TDIR)/prog_pstep_f $(DEBUGGER_TDIR)/prog_pstep_f08
endif
ifneq ($(shell command -v mpif90.mpich 2>/dev/null),)
$(DEBUGGER_TDIR)/prog_pstep_f_mpich: tests/debug/prog_pstep_f.f90
	@mkdir -p $(dir $@) $(B)/fmod/mpich
	mpif90.mpich -g -O0 -Wall -Werror -J$(B)/fmod/mpich -o $@ $<

ALL_TARGETS += $(DEBUGGER_TDIR)/prog_pstep_f_mpich
$(PSTEP_TEST): | $(DEBUGGER_TDIR)/prog_pstep_f_mpich
endif

# Benchmark: start-up to main and print round trip against N (make bench).
$(DEBUGGER_TDIR)/bench_debug: tests/debug/bench_debug.c | $(DEBUGGER_TDIR)/prog_debug $(B)/crdbg
	@mkdir -p $(dir $@)
	$(CC) $(USR_CFLAGS) -MMD -MP -DCRDBG=\"$(B)/crdbg\" \
		-DDEBUG_PROG=\"$(DEBUGGER_TDIR)/prog_debug\" -o $@ $<

ALL_TARGETS += $(DEBUGGER_TDIR)/bench_debug
BENCH_CMDS  += $(DEBUGGER_TDIR)/bench_debug
-include $(DEBUGGER_TDIR)/bench_debug.d

# MPIR recognised by symbols: the probe against real launchers, a
# starter of our own (prog_mpir_launcher, also stripped) and mutated
# images, built with ASan/UBSan from the source.
$(B)/tests/console/prog_mpir_launcher: tests/console/prog_mpir_launcher.c
	@mkdir -p $(dir $@)
	$(CC) -g -O0 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -o $@ $<

$(B)/tests/console/test_mpir_probe: tests/console/test_mpir_probe.c usr/console/mpir-probe.c \
		usr/console/mpir-probe.h | $(B)/tests/console/prog_mpir_launcher
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Iusr/console -fsanitize=address,undefined \
		-fno-sanitize-recover=undefined -MMD -MP \
		-DMPIR_LAUNCHER=\"$(abspath $(B))/tests/console/prog_mpir_launcher\" \
		-o $@ $< usr/console/mpir-probe.c

ALL_TARGETS += $(B)/tests/console/prog_mpir_launcher $(B)/tests/console/test_mpir_probe

# libFuzzer target for the same ELF reader (clang only): make fuzz.
MPIR_FUZZER   := $(B)/tests/fuzz/mpir_fuzz_elf

$(MPIR_FUZZER): tests/fuzz/mpir_fuzz_elf.c usr/console/mpir-probe.c usr/console/mpir-probe.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iusr/console \
		-o $@ tests/fuzz/mpir_fuzz_elf.c usr/console/mpir-probe.c

ifneq ($(FUZZ_CC_FOUND),)
ALL_TARGETS  += $(MPIR_FUZZER)
FUZZ_TARGETS += $(MPIR_FUZZER)
endif
HOST_TESTS  += $(B)/tests/console/test_mpir_probe
-include $(B)/tests/console/test_mpir_probe.d
