! A bind(c) function with a CHARACTER dummy: flang adds a hidden length after the arguments,
! which a C caller of __enzyme_autodiff must pass too (test_modes.py).
module k
  use iso_c_binding
contains
  function f(x, n, mode) bind(c, name="f") result(y)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n)
    character(kind=c_char), intent(in) :: mode(*)
    real(c_double) :: y
    y = sum(x**2)
    if (mode(1) == 'c') y = 2*y
  end function
end module
