! A checking helper given the function as `type(c_funptr), intent(in)` (Fortran's default: by
! reference, the address held as an integer): the marker's function is the integer loaded from
! the dummy's memory, and every caller stores `c_funloc` of a module function there. It was
! refused ("must be a function known at compile time", found by a new-user check); the
! derivative now dispatches on the pointer among the functions the callers store (a pointer none
! of them matches stops with a message). d(x^2)/dx = 4 and d(x^3)/dx = 12 at x = 2, d(sin x)/dx.
! Each line: name, got | expected.
module m
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  interface
    subroutine grad(f, d, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: f
      integer(c_int), value :: d
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
contains
  function sq(x) bind(c, name="sq") result(e)
    real(c_double), intent(in) :: x(1)
    real(c_double) :: e
    e = x(1)**2
  end function
  function cube(x) bind(c, name="cube") result(e)
    real(c_double), intent(in) :: x(1)
    real(c_double) :: e
    e = x(1)**3
  end function
  function wave(x) bind(c, name="wave") result(e)
    real(c_double), intent(in) :: x(1)
    real(c_double) :: e
    e = sin(x(1))
  end function
  subroutine show(name, fp, x0, want)
    character(*), intent(in) :: name
    type(c_funptr), intent(in) :: fp
    real(c_double), intent(in) :: x0, want
    real(c_double) :: x(1), dx(1)
    x = x0
    dx = 0
    call grad(fp, enzyme_dup, x, dx)
    print '(a, a, f14.10, a, f14.10)', name, ' ', dx(1), ' | ', want
  end subroutine
end module

program main
  use m
  implicit none
  type(c_funptr) :: f
  call show('square', c_funloc(sq), 2d0, 4d0)
  call show('cube', c_funloc(cube), 2d0, 12d0)
  f = c_funloc(wave)
  call show('wave', f, 0.5d0, cos(0.5d0))
end program
