! A parallel loop reading arrays and a scalar passed enzyme_const beside an active array: flang
! hands a region its captured addresses in one record, and an enzyme_const address stored beside
! an active one was refused ("a pointer to double data without a shadow ... is stored into memory
! that has one"); clang's separate fork arguments differentiated. Gradient of
! sum(w * (x - tg)**2 + c * x) against the analytic 2 w (x - tg) + c.
module m
  use iso_c_binding
  implicit none
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
contains
  function loss(x, tg, w, c, n) bind(c, name="loss") result(j)
    integer(c_int), value :: n
    real(c_double), intent(in) :: x(n), tg(n), w(n), c
    real(c_double) :: j
    integer :: i
    j = 0
    !$omp parallel do reduction(+:j)
    do i = 1, n
      j = j + w(i) * (x(i) - tg(i))**2 + c * x(i)
    end do
    !$omp end parallel do
  end function
end module

program p
  use m
  implicit none
  interface
    subroutine ad(f, d, x, dx, c1, tg, c2, w, c3, c, c4, n) bind(c, name="__enzyme_autodiff")
      import
      type(c_funptr), value :: f
      integer(c_int), value :: d, c1, c2, c3, c4, n
      real(c_double) :: x(*), dx(*), tg(*), w(*), c
    end subroutine
  end interface
  integer, parameter :: n = 37
  real(c_double) :: x(n), tg(n), w(n), dx(n), c = 0.25d0
  integer :: i, bad
  do i = 1, n
    x(i) = 0.1d0 * i
    tg(i) = 1.5d0 - 0.05d0 * i
    w(i) = 1 + mod(i, 3)
  end do
  dx = 0
  call ad(c_funloc(loss), enzyme_dup, x, dx, enzyme_const, tg, enzyme_const, w, enzyme_const, c, &
          enzyme_const, n)
  bad = count(abs(dx - (2 * w * (x - tg) + c)) > 1d-12)
  print '(a,i0,a,f10.6)', 'bad ', bad, ' dx(5) ', dx(5)
end program
