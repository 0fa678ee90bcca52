! Structure constructors assigned to derived-type variables in the differentiated function: at
! -O0 flang builds the value in a temporary and calls its runtime's AssignTemporary, which had no
! derivative (refused, found by a new-user check); enzyme-cc's own version initializes the
! target where its type has default values and assigns as intrinsic assignment does (a deep copy
! of allocatable components). e = m x1 x2 + w sum(v^2): the analytic gradient.
! Each line: name, got | expected.
module shapes
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
  type :: pt
    real(c_double) :: x(2), m
  end type
  type :: rec
    real(c_double), allocatable :: v(:)
    real(c_double) :: w = 1
  end type
contains
  function f(x, n) bind(c, name="f") result(e)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: e
    type(pt) :: p
    type(rec) :: r
    p = pt(x=x(1:2), m=2.0d0)
    r = rec(v=x(2:n), w=0.5d0)
    e = p%m * p%x(1) * p%x(2) + r%w * sum(r%v**2)
  end function
end module

program main
  use shapes
  implicit none
  interface
    subroutine grad(f, d, x, dx, c, n) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: f
      integer(c_int), value :: d, c, n
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(3) = [3d0, 5d0, -2d0], dx(3) = 0
  call grad(c_funloc(f), enzyme_dup, x, dx, enzyme_const, 3)
  print '(a, 3f14.8, a, 3f14.8)', 'grad ', dx, ' | ', 2 * x(2), 2 * x(1) + x(2), x(3)
end program
