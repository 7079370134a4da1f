! SPDX-License-Identifier: GPL-2.0
! A ring under mpi_f08 (Open MPI's mpi_f08 routines call ompi_*_f, which
! libcrdbg-mpi wraps): each rank sends its rank to the right with
! non-blocking calls, then the ranks sum what they got in place. Exits
! with code 1 if a value is wrong.
program pstep_f08
use mpi_f08
implicit none
integer :: rank, nranks, left, right, got, total, ierr
type(MPI_Request) :: reqs(2)
call MPI_Init(ierr)
call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
right = mod(rank + 1, nranks)
left = mod(rank + nranks - 1, nranks)
call MPI_Irecv(got, 1, MPI_INTEGER, left, 7, MPI_COMM_WORLD, reqs(1), ierr)
call MPI_Isend(rank, 1, MPI_INTEGER, right, 7, MPI_COMM_WORLD, reqs(2), ierr)
call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
total = got
call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
if (got /= left .or. total /= nranks * (nranks - 1) / 2) then
  print '(a,i0,a,i0,a,i0)', 'rank ', rank, ' wrong: got ', got, ' total ', total
  call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
end if
print '(a,i0,a,i0)', 'rank ', rank, ' total ', total
call MPI_Finalize(ierr)
end program
