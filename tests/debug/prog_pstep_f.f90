! SPDX-License-Identifier: GPL-2.0
! Seed 002's Table 1 program in Fortran (mpif.h), for the Fortran bindings
! of libcrdbg-mpi (usr/pmpi/fortran.c): the same calls, its own lines.
program pstep_f
implicit none
include 'mpif.h'
integer :: rank, i, ierr, stat(MPI_STATUS_SIZE)
call MPI_Init(ierr)
call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
if (rank == 1) then
  call MPI_Recv(i, 1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, stat, ierr)
end if
if (rank == 0) then
  i = 0
  call MPI_Send(i, 1, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, ierr)
end if
call MPI_Finalize(ierr)
end program
