# SPDX-License-Identifier: GPL-2.0
# Guest group "debugckpt": the console's checkpoint and restart of a whole
# job (usr/console/checkpoint.c) under crdbg.ko, in one batch script
# (tests/guest/debugckpt.sh). It debugs $(B)/tests/debug/prog_debug
# and $(B)/tests/debug/prog_ckpt (and prog_ckpt_f, in Fortran)
# with $(B)/usr/libcrdbg.so preloaded, both built by other fragments.

GUEST_GROUPS += debugckpt

# A threaded program whose results depend on every thread's registers.
$(B)/tests/debug/prog_ckpt: tests/debug/prog_ckpt.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -pthread -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS += $(B)/tests/debug/prog_ckpt

# A Fortran program: gdb's language at its stops is Fortran.
ifneq ($(shell command -v gfortran 2>/dev/null),)
$(B)/tests/debug/prog_ckpt_f: tests/debug/prog_ckpt_f.f90
	@mkdir -p $(@D) $(B)/fmod/prog_ckpt_f
	gfortran -g -O0 -Wall -Werror -J$(B)/fmod/prog_ckpt_f -o $@ $<

ALL_TARGETS += $(B)/tests/debug/prog_ckpt_f
endif

# The timeline tests' programs (tests/debug/test_timeline.sh): a loop of
# stops, and the same with the ranks meeting in MPI_Allreduce.
$(B)/tests/debug/prog_timeline: tests/debug/prog_timeline.c
	@mkdir -p $(@D)
	$(CC) -g -O0 -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS += $(B)/tests/debug/prog_timeline

ifneq ($(shell command -v mpicc 2>/dev/null),)
$(B)/tests/debug/mpi_timeline: tests/debug/mpi_timeline.c
	@mkdir -p $(@D)
	mpicc -g -O0 -Wall -Wextra -Werror -o $@ $<

ALL_TARGETS += $(B)/tests/debug/mpi_timeline
endif

# make bench: the per-stop cost of auto-checkpoint (boots a guest).
BENCH_CMDS += tests/debug/bench_timeline.sh
