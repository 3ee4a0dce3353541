! Toolchain probe (Fortran 2008): array syntax and intrinsics work.
program hello
  implicit none
  integer :: i
  integer(kind=8) :: values(1000), total
  values = [(int(i, 8), i = 1, 1000)]
  total = sum(values)
  if (total == 500500_8) then
    print '(a,i0,a)', 'toolchain fortran: sum 1..1000 = ', total, ' VALID'
  else
    print '(a,i0,a)', 'toolchain fortran: sum 1..1000 = ', total, ' INVALID'
    error stop 1
  end if
end program hello
