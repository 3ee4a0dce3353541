! MPI Fortran 2008 bindings (use mpi_f08): every rank contributes rank+1, the
! sum must be N(N+1)/2 on all ranks.
program allreduce_check_f08
  use mpi_f08
  implicit none
  integer :: rank, nranks, ok, all_ok
  integer(kind=8) :: mine, total, expected
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  mine = rank + 1
  expected = int(nranks, 8) * (nranks + 1) / 2
  call MPI_Allreduce(mine, total, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
  ok = merge(1, 0, total == expected)
  call MPI_Allreduce(ok, all_ok, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
  if (rank == 0) then
    print '(a,i0,a,i0,a,i0,a)', 'mpi fortran-f08: ranks ', nranks, ' sum ', total, ' expected ', &
      expected, merge(' VALID  ', ' INVALID', all_ok == 1)
  end if
  call MPI_Finalize()
  if (all_ok /= 1) error stop 1
end program allreduce_check_f08
