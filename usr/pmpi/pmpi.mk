# SPDX-License-Identifier: GPL-2.0
# libcrdbg-mpi: the PMPI interposition library that publishes each rank's
# MPI state for the parallel step (crdbg/mpi-state.h). Built once per MPI
# implementation, with its own mpicc, since MPI's handles differ in type
# between them; LD_PRELOADed into a program built for that MPI:
#   $(B)/usr/libcrdbg-mpi-ompi.so    Open MPI (mpicc.openmpi)
#   $(B)/usr/libcrdbg-mpi-mpich.so   MPICH (mpicc.mpich)
# The Fortran bindings' wrappers (fortran.c) are in the same library.
# state.c has debug information (gdb prints crdbg_mpi_state with its
# fields); the wrappers have none, so that gdb's step steps over an MPI
# call as over any library function.

PMPI_CFLAGS := -O2 -fPIC -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	       -fno-omit-frame-pointer -Iusr/include
PMPI_SRCS   := usr/pmpi/state.c usr/pmpi/p2p.c usr/pmpi/coll.c usr/pmpi/fortran.c
PMPI_DEPS   := $(PMPI_SRCS) usr/pmpi/pmpi.h usr/include/crdbg/mpi-state.h

# $(1): ompi or mpich, $(2): its mpicc.
define pmpi_lib
$(B)/usr/libcrdbg-mpi-$(1).so: $(PMPI_DEPS)
	@mkdir -p $$(dir $$@) $(B)/pmpi/$(1)
	$(2) $(PMPI_CFLAGS) -g -c -o $(B)/pmpi/$(1)/state.o usr/pmpi/state.c
	$(2) $(PMPI_CFLAGS) -g0 -c -o $(B)/pmpi/$(1)/p2p.o usr/pmpi/p2p.c
	$(2) $(PMPI_CFLAGS) -g0 -c -o $(B)/pmpi/$(1)/coll.o usr/pmpi/coll.c
	$(2) $(PMPI_CFLAGS) -g0 -c -o $(B)/pmpi/$(1)/fortran.o usr/pmpi/fortran.c
	$(2) -shared -Wl,-soname,libcrdbg-mpi-$(1).so -o $$@ \
		$(B)/pmpi/$(1)/state.o $(B)/pmpi/$(1)/p2p.o $(B)/pmpi/$(1)/coll.o \
		$(B)/pmpi/$(1)/fortran.o

ALL_TARGETS += $(B)/usr/libcrdbg-mpi-$(1).so
PMPI_LIBS   += $(B)/usr/libcrdbg-mpi-$(1).so
endef

# The ones this machine builds (make install installs them).
PMPI_LIBS :=

ifneq ($(shell command -v mpicc.openmpi 2>/dev/null),)
$(eval $(call pmpi_lib,ompi,mpicc.openmpi))
endif
ifneq ($(shell command -v mpicc.mpich 2>/dev/null),)
$(eval $(call pmpi_lib,mpich,mpicc.mpich))
endif
