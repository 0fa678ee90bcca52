! A model chosen by name: a deferred-length CHARACTER passed to a character(len=*) dummy that
! copies it into a fixed-length local (`up = name`, padded with blanks) and compares it: at -O0
! the copy into the local was refused (nothing typed its bytes). y = 2 x1 x2: dx = (10, 6).
module m
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
contains
  logical function is_double(name)
    character(len=*), intent(in) :: name
    character(len=16) :: up
    up = name
    is_double = up(1:1) == 'D'
  end function

  function f(x) bind(c, name="f") result(y)
    real(c_double), intent(in) :: x(2)
    real(c_double) :: y
    character(len=:), allocatable :: name
    name = 'Double'
    y = x(1) * x(2)
    if (is_double(name)) y = 2 * y
  end function
end module
program main
  use m
  implicit none
  interface
    subroutine grad(fp, d, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(2) = [3d0, 5d0], dx(2) = 0
  call grad(c_funloc(f), enzyme_dup, x, dx)
  print '(2f8.3)', dx
end program
