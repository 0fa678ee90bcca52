! Fortran MPI bindings (mpif.h) in differentiated code: a ring halo exchange by
! MPI_IRECV/MPI_ISEND completed by MPI_TEST in a loop, MPI_TESTALL and MPI_WAITALL, MPI_SENDRECV, MPI_BCAST, MPI_REDUCE and
! MPI_ALLREDUCE (also in place). The objective lives on rank 0; every rank's gradient is checked
! against central differences of its own entries, and forward mode against the gradient.
module halo_m
  use iso_c_binding
  implicit none
  include 'mpif.h'
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
contains
  function obj(x, n) bind(c, name="obj") result(f)
    integer(c_int), value :: n
    real(c_double), intent(inout) :: x(0:n+1)
    real(c_double) :: f, s, t, u, b, r(1), w
    integer :: rank, nr, left, right, ierr, reqs(3), req, i
    integer :: st(MPI_STATUS_SIZE, 3), st1(MPI_STATUS_SIZE)
    logical :: done
    call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
    call mpi_comm_size(MPI_COMM_WORLD, nr, ierr)
    left = mod(rank - 1 + nr, nr)
    right = mod(rank + 1, nr)
    call mpi_irecv(x(0), 1, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, reqs(1), ierr)
    call mpi_irecv(x(n+1), 1, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, req, ierr)
    call mpi_isend(x(n), 1, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, reqs(2), ierr)
    call mpi_isend(x(1), 1, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, reqs(3), ierr)
    done = .false.
    do while (.not. done)
      call mpi_test(req, done, st1, ierr)
    end do
    call mpi_testall(3, reqs, done, st, ierr)
    if (.not. done) call mpi_waitall(3, reqs, st, ierr)
    s = 0
    do i = 1, n
      s = s + x(i) * x(i) * (x(i-1) + 2 * x(i+1))
    end do
    ! the left neighbour's x(2), by MPI_SENDRECV
    call mpi_sendrecv(x(2), 1, MPI_DOUBLE_PRECISION, right, 3, u, 1, MPI_DOUBLE_PRECISION, &
                      left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    ! rank 0's x(1), broadcast
    b = x(1)
    call mpi_bcast(b, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
    s = s + u * b
    ! the sum of cubes, reduced to rank 0; the product sum everywhere, in place
    w = sum(x(1:n) ** 3)
    call mpi_reduce(w, r, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    t = s
    call mpi_allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    f = 0
    if (rank == 0) f = sin(t) + 0.1d0 * r(1)
  end function
end module

program halo
  use halo_m
  implicit none
  interface
    real(c_double) function grad(fp, d1, x, dx, c1, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d1, c1, n
      real(c_double) :: x(*), dx(*)
    end function
    real(c_double) function tangent(fp, d1, x, dx, c1, n) bind(c, name="__enzyme_fwddiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d1, c1, n
      real(c_double) :: x(*), dx(*)
    end function
  end interface
  integer, parameter :: n = 4
  real(c_double) :: x(0:n+1), dx(0:n+1), xp(0:n+1), v(0:n+1), fp, fm, h, fd, g, dot, tan
  integer :: rank, nr, ierr, i, who
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nr, ierr)
  do i = 0, n + 1
    x(i) = 0.1d0 * (i + 1) + 0.05d0 * rank
  end do
  dx = 0
  xp = x
  g = grad(c_funloc(obj), enzyme_dup, xp, dx, enzyme_const, n)
  h = 1d-6
  do who = 0, nr - 1
    do i = 1, n
      xp = x
      if (rank == who) xp(i) = x(i) + h
      fp = obj(xp, n)
      xp = x
      if (rank == who) xp(i) = x(i) - h
      fm = obj(xp, n)
      call mpi_bcast(fp, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
      call mpi_bcast(fm, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
      fd = (fp - fm) / (2 * h)
      if (rank == who) call check('rev_fd', who, i, dx(i), fd, 1d-6)
    end do
  end do
  ! forward mode: the tangent along v (rank 0's) is the sum over ranks of <dx, v>
  do i = 0, n + 1
    v(i) = 0
    if (i >= 1 .and. i <= n) v(i) = 1d0 / (i + rank)
  end do
  dot = sum(dx(1:n) * v(1:n))
  call mpi_allreduce(MPI_IN_PLACE, dot, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  xp = x
  tan = tangent(c_funloc(obj), enzyme_dup, xp, v, enzyme_const, n)
  if (rank == 0) call check('fwd', 0, 0, tan, dot, 1d-10)
  call mpi_finalize(ierr)
contains
  subroutine check(what, r, i, got, want, tol)
    character(*), intent(in) :: what
    integer, intent(in) :: r, i
    real(c_double), intent(in) :: got, want, tol
    if (abs(got - want) <= tol * max(1d0, abs(want))) then
      print '(a, " ", a, " ", i0, " ", i0, " ", es22.14, " ", es22.14)', 'CHECK', what, r, i, got, want
    else
      print '(a, " ", a, " ", i0, " ", i0, " ", es22.14, " ", es22.14)', 'FAILED', what, r, i, got, want
    end if
  end subroutine
end program
