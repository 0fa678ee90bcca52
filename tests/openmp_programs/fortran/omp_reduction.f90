! Fortran: !$omp parallel do with reduction(+) in a function differentiated through Enzyme's
! __enzyme_autodiff (bind(c)); prints the gradient and the analytic derivative.
module functions
  use iso_c_binding, only: c_double
  implicit none
contains
  function g(x) bind(c, name="g") result(y)
    real(c_double), value :: x
    real(c_double) :: y
    integer :: k
    y = 0
    !$omp parallel do reduction(+:y)
    do k = 1, 100
      y = y + sin(x * k) / k
    end do
    !$omp end parallel do
  end function
end module

program main
  use iso_c_binding, only: c_double, c_funptr, c_funloc
  use functions
  implicit none
  interface
    function autodiff(f, x) bind(c, name="__enzyme_autodiff") result(d)
      import :: c_funptr, c_double
      type(c_funptr), value :: f
      real(c_double), value :: x
      real(c_double) :: d
    end function
  end interface
  real(c_double) :: x, d, fd
  integer :: k
  x = 0.7d0
  d = autodiff(c_funloc(g), x)
  fd = 0
  do k = 1, 100
    fd = fd + cos(x * k)
  end do
  print *, d, fd
end program
