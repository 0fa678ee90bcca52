! Datatypes held in variables (NPB's dp_type, set at run time): MPI_ALLREDUCE, MPI_SENDRECV,
! MPI_SCAN and MPI_EXSCAN of reals and an MPI_ALLREDUCE of integers in differentiated code. Every rank's gradient
! against its analytic value; with `complex` on the command line the real type is
! MPI_DOUBLE_COMPLEX instead, which the derivative stops on at run time.
module datatype_m
  use iso_c_binding
  implicit none
  include 'mpif.h'
  integer :: dp_type, int_type
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
contains
  function f(x) bind(c, name="f") result(y)
    real(c_double) :: x(2), y, s(2), t(2), u, w, e
    integer :: ierr, me, np, k(1), kk(1)
    call mpi_comm_rank(MPI_COMM_WORLD, me, ierr)
    call mpi_comm_size(MPI_COMM_WORLD, np, ierr)
    s = x * x
    call mpi_allreduce(s, t, 2, dp_type, MPI_SUM, MPI_COMM_WORLD, ierr)
    k = me + 1
    call mpi_allreduce(k, kk, 1, int_type, MPI_SUM, MPI_COMM_WORLD, ierr)
    ! the left neighbour's x(2)
    call mpi_sendrecv(x(2), 1, dp_type, mod(me + 1, np), 5, u, 1, dp_type, &
                      mod(me - 1 + np, np), 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    ! prefix sums of x(1): w over ranks 0..me, e over ranks 0..me-1 (undefined on rank 0)
    call mpi_scan(x(1), w, 1, dp_type, MPI_SUM, MPI_COMM_WORLD, ierr)
    call mpi_exscan(x(1), e, 1, dp_type, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (me == 0) e = 0
    y = 0
    if (me == 0) y = t(1) + 3 * t(2) * kk(1)
    y = y + u * x(1) + 0.5d0 * w + 0.25d0 * e
  end function
end module

program datatype_variable
  use datatype_m
  implicit none
  interface
    subroutine grad(fp, d, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(2), dx(2), want(2), xr, xl
  integer :: ierr, me, np
  character(16) :: arg
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, me, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, np, ierr)
  call get_command_argument(1, arg)
  dp_type = MPI_DOUBLE_PRECISION
  if (arg == 'complex') dp_type = MPI_DOUBLE_COMPLEX
  int_type = MPI_INTEGER
  x = [1d0 + me, 2d0 - me]
  dx = 0
  call grad(c_funloc(f), enzyme_dup, x, dx)
  ! d/dx(1) = 2 x(1) + u + (w of ranks me.. and e of ranks me+1..), d/dx(2) = 6 x(2) K +
  ! x_right(1), K = np (np + 1) / 2
  xl = 2d0 - mod(me - 1 + np, np)
  xr = 1d0 + mod(me + 1, np)
  want = [2 * x(1) + xl + 0.5d0 * (np - me) + 0.25d0 * (np - 1 - me), &
          3 * 2 * x(2) * (np * (np + 1) / 2) + xr]
  if (all(abs(dx - want) < 1d-12 * abs(want))) then
    print '(a, i0, 2f10.4)', 'CHECK rank ', me, dx
  else
    print '(a, i0, 4f10.4)', 'FAILED rank ', me, dx, want
  end if
  call mpi_finalize(ierr)
end program
