! MPI_ALLREDUCE from a procedure whose send buffer is its dummy argument, which it overwrites
! with the sum (NPB MG's norm2u3). Its shadow, selected against Open MPI's sentinels and kept
! for the reverse sweep, is the one the adjoint reduction adds into: a noalias dummy's shadow
! read back after that call must see the addition (was a zero gradient at -O2).
module dummy_m
  use iso_c_binding
  implicit none
  include 'mpif.h'
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
contains
  subroutine total(x, y)
    real(c_double) :: x(2), y, t
    integer :: ierr
    y = 3 * x(2) + x(1) ** 2
    call mpi_allreduce(y, t, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    y = t
  end subroutine
  function f(x) bind(c, name="f") result(r)
    real(c_double) :: x(2), r, y
    !dir$ noinline
    call total(x, y)
    r = 0
    if (rank() == 0) r = y * y
  end function
  integer function rank()
    integer :: ierr
    call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  end function
end module

program dummy_allreduce
  use dummy_m
  implicit none
  interface
    subroutine grad(fp, d, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(2), dx(2), s
  integer :: ierr, me, np, i
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, me, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, np, ierr)
  x = [1d0 + me, 2d0]
  dx = 0
  call grad(c_funloc(f), enzyme_dup, x, dx)
  ! d(s^2)/dx_r = 2 s (2 x_r(1), 3) with s the sum over ranks of 3 x(2) + x(1)^2
  s = 0
  do i = 0, np - 1
    s = s + 6 + (1d0 + i) ** 2
  end do
  if (abs(dx(1) - 4 * s * x(1)) < 1d-9 * s * s .and. abs(dx(2) - 6 * s) < 1d-9 * s) then
    print '(a, i0, 2es16.8)', 'CHECK rank ', me, dx
  else
    print '(a, i0, 4es16.8)', 'FAILED rank ', me, dx, 4 * s * x(1), 6 * s
  end if
  call mpi_finalize(ierr)
end program
