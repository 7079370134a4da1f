! SPDX-License-Identifier: GPL-2.0
! A Fortran program for the console's checkpoint (tests/debug/
! test_debugckpt.sh): gdb's working language at its stops is Fortran,
! in which crdbg's own expressions (C) do not parse. An array recurrence
! whose state is on the stack and in a module's variables; compute() is
! where the test breaks and checkpoints; the rank comes from CRDBG_RANK.
module state
implicit none
integer, parameter :: n = 64
double precision :: field(n)
end module state

subroutine compute(it, total)
use state
implicit none
integer, intent(in) :: it
double precision, intent(inout) :: total
total = total + sum(field) * it
end subroutine compute

program prog_ckpt_f
use state
implicit none
character(len=16) :: env
integer :: rank, it, k, stat
double precision :: total
call get_environment_variable('CRDBG_RANK', env, status=stat)
rank = 0
if (stat == 0) read (env, *) rank
field = [(dble(k + rank), k = 1, n)]
total = 0d0
do it = 1, 40
  field = 0.5d0 * (field + cshift(field, 1)) + 1d-3 * it
  if (it == 20) call compute(it, total)
end do
call compute(it, total)
print '(a,i0,a,z16.16)', 'rank ', rank, ' total ', total
end program prog_ckpt_f
