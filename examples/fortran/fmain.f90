! A pure Fortran program asking for derivatives with Enzyme's __enzyme_autodiff, called through a
! bind(c) interface. Build and run:  enzyme-fc -O2 fmain.f90 -o fmain && ./fmain
module functions
  use iso_c_binding, only: c_double
  implicit none
contains
  ! g(x) = x^3 + sin(x)
  function g(x) bind(c, name="g") result(y)
    real(c_double), value :: x
    real(c_double) :: y
    y = x**3 + sin(x)
  end function

  ! h(x) = exp(-x^2/2) / (1 + x^2), with a loop: the Taylor sum of exp(-x^2/2) to 30 terms
  function h(x) bind(c, name="h") result(y)
    real(c_double), value :: x
    real(c_double) :: y, term
    integer :: k
    term = 1
    y = 1
    do k = 1, 30
      term = term * (-x * x / 2) / k
      y = y + term
    end do
    y = y / (1 + x * x)
  end function
end module

program main
  use iso_c_binding, only: c_double, c_funptr, c_funloc
  use functions
  implicit none
  interface
    ! Enzyme's marker for a function of one active real(c_double) returning real(c_double)
    function autodiff(f, x) bind(c, name="__enzyme_autodiff") result(d)
      import :: c_funptr, c_double
      type(c_funptr), value :: f
      real(c_double), value :: x
      real(c_double) :: d
    end function
  end interface
  real(c_double) :: x, e

  x = 1.5d0
  print '(a, f16.10, a, f16.10)', 'dg/dx   ', autodiff(c_funloc(g), x), '  exact ', &
    3 * x**2 + cos(x)
  x = 0.75d0
  e = exp(-x * x / 2)
  print '(a, f16.10, a, f16.10)', 'dh/dx   ', autodiff(c_funloc(h), x), '  exact ', &
    (-x * e * (1 + x * x) - 2 * x * e) / (1 + x * x)**2
end program
