! ALLOCATE(p, SOURCE=v) of a polymorphic object in the differentiated function (flang's
! ApplyMold, then ALLOCATE with SOURCE=): r = 2 sum(x**2), dx = 4x. Refused before.
module m
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  type :: t
    real(c_double) :: a = 2d0
  end type
contains
  function f(x, n) bind(c, name="f") result(r)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    real(c_double) :: r
    class(t), allocatable :: p
    type(t) :: v
    allocate(p, source=v)
    r = p%a * sum(x * x)
  end function
end module
program main
  use m
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
  call grad(c_funloc(f), enzyme_dup, x, dx, 3)
  print *, dx
end program
