! MPI Fortran 90 bindings (use mpi), for MPI libraries without mpi_f08.
program allreduce_check_f90
  use mpi
  implicit none
  integer :: rank, nranks, ok, all_ok, ierr
  integer(kind=8) :: mine, total, expected
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  mine = rank + 1
  expected = int(nranks, 8) * (nranks + 1) / 2
  call MPI_Allreduce(mine, total, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  ok = merge(1, 0, total == expected)
  call MPI_Allreduce(ok, all_ok, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    print '(a,i0,a,i0,a,i0,a)', 'mpi fortran: ranks ', nranks, ' sum ', total, ' expected ', &
      expected, merge(' VALID  ', ' INVALID', all_ok == 1)
  end if
  call MPI_Finalize(ierr)
  if (all_ok /= 1) error stop 1
end program allreduce_check_f90
