! NORM2 stays a flang runtime call (_FortranANorm2_8) at -O2: whole arrays and strided sections.
subroutine q(a, n, r) bind(c)
  use iso_c_binding
  integer(c_int), value :: n
  real(c_double) :: a(n), r
  r = norm2(a) * a(1) + norm2(a(2:n:2))
end subroutine
subroutine q2(m, n, r) bind(c)
  use iso_c_binding
  integer(c_int), value :: n
  real(c_double) :: m(n, n), r
  r = norm2(m(2:n, 1:n-1)) + sum(m)
end subroutine
