! A ring completed by MPI_WAITANY, MPI_TESTANY until it completes one, MPI_TESTSOME until none
! is left, and MPI_WAITSOME on requests all null (outcount MPI_UNDEFINED), from Fortran (indices
! from 1). Each rank receives its left neighbour's x^2 and 3 x; f = u1 * u2 * x, summed over
! the ranks: df/dx_r = 3 x_l^3 + 9 x_right x_r^2 (12 x^3 on one rank).
module ring_m
  use iso_c_binding
  implicit none
  include 'mpif.h'
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
contains
  function f(x) bind(c, name="f") result(r)
    real(c_double) :: x, r, s(2), u(2)
    integer :: me, np, ierr, q(4), idx, count, ids(4), left
    logical :: flag
    call mpi_comm_rank(MPI_COMM_WORLD, me, ierr)
    call mpi_comm_size(MPI_COMM_WORLD, np, ierr)
    s = [x * x, 3 * x]
    call mpi_irecv(u(1), 1, MPI_DOUBLE_PRECISION, mod(me + np - 1, np), 1, MPI_COMM_WORLD, &
                   q(1), ierr)
    call mpi_irecv(u(2), 1, MPI_DOUBLE_PRECISION, mod(me + np - 1, np), 2, MPI_COMM_WORLD, &
                   q(2), ierr)
    call mpi_isend(s(1), 1, MPI_DOUBLE_PRECISION, mod(me + 1, np), 1, MPI_COMM_WORLD, q(3), ierr)
    call mpi_isend(s(2), 1, MPI_DOUBLE_PRECISION, mod(me + 1, np), 2, MPI_COMM_WORLD, q(4), ierr)
    call mpi_waitany(4, q, idx, MPI_STATUS_IGNORE, ierr)
    left = 3
    if (idx < 1 .or. idx > 4 .or. q(idx) /= MPI_REQUEST_NULL) left = -100
    flag = .false.
    do while (.not. flag)
      call mpi_testany(4, q, idx, flag, MPI_STATUS_IGNORE, ierr)
    end do
    left = left - 1
    do while (left > 0)
      call mpi_testsome(4, q, count, ids, MPI_STATUSES_IGNORE, ierr)
      left = left - count
    end do
    call mpi_waitsome(4, q, count, ids, MPI_STATUSES_IGNORE, ierr)
    r = 0
    if (count == MPI_UNDEFINED .and. left == 0) r = u(1) * u(2) * x
  end function
end module

program requests_any_some
  use ring_m
  implicit none
  interface
    subroutine grad(fp, d, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d
      real(c_double) :: x, dx
    end subroutine
  end interface
  real(c_double) :: x, dx, xl, xr, want
  integer :: ierr, me, np
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, me, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, np, ierr)
  x = 1d0 + me
  dx = 0
  call grad(c_funloc(f), enzyme_dup, x, dx)
  xl = 1d0 + mod(me + np - 1, np)
  xr = 1d0 + mod(me + 1, np)
  want = 3 * xl ** 3 + 9 * xr * x ** 2
  if (np == 1) want = 12 * x ** 3
  if (abs(dx - want) < 1d-12 * want) then
    print '(a, i0, es16.8)', 'CHECK rank ', me, dx
  else
    print '(a, i0, 2es16.8)', 'FAILED rank ', me, dx, want
  end if
  call mpi_finalize(ierr)
end program
