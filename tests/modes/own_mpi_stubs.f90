! A serial build that brings its own MPI stubs (Nekbone's mpi_dummy.f): its mpi_allreduce is the
! program's subroutine, not Open MPI's, and is differentiated as its code (was an internal error:
! the stub was renamed like a call of Open MPI's binding and collided with enzyme-fc's own).
subroutine mpi_allreduce(a, b, n, dtype, op, comm, ierr)
  integer :: n, dtype, op, comm, ierr
  double precision :: a(n), b(n)
  b = a
  ierr = 0
end subroutine

module stubs_m
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
contains
  function total(x, n) bind(c, name="total") result(s)
    integer(c_int), value :: n
    real(c_double) :: x(n), s, part
    integer :: ierr
    part = sum(x ** 3)
    call mpi_allreduce(part, s, 1, 17, 3, 0, ierr)
  end function
end module

program own_mpi_stubs
  use stubs_m
  implicit none
  interface
    subroutine grad(fp, d, x, dx, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(3) = [1d0, 2d0, 3d0], dx(3) = 0
  integer :: i
  call grad(c_funloc(total), enzyme_dup, x, dx, 3)
  do i = 1, 3
    print '(a, i0, es24.16, a, es24.16)', 'ds/dx', i, dx(i), ' | ', 3 * x(i) ** 2
  end do
end program
