program f08_probe
  use mpi_f08
  call MPI_Init()
  call MPI_Finalize()
end program f08_probe
